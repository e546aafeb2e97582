// The keys of gpu[...] (R-GPU-2), as LSF's -gpu writes them:
//   num=N[/host|/task] mode=shared|exclusive_process j_exclusive=yes|no gmodel=NAME
//   gmem=AMOUNT glink=yes|no aff=yes|no
// separated by ':', each at most once, in any order; gpu[] alone is one device per host.
#include <algorithm>
#include <cmath>

#include "core/resreq/parser_internal.h"

namespace sluice::core::resreq::internal {
namespace {

constexpr std::string_view kGpuKeys[] = {"num",  "mode",  "j_exclusive", "gmodel",
                                         "gmem", "glink", "aff",         "mps"};
constexpr double kMaxGmemMb = 1e9;  // far above any device; keeps the amount an exact int64
constexpr std::string_view kGpuKeyList =
    "a gpu[] key (num, mode, j_exclusive, gmodel, gmem, glink, aff)";

}  // namespace

bool Parser::ParseGpu(Primary& primary) {
  GpuRequest gpu{.num = 1};
  uint32_t seen = 0;
  bool job_exclusive = false;
  if (Peek().kind != TokenKind::kRBracket) {
    do {
      if (!ParseGpuEntry(gpu, seen, job_exclusive)) return false;
    } while (Accept(TokenKind::kColon));
  }
  // j_exclusive=yes keeps the devices to this job whatever the mode.
  if (job_exclusive) gpu.shared = false;
  primary.gpu = std::move(gpu);
  return Expect(TokenKind::kRBracket, "':' or ']'");
}

bool Parser::ParseGpuEntry(GpuRequest& gpu, uint32_t& seen, bool& job_exclusive) {
  const Token& key = Peek();
  const auto* found = key.kind == TokenKind::kIdent
                          ? std::find(std::begin(kGpuKeys), std::end(kGpuKeys), key.text)
                          : std::end(kGpuKeys);
  if (found == std::end(kGpuKeys)) return Fail(key, kGpuKeyList);
  if (key.text == "mps") {
    return FailAt(key.column,
                  "found 'mps', expected " + std::string(kGpuKeyList) +
                      " (CUDA MPS is not supported: Sluice never starts an MPS daemon)");
  }
  const uint32_t bit = 1u << (found - std::begin(kGpuKeys));
  if ((seen & bit) != 0) {
    return FailAt(key.column,
                  "found a second " + Quote(key.text) + ", expected each gpu[] key at most once");
  }
  seen |= bit;
  Next();
  if (!Expect(TokenKind::kAssign, "'=' after " + Quote(key.text))) return false;
  const std::string_view name = key.text;
  if (name == "num") {
    if (!ParseInteger(1, kMaxGpuNum, "GPUs per host or per task", gpu.num)) return false;
    if (!Accept(TokenKind::kSlash)) return true;
    const Token& per = Peek();
    if (per.kind != TokenKind::kIdent || (per.text != "host" && per.text != "task")) {
      return Fail(per, "'host' or 'task' after '/'");
    }
    gpu.per = per.text == "task" ? GpuPer::kTask : GpuPer::kHost;
    Next();
    return true;
  }
  if (name == "mode") {
    const Token& mode = Peek();
    if (mode.kind != TokenKind::kIdent ||
        (mode.text != "shared" && mode.text != "exclusive_process")) {
      return Fail(mode, "'shared' or 'exclusive_process'");
    }
    gpu.shared = mode.text == "shared";
    Next();
    return true;
  }
  if (name == "gmodel") {
    const Token& model = Peek();
    if (model.kind != TokenKind::kIdent && model.kind != TokenKind::kString) {
      return Fail(model, "a GPU model (a name, or quoted when it holds '-')");
    }
    if (model.text.empty()) return Fail(model, "a GPU model, not an empty string");
    gpu.model = std::string(model.text);
    Next();
    return true;
  }
  if (name == "gmem") {
    const Token& amount = Peek();
    if (amount.kind != TokenKind::kNumber || amount.number <= 0 || amount.number > kMaxGmemMb) {
      return Fail(amount, "device memory > 0 and <= 1000000000 MB (MB, or with a unit: 10G)");
    }
    gpu.mem_mb = static_cast<int64_t>(std::ceil(amount.number));
    Next();
    return true;
  }
  if (name == "j_exclusive") return ParseYesNo(name, job_exclusive);
  if (name == "glink") return ParseYesNo(name, gpu.link);
  return ParseYesNo(name, gpu.affinity);
}

bool Parser::ParseYesNo(std::string_view key, bool& value) {
  const Token& word = Peek();
  if (word.kind != TokenKind::kIdent || (word.text != "yes" && word.text != "no")) {
    return Fail(word, "'yes' or 'no' after " + Quote(key) + "=");
  }
  value = word.text == "yes";
  Next();
  return true;
}

}  // namespace sluice::core::resreq::internal
