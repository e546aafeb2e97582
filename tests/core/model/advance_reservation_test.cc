// ReservationBook (R-RSV-1): which reservation sets are accepted, and the questions the
// allocator and eligibility ask of it.
#include "core/model/advance_reservation.h"

#include <gtest/gtest.h>

#include "core/model/cluster_state.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

AdvanceReservationSpec Rsv(std::string name, std::vector<std::string> hosts,
                           std::vector<ReservationWindow> windows, bool maint = false) {
  return AdvanceReservationSpec{.name = std::move(name),
                                .hosts = std::move(hosts),
                                .windows = std::move(windows),
                                .users = {"alice"},
                                .maint = maint};
}

ClusterState ThreeHosts() { return testing::ClusterBuilder().Hosts(3, 2).State(); }

TEST(ReservationBookTest, RefusesBadSetsAndKeepsTheLastGoodOne) {
  ClusterState state = ThreeHosts();
  ASSERT_TRUE(state.SetReservations({Rsv("course", {"h1"}, {{100, 200}})}).ok());
  const std::vector<std::vector<AdvanceReservationSpec>> bad = {
      {Rsv("", {"h1"}, {{100, 200}})},                              // no name
      {Rsv("a", {}, {{100, 200}})},                                 // no hosts
      {Rsv("a", {"h9"}, {{100, 200}})},                             // unknown host
      {Rsv("a", {"h1"}, {})},                                       // no window
      {Rsv("a", {"h1"}, {{200, 200}})},                             // empty window
      {Rsv("a", {"h1"}, {{100, 200}, {150, 300}})},                 // overlapping windows
      {Rsv("a", {"h1"}, {{300, 400}, {100, 200}})},                 // out of order
      {Rsv("a", {"h1"}, {{100, 200}}), Rsv("a", {"h2"}, {{0, 5}})}, // name used twice
      {Rsv("a", {"h1", "h2"}, {{100, 200}}), Rsv("b", {"h2"}, {{150, 250}})},  // overlap
  };
  for (const auto& set : bad) {
    const Status status = state.SetReservations(set);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  }
  ASSERT_EQ(state.reservations().size(), 1u);
  EXPECT_EQ(state.reservations().spec(0).name, "course");
  AdvanceReservationSpec negative = Rsv("a", {"h1"}, {{300, 400}});
  negative.overrun = -1;
  EXPECT_FALSE(state.SetReservations({negative}).ok());
}

TEST(ReservationBookTest, OnlyAMaintWindowMayOverlapAnotherOnAHost) {
  ClusterState state = ThreeHosts();
  EXPECT_TRUE(state
                  .SetReservations({Rsv("course", {"h1", "h2"}, {{100, 200}}),
                                    Rsv("fix", {"h2"}, {{150, 250}}, /*maint=*/true)})
                  .ok());
  // Back to back is not an overlap: windows are [begin, end).
  EXPECT_TRUE(state
                  .SetReservations({Rsv("a", {"h1"}, {{100, 200}}),
                                    Rsv("b", {"h1"}, {{200, 300}})})
                  .ok());
}

TEST(ReservationBookTest, ReservedFromIsTheEarliestWindowNotYetEnded) {
  ClusterState state = ThreeHosts();
  ASSERT_TRUE(state
                  .SetReservations({Rsv("weekly", {"h1"}, {{100, 200}, {1000, 1100}}),
                                    Rsv("fix", {"h1", "h2"}, {{500, 600}}, /*maint=*/true)})
                  .ok());
  const ReservationBook& book = state.reservations();
  const int32_t weekly = book.Find("weekly");
  const int32_t fix = book.Find("fix");
  ASSERT_GE(weekly, 0);
  ASSERT_GE(fix, 0);
  EXPECT_EQ(book.Find("nope"), -1);
  EXPECT_EQ(book.ReservedFrom(0, 0), 100);
  EXPECT_EQ(book.ReservedFrom(0, 150), 100);  // open now: reserved from its begin
  EXPECT_EQ(book.ReservedFrom(0, 200), 500);  // the first window has ended
  EXPECT_EQ(book.ReservedFrom(0, 600), 1000);
  EXPECT_EQ(book.ReservedFrom(0, 1100), kInfinite);
  EXPECT_EQ(book.ReservedFrom(1, 0), 500);
  EXPECT_EQ(book.ReservedFrom(2, 0), kInfinite);
  // Excepting a job's own reservation leaves the others.
  EXPECT_EQ(book.ReservedFrom(0, 0, weekly), 500);
  EXPECT_EQ(book.FirstReservationOn(0, 200), fix);
  EXPECT_TRUE(book.Covers(fix, 1));
  EXPECT_FALSE(book.Covers(weekly, 1));
  EXPECT_FALSE(book.OpenWindow(weekly, 99));
  EXPECT_EQ(book.OpenWindow(weekly, 100), (ReservationWindow{100, 200}));
  EXPECT_FALSE(book.OpenWindow(weekly, 200));
  EXPECT_EQ(book.NextWindow(weekly, 200), (ReservationWindow{1000, 1100}));
  EXPECT_EQ(book.NextBoundaryAfter(0), 100);
  EXPECT_EQ(book.NextBoundaryAfter(100), 200);
  EXPECT_EQ(book.NextBoundaryAfter(200), 500);
  EXPECT_EQ(book.NextBoundaryAfter(1100), std::nullopt);
  EXPECT_TRUE(book.Admits(weekly, "alice"));
  EXPECT_FALSE(book.Admits(weekly, "bob"));
}

TEST(ReservationBookTest, AdmitsItsUsersAndLeavesGroupsToTheDrivers) {
  ClusterState state = ThreeHosts();
  AdvanceReservationSpec users = Rsv("users", {"h1"}, {{100, 200}});
  AdvanceReservationSpec groups = Rsv("groups", {"h2"}, {{100, 200}});
  groups.groups = {"physics"};
  AdvanceReservationSpec open = Rsv("open", {"h3"}, {{100, 200}});
  open.users.clear();
  ASSERT_TRUE(state.SetReservations({users, groups, open}).ok());
  const ReservationBook& book = state.reservations();
  EXPECT_TRUE(book.Admits(book.Find("users"), "alice"));
  EXPECT_FALSE(book.Admits(book.Find("users"), "bob"));
  EXPECT_TRUE(book.Admits(book.Find("groups"), "bob"));  // may be a member: not the core's call
  EXPECT_TRUE(book.Admits(book.Find("open"), "bob"));    // neither users nor groups
}

TEST(ReservationBookTest, HostListIsCompressedOnce) {
  ClusterState state = testing::ClusterBuilder().Hosts(10, 1).State();
  ASSERT_TRUE(
      state.SetReservations({Rsv("fix", {"h3", "h1", "h2", "h10", "h9", "h5"}, {{100, 200}})})
          .ok());
  EXPECT_EQ(state.reservations().HostList(0), "h[1-3,5,9-10]");
}

TEST(ReservationBookTest, HostsAddedLaterAreIndexedAndTheCloneKeepsTheBook) {
  ClusterState state = ThreeHosts();
  ASSERT_TRUE(state.SetReservations({Rsv("course", {"h3"}, {{100, 200}})}).ok());
  ASSERT_TRUE(state.AddHost(HostSpec{.name = "h4", .slots = 2}).ok());
  EXPECT_EQ(state.reservations().ReservedFrom(3, 0), kInfinite);
  EXPECT_EQ(state.reservations().ReservedFrom(2, 0), 100);
  const ClusterState copy = state.Clone();
  EXPECT_EQ(copy.reservations().ReservedFrom(2, 0), 100);
}

}  // namespace
}  // namespace sluice::core
