// Tests for the cluster YAML loader (SPEC §2): a full valid file, defaults, every class of
// error with its `file:line: field` location, and host range expansion. Errors are compared by
// code and location prefix, never by their whole text (STYLE.md).
#include "config/cluster_yaml.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "testing/build_paths.h"

namespace sluice::config {
namespace {

using core::ClusterConfig;
using core::QueueSpec;

// Raw strings below start with a newline so that line 1 of the YAML is the line after `R"(`.
std::string Yaml(std::string_view text) {
  if (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  return std::string(text);
}

std::string DataPath(std::string_view name) {
  return std::string(sluice::testing::SourceDir()) + "/tests/config/data/" + std::string(name);
}

TEST(ClusterYamlTest, LoadsFullExample) {
  Result<ClusterConfig> result = LoadClusterConfig(DataPath("full.yaml"));
  ASSERT_TRUE(result.has_value()) << result.error().ToString();
  const ClusterConfig& config = *result;

  ASSERT_EQ(config.hosts.size(), 65u);
  EXPECT_EQ(config.hosts[0].name, "h001");
  EXPECT_EQ(config.hosts[63].name, "h064");
  EXPECT_EQ(config.hosts[63].slots, 8);
  EXPECT_EQ(config.hosts[63].resources.at("mem"), 64000);
  EXPECT_EQ(config.hosts[63].resources.at("gpu"), 2);
  EXPECT_EQ(config.hosts[63].attributes.at("arch"), "x86_64");
  EXPECT_EQ(config.hosts[63].attributes.at("rack"), "12");  // scalars are kept as text
  EXPECT_EQ(config.hosts[63].tags, (std::vector<std::string>{"fast", "ib"}));
  EXPECT_EQ(config.hosts[63].state, core::HostState::kOk);
  EXPECT_EQ(config.hosts[64].name, "big1");
  EXPECT_EQ(config.hosts[64].state, core::HostState::kDraining);

  EXPECT_EQ(config.host_groups.at("gpu_hosts"), (std::vector<std::string>{"h001", "h002"}));
  EXPECT_EQ(config.host_groups.at("rack1"), (std::vector<std::string>{"h003", "h004", "big1"}));
  EXPECT_EQ(config.shared_resources.at("lic"), 10);
  EXPECT_EQ(config.default_queue, "normal");

  ASSERT_EQ(config.queues.size(), 3u);
  const QueueSpec& normal = config.queues[0];
  EXPECT_EQ(normal.name, "normal");
  EXPECT_EQ(normal.priority, 10);
  EXPECT_EQ(normal.policy, core::PolicyKind::kBoundedBackfill);
  EXPECT_EQ(normal.max_bypass, 5);
  EXPECT_EQ(normal.max_head_wait, 1800);
  EXPECT_EQ(normal.capacity, 60.0);
  EXPECT_EQ(normal.max_capacity, 100.0);
  EXPECT_EQ(normal.user_limit_pct, 25.0);
  EXPECT_EQ(normal.reclaim_after, 300);
  EXPECT_EQ(normal.run_limit, 100);
  EXPECT_EQ(normal.slot_limit, 512);
  EXPECT_EQ(normal.host_group, "gpu_hosts");
  EXPECT_EQ(normal.windows, (std::vector<std::string>{"19:00-07:00"}));
  EXPECT_EQ(normal.on_host_loss, core::OnHostLoss::kRequeue);
  EXPECT_EQ(normal.submit_users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(normal.default_resreq, "rusage[mem=1000]");
  EXPECT_TRUE(normal.open);
  EXPECT_TRUE(normal.active);

  // `short` takes policy, max_capacity and reclaim_after from queue_defaults, and the
  // built-in max_bypass / max_head_wait.
  const QueueSpec& short_queue = config.queues[1];
  EXPECT_EQ(short_queue.policy, core::PolicyKind::kFifo);
  EXPECT_EQ(short_queue.max_capacity, 90.0);
  EXPECT_EQ(short_queue.reclaim_after, 120);
  EXPECT_EQ(short_queue.max_bypass, 50);
  EXPECT_EQ(short_queue.max_head_wait, 3600);
  EXPECT_EQ(short_queue.capacity, 33.3);
  EXPECT_EQ(short_queue.on_host_loss, core::OnHostLoss::kExit);
  EXPECT_FALSE(short_queue.submit_users.has_value());
  EXPECT_EQ(short_queue.host_group, "");

  // `idle` sets no capacity while others do: it is guaranteed 0.
  const QueueSpec& idle = config.queues[2];
  EXPECT_EQ(idle.capacity, 0.0);
  EXPECT_FALSE(idle.open);
  EXPECT_FALSE(idle.active);

  ASSERT_EQ(config.limits.size(), 3u);
  const core::LimitSpec& u_slots = config.limits[0];
  EXPECT_EQ(u_slots.name, "u_slots");
  EXPECT_TRUE(u_slots.users.set);
  EXPECT_TRUE(u_slots.users.per_each);
  EXPECT_TRUE(u_slots.users.names.empty());
  EXPECT_TRUE(u_slots.queues.set);
  EXPECT_FALSE(u_slots.queues.per_each);
  EXPECT_EQ(u_slots.queues.names, (std::vector<std::string>{"normal"}));
  EXPECT_FALSE(u_slots.hosts.set);
  EXPECT_EQ(u_slots.slots, 8);
  EXPECT_FALSE(u_slots.jobs.has_value());

  const core::LimitSpec& lic_cap = config.limits[1];
  EXPECT_FALSE(lic_cap.users.per_each);
  EXPECT_EQ(lic_cap.users.names, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_TRUE(lic_cap.hosts.per_each);
  EXPECT_EQ(lic_cap.hosts.names, (std::vector<std::string>{"h003", "h004", "big1", "h001"}));
  EXPECT_EQ(lic_cap.jobs, 4);
  EXPECT_EQ(lic_cap.resources, (std::map<std::string, int64_t>{{"gpu", 1}, {"lic", 2}}));

  const core::LimitSpec& proj = config.limits[2];
  EXPECT_TRUE(proj.projects.set);
  EXPECT_FALSE(proj.projects.per_each);
  EXPECT_TRUE(proj.queues.per_each);
  EXPECT_EQ(proj.resources.at("mem"), 100000);
}

TEST(ClusterYamlTest, CapacityStaysUnsetWhenNoQueueSetsIt) {
  Result<ClusterConfig> result = ParseClusterConfig(Yaml(R"(
queues:
  - name: a
  - name: b
)"),
                                                    "c.yaml");
  ASSERT_TRUE(result.has_value()) << result.error().ToString();
  EXPECT_FALSE(result->queues[0].capacity.has_value());
  EXPECT_FALSE(result->queues[1].capacity.has_value());
  EXPECT_EQ(result->queues[0].max_bypass, 50);
  EXPECT_EQ(result->queues[0].max_head_wait, 3600);
  EXPECT_TRUE(result->hosts.empty());
  EXPECT_EQ(result->default_queue, "");
}

TEST(ClusterYamlTest, CapacityFromQueueDefaultsCountsAsSet) {
  Result<ClusterConfig> result = ParseClusterConfig(Yaml(R"(
queue_defaults: {capacity: 20}
queues:
  - name: a
  - name: b
    capacity: 50
)"),
                                                    "c.yaml");
  ASSERT_TRUE(result.has_value()) << result.error().ToString();
  EXPECT_EQ(result->queues[0].capacity, 20.0);
  EXPECT_EQ(result->queues[1].capacity, 50.0);
}

TEST(ClusterYamlTest, AcceptsCapacitiesSummingTo100WithFloatError) {
  Result<ClusterConfig> result = ParseClusterConfig(Yaml(R"(
queues:
  - {name: a, capacity: 33.3}
  - {name: b, capacity: 33.3}
  - {name: c, capacity: 33.4}
)"),
                                                    "c.yaml");
  ASSERT_TRUE(result.has_value()) << result.error().ToString();
  EXPECT_EQ(result->queues.size(), 3u);
}

TEST(ClusterYamlTest, AcceptsEmptySections) {
  Result<ClusterConfig> result = ParseClusterConfig(Yaml(R"(
hosts:
host_groups: {}
shared_resources:
queue_defaults:
limits: []
queues: [{name: only}]
)"),
                                                    "c.yaml");
  ASSERT_TRUE(result.has_value()) << result.error().ToString();
  EXPECT_TRUE(result->hosts.empty());
  EXPECT_EQ(result->queues.size(), 1u);
}

struct ErrorCase {
  std::string_view name;
  std::string_view yaml;
  std::string_view want_prefix;  // `file:line: field path:`
};

// Each case is one mistake; the prefix says where the loader must point.
const ErrorCase kErrorCases[] = {
    {"syntax error", R"(
queues:
  - name: a
    priority: [1
)",
     "t.yaml:4: yaml syntax:"},
    {"top level not a map", R"(
- a
- b
)",
     "t.yaml:1: (top level):"},
    {"two documents (points at the second `---`)", R"(
queues: [{name: a}]
---
queues: [{name: b}]
)",
     "t.yaml:2: (top level):"},
    {"unknown top-level key", R"(
queues: [{name: a}]
hostz: []
)",
     "t.yaml:2: hostz:"},
    {"unknown queue key", R"(
queues:
  - name: a
    polcy: fifo
)",
     "t.yaml:3: queues[0].polcy:"},
    {"duplicate key", R"(
queues:
  - name: a
    priority: 1
    priority: 2
)",
     "t.yaml:4: queues[0].priority:"},
    {"unknown host key", R"(
hosts:
  - name: h1
    slot: 4
queues: [{name: a}]
)",
     "t.yaml:3: hosts[0].slot:"},
    {"slots not a number", R"(
queues: [{name: a}]
hosts:
  - name: h1
    slots: abc
)",
     "t.yaml:4: hosts[0].slots:"},
    {"slots negative", R"(
hosts: [{name: h1, slots: -1}]
queues: [{name: a}]
)",
     "t.yaml:1: hosts[0].slots:"},
    {"slots quoted", R"(
hosts:
  - name: h1
    slots: "8"
queues: [{name: a}]
)",
     "t.yaml:3: hosts[0].slots:"},
    {"slots too large", R"(
hosts:
  - name: h1
    slots: 99999999999
queues: [{name: a}]
)",
     "t.yaml:3: hosts[0].slots:"},
    {"host without name", R"(
hosts:
  - slots: 4
queues: [{name: a}]
)",
     "t.yaml:2: hosts[0]:"},
    {"bad host range", R"(
hosts:
  - name: h[3-1]
queues: [{name: a}]
)",
     "t.yaml:2: hosts[0].name:"},
    {"duplicate host across ranges", R"(
hosts:
  - name: h[1-4]
  - name: h[4-8]
queues: [{name: a}]
)",
     "t.yaml:3: hosts[1].name:"},
    {"bad host state", R"(
hosts:
  - name: h1
    state: broken
queues: [{name: a}]
)",
     "t.yaml:3: hosts[0].state:"},
    {"attribute not a scalar", R"(
hosts:
  - name: h1
    attributes:
      type: [linux]
queues: [{name: a}]
)",
     "t.yaml:4: hosts[0].attributes.type:"},
    {"negative resource", R"(
hosts:
  - name: h1
    resources: {mem: -5}
queues: [{name: a}]
)",
     "t.yaml:3: hosts[0].resources.mem:"},
    {"reserved resource name", R"(
hosts:
  - name: h1
    resources: {slots: 5}
queues: [{name: a}]
)",
     "t.yaml:3: hosts[0].resources.slots:"},
    {"group names unknown host", R"(
hosts: [{name: "h[1-2]"}]
host_groups:
  g: [h1, h3]
queues: [{name: a}]
)",
     "t.yaml:3: host_groups.g[1]:"},
    {"group not a list", R"(
host_groups:
  g: h1
queues: [{name: a}]
)",
     "t.yaml:2: host_groups.g:"},
    {"shared resource reuses host resource", R"(
hosts: [{name: h1, resources: {mem: 10}}]
shared_resources:
  mem: 5
queues: [{name: a}]
)",
     "t.yaml:3: shared_resources.mem:"},
    {"no queues key", R"(
hosts: []
)",
     "t.yaml:1: queues:"},
    {"empty queue list", R"(
hosts: []
queues: []
)",
     "t.yaml:2: queues:"},
    {"queue without name", R"(
queues:
  - priority: 3
)",
     "t.yaml:2: queues[0]:"},
    {"duplicate queue", R"(
queues:
  - name: a
  - name: a
)",
     "t.yaml:3: queues[1].name:"},
    {"priority not an integer", R"(
queues:
  - name: a
    priority: 1.5
)",
     "t.yaml:3: queues[0].priority:"},
    {"priority a string", R"(
queues:
  - name: a
    priority: high
)",
     "t.yaml:3: queues[0].priority:"},
    {"bad policy", R"(
queues:
  - name: a
    policy: lifo
)",
     "t.yaml:3: queues[0].policy:"},
    {"negative max_bypass", R"(
queues:
  - name: a
    max_bypass: -1
)",
     "t.yaml:3: queues[0].max_bypass:"},
    {"max_head_wait not a number", R"(
queues:
  - name: a
    max_head_wait: 1h
)",
     "t.yaml:3: queues[0].max_head_wait:"},
    {"capacity above 100", R"(
queues:
  - name: a
  - name: b
  - name: c
    max_capacity: 140
)",
     "t.yaml:5: queues[2].max_capacity:"},
    {"capacity negative", R"(
queues:
  - name: a
    capacity: -5
)",
     "t.yaml:3: queues[0].capacity:"},
    {"capacity not a number", R"(
queues:
  - name: a
    capacity: half
)",
     "t.yaml:3: queues[0].capacity:"},
    {"user_limit_pct above 100", R"(
queues:
  - name: a
    user_limit_pct: 101
)",
     "t.yaml:3: queues[0].user_limit_pct:"},
    {"max_capacity below capacity", R"(
queues:
  - name: a
    capacity: 60
    max_capacity: 50
)",
     "t.yaml:4: queues[0].max_capacity:"},
    {"inherited max_capacity below capacity", R"(
queue_defaults:
  max_capacity: 50
queues:
  - name: a
    capacity: 60
)",
     "t.yaml:2: queues[0].max_capacity:"},
    {"capacities sum above 100", R"(
queues:
  - {name: a, capacity: 60}
  - {name: b}
  - {name: c, capacity: 41}
)",
     "t.yaml:4: queues[2].capacity:"},
    {"queue host group unknown", R"(
queues:
  - name: a
    hosts: nowhere
)",
     "t.yaml:3: queues[0].hosts:"},
    {"window bad hour", R"(
queues:
  - name: a
    windows: ["19:00-07:00", "25:00-07:00"]
)",
     "t.yaml:3: queues[0].windows[1]:"},
    {"window without end", R"(
queues:
  - name: a
    windows:
      - "19:00"
)",
     "t.yaml:4: queues[0].windows[0]:"},
    {"windows not a list", R"(
queues:
  - name: a
    windows: "19:00-07:00"
)",
     "t.yaml:3: queues[0].windows:"},
    {"bad on_host_loss", R"(
queues:
  - name: a
    on_host_loss: retry
)",
     "t.yaml:3: queues[0].on_host_loss:"},
    {"bad bool", R"(
queues:
  - name: a
    open: maybe
)",
     "t.yaml:3: queues[0].open:"},
    {"submit_users not a list", R"(
queues:
  - name: a
    submit_users: alice
)",
     "t.yaml:3: queues[0].submit_users:"},
    {"queue_defaults with name", R"(
queue_defaults:
  name: x
queues: [{name: a}]
)",
     "t.yaml:2: queue_defaults.name:"},
    {"queue_defaults bad value", R"(
queue_defaults:
  capacity: 120
queues: [{name: a}]
)",
     "t.yaml:2: queue_defaults.capacity:"},
    {"queue_defaults unknown key", R"(
queue_defaults:
  polcy: fifo
queues: [{name: a}]
)",
     "t.yaml:2: queue_defaults.polcy:"},
    {"default_queue unknown", R"(
queues: [{name: a}]
default_queue: b
)",
     "t.yaml:2: default_queue:"},
    {"limit resource undefined", R"(
queues: [{name: a}]
limits:
  - name: l
    per_user: all
    mem: 10
)",
     "t.yaml:5: limits[0].mem:"},
    {"limit caps nothing", R"(
queues: [{name: a}]
limits:
  - name: l
    per_user: all
)",
     "t.yaml:3: limits[0]:"},
    {"limit scope given twice", R"(
queues: [{name: a}]
limits:
  - name: l
    per_user: all
    users: [alice]
    slots: 4
)",
     "t.yaml:5: limits[0].users:"},
    {"limit unknown queue", R"(
queues: [{name: a}]
limits:
  - name: l
    queues: [a, b]
    slots: 4
)",
     "t.yaml:4: limits[0].queues[1]:"},
    {"limit unknown host", R"(
hosts: [{name: h1}]
queues: [{name: a}]
limits:
  - name: l
    per_host: [h1, h2]
    slots: 4
)",
     "t.yaml:5: limits[0].per_host[1]:"},
    {"limit empty scope list", R"(
queues: [{name: a}]
limits:
  - name: l
    users: []
    slots: 4
)",
     "t.yaml:4: limits[0].users:"},
    {"limit scope word", R"(
queues: [{name: a}]
limits:
  - name: l
    users: everyone
    slots: 4
)",
     "t.yaml:4: limits[0].users:"},
    {"limit slots a string", R"(
queues: [{name: a}]
limits:
  - name: l
    slots: many
)",
     "t.yaml:4: limits[0].slots:"},
    {"duplicate limit", R"(
queues: [{name: a}]
limits:
  - {name: l, slots: 1}
  - {name: l, jobs: 1}
)",
     "t.yaml:4: limits[1].name:"},
    {"limit without name", R"(
queues: [{name: a}]
limits:
  - slots: 1
)",
     "t.yaml:3: limits[0]:"},
};

TEST(ClusterYamlTest, RejectsInvalidConfigWithLocation) {
  for (const ErrorCase& c : kErrorCases) {
    SCOPED_TRACE(c.name);
    Result<ClusterConfig> result = ParseClusterConfig(Yaml(c.yaml), "t.yaml");
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(result.error().message().starts_with(std::string(c.want_prefix) + " "))
        << "want prefix '" << c.want_prefix << "', got: " << result.error().message();
  }
}

TEST(ClusterYamlTest, LoadUsesPathInMessages) {
  const std::string path = DataPath("bad_capacity.yaml");
  Result<ClusterConfig> result = LoadClusterConfig(path);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(result.error().message().starts_with(path + ":4: queues[0].max_capacity: "))
      << result.error().message();
}

TEST(ClusterYamlTest, LoadMissingFileIsNotFound) {
  const std::string path = DataPath("no_such_file.yaml");
  Result<ClusterConfig> result = LoadClusterConfig(path);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(result.error().message().starts_with(path + ": ")) << result.error().message();
}

struct RangeCase {
  std::string_view name;
  std::string_view pattern;
  size_t want_count;
  std::string_view want_first;
  std::string_view want_last;
};

TEST(ExpandHostRangeTest, Expands) {
  const RangeCase cases[] = {
      {"zero-padded", "h[001-064]", 64, "h001", "h064"},
      {"unpadded", "h[1-3]", 3, "h1", "h3"},
      {"unpadded across widths", "h[8-10]", 3, "h8", "h10"},
      {"single", "h[5-5]", 1, "h5", "h5"},
      {"suffix", "r[01-02]-ib", 2, "r01-ib", "r02-ib"},
      {"plain name", "login.example_1", 1, "login.example_1", "login.example_1"},
  };
  for (const RangeCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::vector<std::string>> names = ExpandHostRange(c.pattern);
    ASSERT_TRUE(names.has_value()) << names.error().ToString();
    ASSERT_EQ(names->size(), c.want_count);
    EXPECT_EQ(names->front(), c.want_first);
    EXPECT_EQ(names->back(), c.want_last);
  }
}

TEST(ExpandHostRangeTest, ZeroPaddedRangeIsContiguous) {
  Result<std::vector<std::string>> names = ExpandHostRange("h[001-064]");
  ASSERT_TRUE(names.has_value());
  for (size_t i = 0; i < names->size(); ++i) {
    char want[32];
    std::snprintf(want, sizeof want, "h%03zu", i + 1);
    EXPECT_EQ((*names)[i], want);
  }
}

TEST(ExpandHostRangeTest, RejectsBadPatterns) {
  const struct {
    std::string_view name;
    std::string_view pattern;
  } cases[] = {
      {"reversed", "h[3-1]"},
      {"letters", "h[a-b]"},
      {"unclosed", "h[1-3"},
      {"close without open", "h1-3]"},
      {"empty", ""},
      {"empty brackets", "h[]"},
      {"no dash", "h[5]"},
      {"missing bound", "h[-3]"},
      {"list", "h[1-2,4]"},
      {"two ranges", "h[1-2]r[1-2]"},
      {"mixed padding", "h[01-100]"},
      {"space", "h 1"},
      {"too many names", "h[1-999999]"},
      {"bound too long", "h[1-1234567890]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::vector<std::string>> names = ExpandHostRange(c.pattern);
    ASSERT_FALSE(names.has_value());
    EXPECT_EQ(names.error().code(), StatusCode::kInvalidArgument);
  }
}

TEST(ClusterYamlTest, TooManyHostNamesIsAnError) {
  std::string yaml = "hosts:\n";
  for (int i = 0; i < 11; ++i) {
    yaml += "  - name: r" + std::to_string(i) + "n[1-100000]\n";
  }
  yaml += "queues: [{name: a}]\n";
  Result<ClusterConfig> result = ParseClusterConfig(yaml, "big.yaml");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(result.error().message().starts_with("big.yaml:12: hosts[10].name: "))
      << result.error().message();
}

}  // namespace
}  // namespace sluice::config
