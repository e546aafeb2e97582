#include "config/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>

namespace sluice::config::yaml {
namespace {

// Counts documents (HandleNextDocument calls) and records where each starts; builds nothing.
class DocumentCounter : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;

  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

int LineOf(const YAML::Node& node, int fallback) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() || mark.line < 0 ? fallback : mark.line + 1;
}

std::string ChildPath(std::string_view parent, std::string_view key) {
  std::string path(parent);
  if (!path.empty()) path += '.';
  path += key;
  return path;
}

// At most 60 characters of user text, control characters shown as '?', for messages.
std::string Clip(std::string_view text) {
  constexpr size_t kMax = 60;
  std::string out;
  for (size_t i = 0; i < text.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  }
  if (text.size() > kMax) out += "...";
  return out;
}

std::string Quote(std::string_view text) { return "'" + Clip(text) + "'"; }

std::string FormatNumber(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", value);
  return buf;
}

// Quoted scalars (tag "!") and `!!str` ones are strings even when they look like numbers.
bool IsStringTagged(const YAML::Node& node) {
  const std::string& tag = node.Tag();
  return tag == "!" || tag == "tag:yaml.org,2002:str";
}

// What a value is, for "expected X, got Y".
std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return node.size() == 0 ? "an empty list" : "a list";
    case YAML::NodeType::Map:
      return node.size() == 0 ? "an empty map" : "a map";
    case YAML::NodeType::Scalar:
      return IsStringTagged(node) ? "the string " + Quote(node.Scalar()) : Quote(node.Scalar());
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

std::optional<int> SecondDocumentLine(const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentCounter counter;
  int documents = 0;
  while (documents < 2 && parser.HandleNextDocument(counter)) ++documents;
  if (documents < 2) return std::nullopt;
  if (counter.starts.size() < 2 || counter.starts[1].is_null()) return 1;
  return counter.starts[1].line + 1;
}

Result<std::vector<Entry>> Reader::MapEntries(const Field& f) const {
  std::vector<Entry> entries;
  if (f.node.IsNull()) return entries;
  if (!f.node.IsMap()) return Expected(f, "a map");
  std::set<std::string, std::less<>> seen;
  for (auto it = f.node.begin(); it != f.node.end(); ++it) {
    const int key_line = LineOf(it->first, f.line);
    if (!it->first.IsScalar()) {
      return Error(key_line, f.path, "expected a plain key, got " + Describe(it->first));
    }
    Entry entry{.key = it->first.Scalar(), .key_line = key_line};
    const int value_line = it->second.IsNull() ? key_line : LineOf(it->second, key_line);
    entry.value = Field{it->second, ChildPath(f.path, entry.key), value_line};
    if (!seen.insert(entry.key).second) {
      return Error(key_line, entry.value.path, "duplicate key");
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<std::vector<Field>> Reader::ListItems(const Field& f) const {
  std::vector<Field> items;
  if (f.node.IsNull()) return items;
  if (!f.node.IsSequence()) return Expected(f, "a list");
  for (auto it = f.node.begin(); it != f.node.end(); ++it) {
    const YAML::Node& item = *it;
    items.push_back(Field{item, f.path + "[" + std::to_string(items.size()) + "]",
                          item.IsNull() ? f.line : LineOf(item, f.line)});
  }
  return items;
}

Result<std::string> Reader::ReadString(const Field& f) const {
  if (!f.node.IsScalar()) return Expected(f, "a string");
  return f.node.Scalar();
}

Result<std::string> Reader::ReadName(const Field& f) const {
  if (!f.node.IsScalar()) return Expected(f, "a name");
  const std::string& text = f.node.Scalar();
  const bool bad_char = std::any_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
  });
  if (text.empty() || bad_char) return Expected(f, "a name without spaces");
  return text;
}

Result<std::vector<std::string>> Reader::ReadNameList(const Field& f) const {
  if (!f.node.IsSequence()) return Expected(f, "a list of names");
  Result<std::vector<Field>> items = ListItems(f);
  if (!items) return items.error();
  std::vector<std::string> names;
  std::set<std::string, std::less<>> seen;
  for (const Field& item : *items) {
    Result<std::string> name = ReadName(item);
    if (!name) return name.error();
    if (!seen.insert(*name).second) return Error(item, "duplicate name " + Quote(*name));
    names.push_back(std::move(*name));
  }
  return names;
}

Result<double> Reader::ReadPercent(const Field& f) const {
  if (!f.node.IsScalar() || IsStringTagged(f.node)) return Expected(f, "a number");
  const std::string& text = f.node.Scalar();
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return Expected(f, "a number");
  }
  if (value < 0) return Error(f, Clip(text) + " < 0");
  if (value > 100) return Error(f, Clip(text) + " > 100");
  return value;
}

Result<bool> Reader::ReadBool(const Field& f) const {
  static constexpr std::string_view kTrue[] = {"true", "True", "TRUE", "yes", "Yes",
                                               "YES",  "on",   "On",   "ON"};
  static constexpr std::string_view kFalse[] = {"false", "False", "FALSE", "no", "No",
                                                "NO",    "off",   "Off",   "OFF"};
  if (f.node.IsScalar() && !IsStringTagged(f.node)) {
    const std::string& text = f.node.Scalar();
    if (std::find(std::begin(kTrue), std::end(kTrue), text) != std::end(kTrue)) return true;
    if (std::find(std::begin(kFalse), std::end(kFalse), text) != std::end(kFalse)) return false;
  }
  return Expected(f, "true or false");
}

Result<std::vector<std::string>> Reader::ExpandHosts(const Field& f) {
  if (!f.node.IsScalar()) return Expected(f, "a host name or range");
  Result<std::vector<std::string>> names = ExpandHostRange(f.node.Scalar());
  if (!names) return names.error().WithPrefix(Location(f.line, f.path));
  SLUICE_RETURN_IF_ERROR(Charge(f, names->size()));
  return names;
}

Status Reader::Charge(const Field& f, size_t names) {
  if (names > names_left_) {
    return Error(f,
                 "more than " + std::to_string(kMaxExpandedHostNames) + " host names in one file");
  }
  names_left_ -= names;
  return Status::Ok();
}

}  // namespace sluice::config::yaml
