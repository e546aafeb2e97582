#include "testing/free_ports.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>

namespace sluice::testing {
namespace {

bool CanListenOn(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok =
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && listen(fd, 1) == 0;
  close(fd);
  return ok;
}

// A cluster's members must not be handed the same port twice (a member would then fail to
// bind and the cluster never become healthy).
TEST(FreeLoopbackPortsTest, PortsOfOneCallAreDistinctAndFree) {
  const std::vector<int> ports = FreeLoopbackPorts(32);
  ASSERT_EQ(ports.size(), 32u);
  EXPECT_EQ(std::set<int>(ports.begin(), ports.end()).size(), ports.size());
  for (int port : ports) {
    EXPECT_GT(port, 0);
    EXPECT_TRUE(CanListenOn(port)) << port;
  }
}

}  // namespace
}  // namespace sluice::testing
