#include "core/resreq/validate.h"

#include <cmath>
#include <string_view>

#include "core/resreq/eval.h"
#include "core/resreq/lexer.h"

namespace sluice::core::resreq {
namespace {

constexpr size_t kMaxListedNames = 12;

bool IsShared(std::string_view name, const ResourceCatalog& catalog) {
  return catalog.shared_resources.find(std::string(name)) != catalog.shared_resources.end();
}

// "gpu, lic, mem" (at most kMaxListedNames, then ", ...").
std::string KnownResources(const ResourceCatalog& catalog) {
  std::set<std::string> names = catalog.host_resources;
  names.insert(catalog.shared_resources.begin(), catalog.shared_resources.end());
  std::string out;
  size_t listed = 0;
  for (const std::string& name : names) {
    if (listed == kMaxListedNames) return out + ", ...";
    if (listed++ > 0) out += ", ";
    out += name;
  }
  return out.empty() ? "none" : out;
}

Status Invalid(std::string_view where, std::string message) {
  return InvalidArgument(std::string(where) + message);
}

Status CheckRusage(const Primary& part, const ResourceCatalog& catalog, std::string_view where) {
  for (size_t i = 0; i < part.rusage.size(); ++i) {
    const Rusage& entry = part.rusage[i];
    const std::string name = Quote(entry.resource);
    if (i > 0 && !(part.rusage[i - 1].resource < entry.resource)) {
      return Invalid(where, "rusage: " + name +
                                " is out of order or appears twice; list each "
                                "resource once, sorted by name");
    }
    if (!std::isfinite(entry.amount) || entry.amount < 0) {
      return Invalid(where, "rusage: the amount of " + name +
                                " is negative or not a number; "
                                "use a number >= 0");
    }
    if (entry.resource == "slots") {
      return Invalid(where,
                     "rusage: 'slots' cannot be reserved with rusage; ask for tasks "
                     "with -n (each task takes one slot)");
    }
    const bool host = catalog.host_resources.count(entry.resource) > 0;
    const bool shared = IsShared(entry.resource, catalog);
    if (host && shared) {
      return Invalid(where, "rusage: " + name +
                                " is both a host resource and a shared "
                                "resource in the cluster configuration; "
                                "rename one of them");
    }
    if (!host && !shared) {
      return Invalid(where, "rusage: unknown resource " + name +
                                "; known resources: " + KnownResources(catalog) +
                                " (fix the name or define the resource in the cluster "
                                "configuration)");
    }
  }
  return Status::Ok();
}

Status CheckHostNames(const Primary& part, const ExprPool& pool, const ResourceCatalog& catalog,
                      std::string_view where) {
  for (std::string_view name : ReferencedNames(part.select, pool)) {
    std::string_view resource = name;
    if (!IsShared(resource, catalog) && name.starts_with("max")) resource = name.substr(3);
    if (!IsShared(resource, catalog)) continue;
    const std::string what =
        name == resource ? Quote(name) + " is a shared resource"
                         : Quote(name) + " is the total of the shared resource " + Quote(resource);
    return Invalid(where, "select: " + what +
                              ", which hosts do not have; request it with "
                              "rusage[" +
                              std::string(resource) + "=N] instead");
  }
  for (const OrderKey& key : part.order) {
    if (IsShared(key.name, catalog)) {
      return Invalid(where, "order: " + Quote(key.name) +
                                " is a shared resource, which "
                                "hosts do not have; order by a host resource (slots, mem) instead");
    }
  }
  if (IsShared(part.same, catalog)) {
    return Invalid(where, "same: " + Quote(part.same) +
                              " is a shared resource, not a host "
                              "attribute; name a host attribute (type, model) instead");
  }
  return Status::Ok();
}

Status CheckGpu(const Primary& part, size_t parts, const ResourceCatalog& catalog,
                std::string_view where) {
  const GpuRequest& gpu = part.gpu;
  if (gpu.num == 0) return Status::Ok();
  if (gpu.num < 0 || gpu.num > kMaxGpuNum || gpu.mem_mb < 0) {
    return Invalid(where, "gpu: num=" + std::to_string(gpu.num) + " gmem=" +
                              std::to_string(gpu.mem_mb) + "; use num=1-" +
                              std::to_string(kMaxGpuNum) + " and gmem >= 0");
  }
  for (const Rusage& entry : part.rusage) {
    if (entry.resource == "gpu") {
      return Invalid(where,
                     "gpu[] and rusage[gpu=...] both ask for GPUs; keep one (gpu[] picks "
                     "devices by model, memory, NVLink and NUMA node)");
    }
  }
  if (catalog.host_resources.count("gpu") == 0) {
    return Invalid(where, "gpu: no host of the cluster has GPUs");
  }
  if (gpu.shared && gpu.mem_mb <= 0) {
    // Sharing is by device memory: without an amount nothing bounds how many jobs share one.
    return Invalid(where,
                   "gpu: mode=shared needs gmem=AMOUNT, the device memory the job reserves on "
                   "each GPU (e.g. mode=shared:gmem=10G)");
  }
  if (gpu.shared && parts > 1) {
    // Two parts placed on one host would reserve one device's memory twice in one grant.
    return Invalid(where,
                   "gpu: mode=shared is not supported in a compound request; ask for it in a "
                   "request of one part, or use exclusive GPUs here");
  }
  return Status::Ok();
}

Status CheckPart(const Primary& part, size_t parts, const ExprPool& pool,
                 const ResourceCatalog& catalog, std::string_view where) {
  if (part.count < 0 || (parts > 1 && part.count < 1)) {
    return Invalid(where, "count " + std::to_string(part.count) +
                              ": each part of a compound needs a count N >= 1 (N*{...})");
  }
  SLUICE_RETURN_IF_ERROR(CheckRusage(part, catalog, where));
  SLUICE_RETURN_IF_ERROR(CheckHostNames(part, pool, catalog, where));
  SLUICE_RETURN_IF_ERROR(CheckGpu(part, parts, catalog, where));
  if (part.span.kind == SpanKind::kPtile && part.span.ptile < 1) {
    return Invalid(where, "span: ptile=" + std::to_string(part.span.ptile) +
                              "; use ptile=K with K >= 1 tasks per host");
  }
  return Status::Ok();
}

}  // namespace

Status Validate(const Request& request, const ExprPool& pool, const ResourceCatalog& catalog) {
  const size_t alternatives = request.alternatives.size();
  if (alternatives == 0) {
    return InvalidArgument(
        "the request has no alternative; the empty request is one "
        "alternative with one unconstrained part (UnconstrainedRequest)");
  }
  for (size_t a = 0; a < alternatives; ++a) {
    const std::vector<Primary>& parts = request.alternatives[a].parts;
    if (parts.empty()) {
      return InvalidArgument("alternative " + std::to_string(a + 1) +
                             " has no part; a compound needs at least one N*{...}");
    }
    for (size_t p = 0; p < parts.size(); ++p) {
      std::string where;
      if (alternatives > 1) where = "alternative " + std::to_string(a + 1);
      if (parts.size() > 1) where += (where.empty() ? "part " : ", part ") + std::to_string(p + 1);
      if (!where.empty()) where += ": ";
      SLUICE_RETURN_IF_ERROR(CheckPart(parts[p], parts.size(), pool, catalog, where));
    }
  }
  return Status::Ok();
}

}  // namespace sluice::core::resreq
