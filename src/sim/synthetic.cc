#include "sim/synthetic.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace sluice::sim {
namespace {

// Raw-output helpers: std::*_distribution is implementation-defined, these are not.
uint64_t Below(std::mt19937_64& rng, uint64_t n) { return n == 0 ? 0 : rng() % n; }
double Unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
template <typename T, size_t N>
const T& Pick(std::mt19937_64& rng, const T (&values)[N]) {
  return values[Below(rng, N)];
}

constexpr int32_t kSlotChoices[] = {4, 8, 16, 32, 64};
constexpr int64_t kMemPerSlot[] = {2000, 4000, 8000};
constexpr int32_t kHostsPerRack = 40;
constexpr int32_t kGpusPerHost = 4;
constexpr int64_t kLicenses = 64;

std::string Rack(int32_t rack) { return fmt::format("r{:03d}", rack + 1); }

int64_t Mem(std::mt19937_64& rng) { return 100 * (1 + static_cast<int64_t>(Below(rng, 40))); }

SyntheticShape DrawShape(std::mt19937_64& rng, int32_t racks) {
  SyntheticShape s;
  auto tasks = [&](int32_t lo, int32_t hi) {
    s.min_tasks = s.max_tasks =
        lo + static_cast<int32_t>(Below(rng, static_cast<uint64_t>(hi - lo + 1)));
  };
  const int32_t model = 1 + static_cast<int32_t>(Below(rng, 8));
  switch (Below(rng, 14)) {
    case 0:
    case 1:
      tasks(1, 1);  // serial, any host
      break;
    case 2:
      s.resreq = "select[type==x86]";
      tasks(1, 4);
      break;
    case 3:
      s.resreq = fmt::format("select[type==arm && model==m{}] rusage[mem={}]", model, Mem(rng));
      tasks(1, 8);
      break;
    case 4:
      s.resreq = fmt::format("rusage[mem={}] span[hosts=1]", Mem(rng));
      tasks(1, 16);
      break;
    case 5: {
      const int32_t ptile = Pick(rng, {4, 8, 16});
      s.resreq = fmt::format("select[type==x86 && ib] span[ptile={}]", ptile);
      tasks(2 * ptile, 4 * ptile);
      break;
    }
    case 6:
      s.resreq =
          fmt::format("select[type==gpu] rusage[gpu={}:mem={}]", 1 + Below(rng, 2), Mem(rng));
      tasks(1, 2);
      break;
    case 7:
      s.resreq = fmt::format(
          "1*{{select[type==gpu] rusage[gpu=1]}} + {}*{{select[type!=gpu] rusage[mem={}]}}",
          1 + Below(rng, 8), Mem(rng));
      break;
    case 8:
      s.resreq =
          fmt::format("{{select[type==arm] rusage[mem={}]}} || {{select[type==x86 && model==m{}]}}",
                      Mem(rng), model);
      tasks(1, 8);
      break;
    case 9:
      s.resreq =
          fmt::format("select[ssd && rack=={}]", Rack(static_cast<int32_t>(Below(rng, racks))));
      tasks(1, 4);
      break;
    case 10:
      s.resreq = fmt::format("select[mem>{}] order[-slots]", 1000 * (1 + Below(rng, 16)));
      tasks(1, 4);
      break;
    case 11:
      s.resreq = fmt::format("rusage[mem={}] same[rack]", Mem(rng));
      tasks(8, 32);
      break;
    case 12:
      s.resreq = fmt::format("select[model==m{}]", model);
      s.exclusive = true;
      tasks(1, 1);
      break;
    default:
      s.resreq = "rusage[lic=1]";
      tasks(1, 4);
      s.max_tasks = s.min_tasks + static_cast<int32_t>(Below(rng, 4));  // a task range
      break;
  }
  return s;
}

}  // namespace

core::ClusterConfig SyntheticCluster(const SyntheticOptions& options) {
  std::mt19937_64 rng(options.seed);
  core::ClusterConfig config;
  config.hosts.reserve(static_cast<size_t>(options.hosts));
  const size_t width = std::to_string(options.hosts).size();
  for (int32_t i = 0; i < options.hosts; ++i) {
    core::HostSpec host;
    host.name = fmt::format("h{:0{}d}", i + 1, width);
    host.slots = Pick(rng, kSlotChoices);
    host.resources["mem"] = host.slots * Pick(rng, kMemPerSlot);
    const double kind = Unit(rng);
    host.attributes["type"] = kind < 0.6 ? "x86" : kind < 0.85 ? "arm" : "gpu";
    if (kind >= 0.85) host.resources["gpu"] = kGpusPerHost;
    host.attributes["model"] = fmt::format("m{}", 1 + Below(rng, 8));
    host.attributes["rack"] = Rack(i / kHostsPerRack);
    if (Unit(rng) < 0.3) host.tags.push_back("ssd");
    if (Unit(rng) < 0.5) host.tags.push_back("ib");
    config.hosts.push_back(std::move(host));
  }
  for (int32_t q = 0; q < std::max(options.queues, 1); ++q) {
    core::QueueSpec queue;
    queue.name = fmt::format("q{}", q + 1);
    queue.priority = 100 - q;
    queue.policy = options.policy;
    config.queues.push_back(std::move(queue));
  }
  config.shared_resources["lic"] = kLicenses;
  return config;
}

std::vector<SyntheticShape> SyntheticShapes(const SyntheticOptions& options) {
  std::mt19937_64 rng(options.seed + 1);
  const int32_t racks = std::max(1, (options.hosts + kHostsPerRack - 1) / kHostsPerRack);
  std::vector<SyntheticShape> shapes;
  shapes.reserve(static_cast<size_t>(std::max(options.shapes, 1)));
  for (int32_t k = 0; k < std::max(options.shapes, 1); ++k) shapes.push_back(DrawShape(rng, racks));
  return shapes;
}

Result<JobId> FillRunning(const SyntheticOptions& options, core::ClusterState& state) {
  std::mt19937_64 rng(options.seed + 2);
  const size_t hosts = state.topology().hosts().size();
  std::vector<int32_t> used(hosts);
  int64_t total = 0;
  for (const core::Host& host : state.topology().hosts()) {
    used[host.index] = host.spec.slots;
    total += host.spec.slots;
  }
  // Free slots one at a time on random hosts that still have a used slot.
  for (int64_t free = std::min(options.free_slots, total); free > 0; --free) {
    size_t h = Below(rng, hosts);
    while (used[h] == 0) h = (h + 1) % hosts;
    --used[h];
  }
  const int64_t running = options.running < 0 ? static_cast<int64_t>(hosts) : options.running;
  const std::optional<ResourceId> mem = state.topology().FindHostResource("mem");
  const std::optional<ResourceId> gpu = state.topology().FindHostResource("gpu");
  JobId id = 1;
  for (size_t h = 0; h < hosts; ++h) {
    const core::Host& host = state.topology().hosts()[h];
    const int64_t share = running / static_cast<int64_t>(hosts) +
                          (static_cast<int64_t>(h) < running % static_cast<int64_t>(hosts) ? 1 : 0);
    const int32_t jobs =
        static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(share, 1), used[h]));
    int32_t left = used[h];
    for (int32_t j = 0; j < jobs; ++j, ++id) {
      const int32_t slots = j + 1 == jobs ? left : used[h] / jobs;
      left -= slots;
      core::JobSpec spec{
          .id = id,
          .user =
              fmt::format("u{:04d}", Below(rng, static_cast<uint64_t>(std::max(options.users, 1)))),
          .queue = fmt::format("q{}",
                               1 + Below(rng, static_cast<uint64_t>(std::max(options.queues, 1)))),
          .min_tasks = slots,
          .max_tasks = slots,
          .run_limit = 600 + static_cast<Duration>(Below(rng, 86400)),
          .submit_time = 0};
      SLUICE_RETURN_IF_ERROR(state.Submit(std::move(spec)));
      core::HostGrant grant{.host = host.index, .slots = slots};
      // Memory and gpus in proportion to the slots taken.
      if (mem)
        grant.resources.push_back({*mem, host.ResourceTotal(*mem) * slots / host.spec.slots});
      if (gpu && host.ResourceTotal(*gpu) > 0) {
        const int64_t gpus = host.ResourceTotal(*gpu) * slots / host.spec.slots;
        grant.resources.push_back({*gpu, gpus});
        // The devices too, the lowest free ones: the count and the indexes agree (R-GPU-3).
        grant.gpus = core::LowestBits(
            state.topology().hosts()[h].GpusFree(), static_cast<int32_t>(gpus));
      }
      std::erase_if(grant.resources, [](const core::ResourceAmount& r) { return r.amount == 0; });
      state.Start(id, core::Allocation{.hosts = {std::move(grant)}}, 0);
    }
  }
  state.MarkClassified();
  return id;
}

Status SubmitPending(const SyntheticOptions& options, const std::vector<SyntheticShape>& shapes,
                     JobId first_id, core::ClusterState& state) {
  std::mt19937_64 rng(options.seed + 3);
  const uint64_t users = static_cast<uint64_t>(std::max(options.users, 1));
  const uint64_t queues = static_cast<uint64_t>(std::max(options.queues, 1));
  // Names built once: a million jobs share a few hundred strings.
  std::vector<std::string> user_names;
  for (uint64_t u = 0; u < users; ++u) user_names.push_back(fmt::format("u{:04d}", u));
  std::vector<std::string> queue_names;
  for (uint64_t q = 0; q < queues; ++q) queue_names.push_back(fmt::format("q{}", q + 1));
  for (int64_t i = 0; i < options.pending; ++i) {
    // Popular shapes dominate: index floor(K u^2).
    const double u = Unit(rng);
    const SyntheticShape& shape =
        shapes[static_cast<size_t>(u * u * static_cast<double>(shapes.size()))];
    core::JobSpec spec{
        .id = first_id + static_cast<JobId>(i),
        .user = user_names[Below(rng, users)],
        .project = fmt::format("p{}", Below(rng, 8)),
        .queue = queue_names[Below(rng, queues)],
        .resreq = shape.resreq,
        .min_tasks = shape.min_tasks,
        .max_tasks = shape.max_tasks,
        .run_limit = 60 + static_cast<Duration>(Below(rng, 86400)),
        .priority = Below(rng, 10) == 0 ? 1 + static_cast<int32_t>(Below(rng, 3)) : 0,
        .exclusive = shape.exclusive,
        .submit_time = 1};
    SLUICE_RETURN_IF_ERROR(state.Submit(std::move(spec)));
  }
  return Status::Ok();
}

}  // namespace sluice::sim
