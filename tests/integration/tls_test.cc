// TLS with real processes (R-SEC-2): a throwaway CA and a server certificate for 127.0.0.1
// made with openssl(1); `sluice server --tls-cert --tls-key`; the CLI and an agent reach it
// over https:// with the CA file (--ca-file, SLUICE_CA_FILE); a client trusting another CA is
// refused; a key that does not match the certificate stops the server at start. Bounded,
// stopped by PID.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "integration/cluster_harness.h"
#include "testing/build_paths.h"
#include "testing/subprocess.h"

namespace sluice::integration {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Runs openssl with `args` in `dir`; returns whether it succeeded (else fails the test).
bool OpenSsl(const fs::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "/usr/bin/openssl");
  testing::ProcessResult r = testing::RunProcess(args, dir, 30s);
  EXPECT_EQ(r.exit_code, 0) << r.error << r.stderr_text;
  return r.exit_code == 0;
}

// ca.pem/ca.key, server.pem/server.key (CN and SAN 127.0.0.1, signed by ca), other-ca.pem.
bool MakeCertificates(const fs::path& dir) {
  const std::string d = dir.string() + "/";
  testing::WriteFile(dir / "san.cnf", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  return OpenSsl(dir, {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                       "/CN=sluice-test-ca", "-keyout", d + "ca.key", "-out", d + "ca.pem"}) &&
         OpenSsl(dir, {"req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
                       d + "server.key", "-out", d + "server.csr"}) &&
         OpenSsl(dir, {"x509", "-req", "-in", d + "server.csr", "-CA", d + "ca.pem", "-CAkey",
                       d + "ca.key", "-CAcreateserial", "-days", "1", "-extfile", d + "san.cnf",
                       "-out", d + "server.pem"}) &&
         OpenSsl(dir, {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                       "/CN=other-ca", "-keyout", d + "other-ca.key", "-out", d + "other-ca.pem"});
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = cluster_.dir() / "pki";
    fs::create_directories(pki_);
    ASSERT_TRUE(MakeCertificates(pki_));
  }

  // `sluice ARGS --server https://... --token alice-token` plus `extra` flags.
  testing::ProcessResult Cli(const std::vector<std::string>& args,
                             const std::vector<std::string>& extra) {
    // Flags after `--` would be part of the command: the connection flags go first.
    std::vector<std::string> argv = {sluice::testing::SluiceBinary(),
                                     args[0],
                                     "--server",
                                     https_url(),
                                     "--token",
                                     "alice-token"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), args.begin() + 1, args.end());
    return testing::RunProcess(argv, cluster_.dir(), 30s);
  }
  std::string https_url() const { return "https://127.0.0.1:" + std::to_string(cluster_.port()); }

  // The agent's host is configured: agents may not add hosts (auth.allow_dynamic_hosts).
  Cluster cluster_{
      DefaultClusterYaml("hosts:\n  - name: tls1\n    slots: 1\nqueues:\n  - {name: normal}\n")};
  fs::path pki_;
};

TEST_F(TlsTest, CliAndAgentWorkOverHttpsWithTheCaAndAWrongCaIsRefused) {
  std::string error;
  ASSERT_TRUE(cluster_.StartServer(&error, {"--tls-cert", (pki_ / "server.pem").string(),
                                            "--tls-key", (pki_ / "server.key").string()}))
      << error;
  testing::ProcessResult ok = Cli({"jobs"}, {"--ca-file", (pki_ / "ca.pem").string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.stderr_text;
  testing::ProcessResult wrong = Cli({"jobs"}, {"--ca-file", (pki_ / "other-ca.pem").string()});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.stderr_text.find("certificate"), std::string::npos) << wrong.stderr_text;

  // The agent takes its CA from the environment.
  const fs::path log = cluster_.dir() / "logs" / "agent.tls.log";
  ChildProcess agent(
      {"/usr/bin/env", "SLUICE_CA_FILE=" + (pki_ / "ca.pem").string(),
       sluice::testing::SluiceBinary(), "agent", "--name", "tls1", "--cgroup-path",
       "sluice-test-" + std::to_string(getpid()) + "/tls1", "--slots", "1", "--server", https_url(),
       "--token", "agent-token", "--work-dir", cluster_.dir().string()},
      log, log);
  testing::ProcessResult submitted =
      Cli({"submit", "--parsable", "--", "true"}, {"--ca-file", (pki_ / "ca.pem").string()});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.stderr_text;
  const int64_t id = std::stoll(submitted.stdout_text);
  // The harness's own REST calls speak plain HTTP: ask the CLI.
  auto state = [&] {
    testing::ProcessResult r =
        Cli({"jobs", "--json", std::to_string(id)}, {"--ca-file", (pki_ / "ca.pem").string()});
    nlohmann::json jobs = nlohmann::json::parse(r.stdout_text, nullptr, false);
    return jobs.is_array() && jobs.size() == 1 ? jobs[0].value("state", "") : "";
  };
  EXPECT_TRUE(Eventually([&] { return state() == "DONE"; }, 30s))
      << testing::ReadFile(log).value_or("") << cluster_.Logs();
  agent.Stop();
}

TEST_F(TlsTest, AKeyThatDoesNotMatchTheCertificateStopsTheServer) {
  std::string error;
  EXPECT_FALSE(cluster_.StartServer(&error, {"--tls-cert", (pki_ / "server.pem").string(),
                                             "--tls-key", (pki_ / "ca.key").string()}));
  EXPECT_NE(error.find("--tls-key"), std::string::npos) << error;
}

}  // namespace
}  // namespace sluice::integration
