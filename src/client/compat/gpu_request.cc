#include "client/compat/gpu_request.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <span>
#include <system_error>
#include <vector>

namespace sluice::client::compat {
namespace {

// Sluice's keys of gpu[...], which LSF's -gpu writes the same way.
constexpr std::string_view kSluiceKeys[] = {"num",  "mode",  "j_exclusive", "gmodel",
                                            "gmem", "glink", "aff"};
// LSF's other keys (besides mps), which Sluice cannot honour.
constexpr std::string_view kLsfOnlyKeys[] = {"block", "gpack", "gvendor", "gtile", "nvlink"};

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9') || c == '.'; }

// A name as the request language's lexer reads one (core/resreq/lexer.cc): `A100`, `v100.sxm`.
bool IsRequestName(std::string_view text) {
  return !text.empty() && IsNameStart(text.front()) &&
         std::all_of(text.begin(), text.end(), IsNameChar);
}

// A value that reads as one token or a count with its `/task`: num=2/task, gmem=10G,
// mode=exclusive_process. Anything else could end the section or the request early.
bool IsPlainValue(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return IsNameChar(c) || c == '/'; });
}

bool Contains(std::span<const std::string_view> words, std::string_view word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// `text` split at each `separator` outside single or double quotes.
std::vector<std::string_view> SplitOutsideQuotes(std::string_view text, char separator) {
  std::vector<std::string_view> items;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (quote != 0) {
      if (text[i] == quote) quote = 0;
    } else if (text[i] == '\'' || text[i] == '"') {
      quote = text[i];
    } else if (text[i] == separator) {
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  items.push_back(text.substr(start));
  return items;
}

std::string_view Unquote(std::string_view text) {
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
      text.back() == text.front()) {
    return text.substr(1, text.size() - 2);
  }
  return text;
}

// One KEY=VALUE of -gpu as Sluice writes it; an empty string for what is dropped (mps=no).
Result<std::string> LsfGpuItem(std::string_view key, std::string_view value) {
  const std::string item = std::string(key) + "=" + std::string(value);
  if (key == "mps") {
    if (value == "no") return std::string();
    return FailedPrecondition(item +
                              " is not supported by Sluice (it starts no MPS daemon; "
                              "mps=no is accepted)");
  }
  if (Contains(kLsfOnlyKeys, key)) {
    return FailedPrecondition("'" + std::string(key) +
                              "' is not supported by Sluice (num, mode, j_exclusive, gmodel, gmem, "
                              "glink and aff are)");
  }
  if (!Contains(kSluiceKeys, key)) {
    return InvalidArgument("unknown keyword '" + std::string(key) +
                           "' (num, mode, mps, j_exclusive, gmodel, gmem, glink, aff)");
  }
  if (key == "gmodel") {
    Result<std::string> model = GmodelValue(Unquote(value));
    if (!model) return model.error();
    return "gmodel=" + *model;
  }
  if (!IsPlainValue(value)) {
    return InvalidArgument(item + ": expected letters, digits, '_', '.' or '/' after '='");
  }
  return item;
}

std::optional<int64_t> PositiveCount(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 1) {
    return std::nullopt;
  }
  return value;
}

bool IsDigits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

Status Invalid(SlurmGpuOption option) {
  return InvalidArgument("Invalid " + std::string(ToString(option)) + " specification");
}

Status SeveralTypes() {
  return FailedPrecondition("several GPU types in one job are not supported by Sluice");
}

// --gres: NAME[:TYPE][:COUNT],... whose only NAME is `gpu` (count 1 when not given).
Status ReadGres(std::string_view value, SlurmGpus& out) {
  if (value.empty()) return Invalid(SlurmGpuOption::kGres);
  bool found = false;
  for (std::string_view item : SplitOutsideQuotes(value, ',')) {
    const std::string_view name = item.substr(0, item.find(':'));
    if (name != "gpu") {
      return FailedPrecondition("the gres '" + std::string(name) +
                                "' is not supported by Sluice (only gpu is)");
    }
    if (found) return SeveralTypes();
    found = true;
    if (name.size() == item.size()) continue;  // `gpu`: one of any type
    // gpu:N, gpu:TYPE or gpu:TYPE:N
    const std::vector<std::string_view> parts =
        SplitOutsideQuotes(item.substr(name.size() + 1), ':');
    std::string_view count_text = "1";
    if (parts.size() == 2) {
      out.type = std::string(parts[0]);
      count_text = parts[1];
    } else if (IsDigits(parts[0])) {
      count_text = parts[0];
    } else {
      out.type = std::string(parts[0]);
    }
    const std::optional<int64_t> count = PositiveCount(count_text);
    const bool empty_part =
        std::any_of(parts.begin(), parts.end(), [](std::string_view part) { return part.empty(); });
    if (!count || parts.size() > 2 || empty_part) return Invalid(SlurmGpuOption::kGres);
    out.count = *count;
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> LsfGpuSection(std::string_view value) {
  value = Trim(value);
  if (value == "-") return std::string("gpu[num=1]");
  if (value.empty()) return InvalidArgument("expected - or KEY=VALUE[:KEY=VALUE]...");
  std::vector<std::string_view> keys;
  std::string section;
  for (std::string_view item : SplitOutsideQuotes(value, ':')) {
    item = Trim(item);
    const size_t eq = item.find('=');
    const std::string_view key = Trim(item.substr(0, eq));
    if (eq == std::string_view::npos || key.empty()) {
      return InvalidArgument("'" + std::string(item) + "': expected KEY=VALUE");
    }
    if (Contains(keys, key)) return InvalidArgument("'" + std::string(key) + "' is given twice");
    keys.push_back(key);
    Result<std::string> kept = LsfGpuItem(key, Trim(item.substr(eq + 1)));
    if (!kept) return kept.error();
    if (kept->empty()) continue;
    section += (section.empty() ? "" : ":") + *kept;
  }
  // Only dropped keys: LSF's defaults, which `num=1` spells out.
  return "gpu[" + (section.empty() ? std::string("num=1") : section) + "]";
}

Result<std::string> WithGpuSection(const std::string& resreq, const std::string& section) {
  if (resreq.find('{') != std::string::npos || resreq.find("||") != std::string::npos) {
    return FailedPrecondition(
        "the resource request is compound or has alternatives; write "
        "gpu[...] inside each of its parts instead");
  }
  for (size_t at = resreq.find("gpu["); at != std::string::npos; at = resreq.find("gpu[", at + 1)) {
    if (at == 0 || !IsNameChar(resreq[at - 1])) {
      return FailedPrecondition(
          "the resource request has a gpu[] section already; ask for the "
          "GPUs once");
    }
  }
  return resreq.empty() ? section : resreq + " " + section;
}

Result<std::string> GmodelValue(std::string_view model) {
  if (model.empty()) return InvalidArgument("expected a GPU model name");
  if (IsRequestName(model)) return std::string(model);
  // The request language's strings have no escapes: quote with the character the name lacks.
  if (model.find('"') == std::string_view::npos) return "\"" + std::string(model) + "\"";
  if (model.find('\'') == std::string_view::npos) return "'" + std::string(model) + "'";
  return InvalidArgument("a GPU model name may not hold both ' and \"");
}

std::string_view ToString(SlurmGpuOption option) {
  switch (option) {
    case SlurmGpuOption::kGpus:
      return "--gpus";
    case SlurmGpuOption::kGpusPerNode:
      return "--gpus-per-node";
    case SlurmGpuOption::kGpusPerTask:
      return "--gpus-per-task";
    case SlurmGpuOption::kGres:
      return "--gres";
  }
  return "";
}

Result<SlurmGpus> ParseSlurmGpus(SlurmGpuOption option, std::string_view value) {
  SlurmGpus out{.option = option,
                .written = std::string(ToString(option)) + "=" + std::string(value)};
  if (option == SlurmGpuOption::kGres) {
    SLUICE_RETURN_IF_ERROR(ReadGres(value, out));
  } else {
    if (value.find(',') != std::string_view::npos) return SeveralTypes();
    // [TYPE:]N
    const size_t colon = value.find(':');
    const std::optional<int64_t> count =
        PositiveCount(colon == std::string_view::npos ? value : value.substr(colon + 1));
    if (colon != std::string_view::npos) out.type = std::string(value.substr(0, colon));
    if (!count || (colon != std::string_view::npos && out.type.empty())) return Invalid(option);
    out.count = *count;
  }
  if (!out.type.empty()) {
    Result<std::string> model = GmodelValue(out.type);
    if (!model) return model.error();
  }
  return out;
}

Result<std::string> SlurmGpuSection(const SlurmGpus& gpus, int64_t nodes) {
  int64_t count = gpus.count;
  if (gpus.option == SlurmGpuOption::kGpus && nodes > 1) {
    if (count % nodes != 0) {
      return FailedPrecondition(gpus.written + ": " + std::to_string(count) +
                                " GPUs do not share evenly over --nodes=" + std::to_string(nodes) +
                                "; give --gpus-per-node instead");
    }
    count /= nodes;
  }
  const bool per_task = gpus.option == SlurmGpuOption::kGpusPerTask;
  std::string section = "gpu[num=" + std::to_string(count) + (per_task ? "/task" : "/host");
  if (!gpus.type.empty()) {
    Result<std::string> model = GmodelValue(gpus.type);
    if (!model) return model.error();
    section += ":gmodel=" + *model;
  }
  return section + "]";
}

}  // namespace sluice::client::compat
