// YAML reading helpers of the cluster YAML loader (cluster_yaml.h): typed reads of yaml-cpp
// nodes that fail with located errors, and the message text they use.
//
// Representation: every value is read through a `Field`, which carries the YAML node with its
// field path (`queues[2].capacity`) and 1-based line, so any check can name its location. A
// `Reader` turns Fields into typed values or into kInvalidArgument errors
// `<file>:<line>: <path>: <what>`, and holds the file-wide budget of expanded host names
// (kMaxExpandedHostNames).
// NOTE: yaml-cpp may throw from any of these calls; ParseClusterConfig runs them all under its
// try block, which turns any exception into a Status.
// Thread-safety: a Reader is used by one parse at a time; the free functions are pure.
// Implements the location part of SPEC §2 ("a message naming the file, line and field").
#pragma once

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "config/cluster_yaml.h"
#include "core/model/config.h"

namespace sluice::config::yaml {

// A YAML value with its location: `path` as it appears in messages and its 1-based line.
struct Field {
  YAML::Node node;
  std::string path;
  int line = 1;
};

// One key of a YAML map; `key_line` locates errors about the key itself (unknown, duplicate).
struct Entry {
  std::string key;
  int key_line = 1;
  Field value;
};

// The 1-based line of `node`, or `fallback` when yaml-cpp has no mark for it.
int LineOf(const YAML::Node& node, int fallback);
// `parent.key`, or `key` at the top level.
std::string ChildPath(std::string_view parent, std::string_view key);
// At most 60 characters of user text, control characters shown as '?', for messages.
std::string Clip(std::string_view text);
// Clip(text) in single quotes.
std::string Quote(std::string_view text);
// A number as messages print it (%.15g: 33.3 stays 33.3).
std::string FormatNumber(double value);
// Quoted scalars (tag "!") and `!!str` ones are strings even when they look like numbers.
bool IsStringTagged(const YAML::Node& node);
// What a value is, for "expected X, got Y".
std::string Describe(const YAML::Node& node);
// The 1-based line of the second document, if `text` has more than one.
// NOTE: yaml-cpp 0.7's LoadAll never returns on some malformed inputs (its parser keeps
// reporting empty documents without consuming input; found by tests/fuzz), so documents are
// counted here with a bound of two, and only the first one is built, by YAML::Load.
std::optional<int> SecondDocumentLine(const std::string& text);

// Moves a result's value into `out`, or returns its error.
template <typename T, typename U>
Status Assign(Result<T> result, U& out) {
  if (!result) return result.error();
  out = std::move(*result);
  return Status::Ok();
}

// Reads typed values out of Fields and builds located errors. Every Read* returns the value or
// kInvalidArgument located at the field.
class Reader {
 public:
  explicit Reader(std::string_view filename) : filename_(filename) {}

  // `<file>:<line>: <path>`.
  std::string Location(int line, std::string_view path) const {
    return filename_ + ":" + std::to_string(line) + ": " + std::string(path);
  }
  Status Error(int line, std::string_view path, std::string_view what) const {
    return InvalidArgument(Location(line, path) + ": " + std::string(what));
  }
  Status Error(const Field& f, std::string_view what) const { return Error(f.line, f.path, what); }
  // "expected <what>, got <Describe(f)>".
  Status Expected(const Field& f, std::string_view what) const {
    return Error(f, "expected " + std::string(what) + ", got " + Describe(f.node));
  }

  // The keys of a map in file order; null reads as an empty map. Rejects duplicate keys.
  Result<std::vector<Entry>> MapEntries(const Field& f) const;
  // The items of a list; null reads as an empty list.
  Result<std::vector<Field>> ListItems(const Field& f) const;
  // Any scalar, as text (`attributes` values, `default_resreq`).
  Result<std::string> ReadString(const Field& f) const;
  // A non-empty scalar without spaces or control characters.
  Result<std::string> ReadName(const Field& f) const;
  // A list of distinct names.
  Result<std::vector<std::string>> ReadNameList(const Field& f) const;

  // A plain (unquoted) decimal integer in [min, max of T].
  template <typename T>
  Result<T> ReadInt(const Field& f, T min) const {
    const std::string what = min == 0 ? "a non-negative integer" : "an integer";
    if (!f.node.IsScalar() || IsStringTagged(f.node)) return Expected(f, what);
    const std::string& text = f.node.Scalar();
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) return Error(f, Quote(text) + " is out of range");
    if (ec != std::errc() || end != text.data() + text.size()) return Expected(f, what);
    if (value < min) {
      return min == 0 ? Expected(f, what) : Error(f, text + " < " + std::to_string(min));
    }
    if constexpr (sizeof(T) < sizeof(int64_t)) {
      if (value > std::numeric_limits<T>::max()) {
        return Error(f, text + " > " + std::to_string(std::numeric_limits<T>::max()));
      }
    }
    return static_cast<T>(value);
  }
  template <typename T>
  Result<T> ReadCount(const Field& f) const {
    return ReadInt<T>(f, 0);
  }
  Result<int32_t> ReadPriority(const Field& f) const {
    return ReadInt<int32_t>(f, std::numeric_limits<int32_t>::min());
  }
  Result<core::PolicyKind> ReadPolicy(const Field& f) const {
    return ReadChoice(f, &core::ParsePolicyKind,
                      "fifo, bounded_backfill, easy_backfill, predictive_backfill");
  }
  Result<core::BackfillOrder> ReadBackfillOrder(const Field& f) const {
    return ReadChoice(f, &core::ParseBackfillOrder, "queue, shortest, expansion");
  }
  Result<core::HistoryMatch> ReadHistoryMatch(const Field& f) const {
    return ReadChoice(f, &core::ParseHistoryMatch, "user, user_limit");
  }
  // predictive_backfill's history_runs: 1..RuntimeHistory::kKept (8).
  Result<int32_t> ReadHistoryRuns(const Field& f) const {
    Result<int32_t> runs = ReadInt<int32_t>(f, 1);
    if (runs && *runs > 8) return Error(f, std::to_string(*runs) + " > 8");
    return runs;
  }
  Result<core::OnHostLoss> ReadOnHostLoss(const Field& f) const {
    return ReadChoice(f, &core::ParseOnHostLoss, "requeue, exit");
  }
  // A plain number in [0, 100].
  Result<double> ReadPercent(const Field& f) const;
  // YAML 1.1 booleans (true/yes/on, false/no/off, in three cases), unquoted.
  Result<bool> ReadBool(const Field& f) const;

  // One of the strings `parse` accepts; `choices` lists them for the message.
  template <typename T>
  Result<T> ReadChoice(const Field& f, std::optional<T> (*parse)(std::string_view),
                       std::string_view choices) const {
    if (f.node.IsScalar()) {
      if (std::optional<T> value = parse(f.node.Scalar())) return *value;
    }
    return Expected(f, "one of " + std::string(choices));
  }

  // A host name or range (ExpandHostRange), expanded, charged to the file-wide budget.
  Result<std::vector<std::string>> ExpandHosts(const Field& f);
  // Charges `names` host names (or copies of host settings) to the file-wide budget.
  // Errors: kInvalidArgument at `f` once more than kMaxExpandedHostNames are charged in all.
  Status Charge(const Field& f, size_t names);

 private:
  std::string filename_;
  size_t names_left_ = kMaxExpandedHostNames;
};

}  // namespace sluice::config::yaml
