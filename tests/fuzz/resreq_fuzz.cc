// libFuzzer target for the resource request language (R-RR-5): parsing, evaluating and
// validating any input must not crash, hang or allocate without bound, and a parsed request
// must survive the round trip Parse -> Normalize -> Parse with the same fingerprint (R-RR-4).
// A broken round trip aborts, so the fuzzer reports the input.
//
// Seeds: tests/fuzz/seeds/resreq (one request per file).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "core/resreq/eval.h"
#include "core/resreq/parser.h"
#include "core/resreq/request.h"
#include "core/resreq/validate.h"

namespace sluice::core::resreq {
namespace {

// A fixed host with a little of everything: numeric and string attributes, tags, resources
// with zero and non-zero free amounts.
class FuzzHost final : public HostView {
 public:
  std::optional<std::string_view> Attribute(std::string_view name) const override {
    auto it = attributes_.find(name);
    if (it == attributes_.end()) return std::nullopt;
    return std::string_view(it->second);
  }
  bool HasTag(std::string_view name) const override { return tags_.count(name) > 0; }
  std::optional<double> Free(std::string_view name) const override { return Find(free_, name); }
  std::optional<double> Total(std::string_view name) const override { return Find(total_, name); }

 private:
  using Amounts = std::map<std::string, double, std::less<>>;
  static std::optional<double> Find(const Amounts& amounts, std::string_view name) {
    auto it = amounts.find(name);
    if (it == amounts.end()) return std::nullopt;
    return it->second;
  }

  std::map<std::string, std::string, std::less<>> attributes_ = {
      {"type", "linux"}, {"arch", "x86_64"}, {"cores", "16"}, {"a", "1e308"}, {"b", ""}};
  std::set<std::string, std::less<>> tags_ = {"fast", "ib", "a"};
  Amounts free_ = {{"slots", 3}, {"mem", 4000}, {"gpu", 0}};
  Amounts total_ = {{"slots", 8}, {"mem", 64000}, {"gpu", 2}};
};

void Fail(const char* what, std::string_view input, std::string_view detail) {
  std::fprintf(stderr, "resreq_fuzz: %s\ninput: %.*s\ndetail: %.*s\n", what,
               static_cast<int>(input.size()), input.data(), static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void Exercise(const Request& request, const ExprPool& pool) {
  static const FuzzHost host;
  static const ResourceCatalog catalog{.host_resources = {"mem", "gpu"},
                                       .shared_resources = {"lic"}};
  for (const Compound& compound : request.alternatives) {
    for (const Primary& part : compound.parts) {
      (void)EvalSelect(part.select, pool, host);
      (void)ReadsFreeAmounts(part.select, pool,
                             [](std::string_view name) { return name == "mem" || name == "gpu"; });
      for (const OrderKey& key : part.order) (void)EvalOrderKey(key, host);
    }
  }
  (void)Validate(request, pool, catalog).ok();
}

void FuzzOne(std::string_view text) {
  ExprPool pool;
  Result<Request> request = Parse(text, pool);
  if (!request) return;
  Exercise(*request, pool);

  // Normalizing can add up to 2/3 of the length (request.h): only inputs within 3/5 of the
  // limit are guaranteed to reparse.
  if (text.size() > kMaxInputBytes * 3 / 5) return;
  const std::string normalized = Normalize(*request, pool);
  ExprPool fresh;
  Result<Request> again = Parse(normalized, fresh);
  if (!again) Fail("normalized text does not parse", text, again.error().message());
  if (again->fingerprint != request->fingerprint) {
    Fail("normalized text has another fingerprint", text, normalized);
  }
  if (Normalize(*again, fresh) != normalized) {
    Fail("normalizing is not idempotent", text, normalized);
  }
  Result<Request> same_pool = Parse(normalized, pool);
  if (!same_pool || !(*same_pool == *request)) {
    Fail("normalized text parses to another request in the same pool", text, normalized);
  }
}

}  // namespace
}  // namespace sluice::core::resreq

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::core::resreq::FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
