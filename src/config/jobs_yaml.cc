#include "config/jobs_yaml.h"

#include <string>
#include <vector>

namespace sluice::config::yaml {
namespace {

bool IsGlob(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '*';
    if (!ok) return false;
  }
  return true;
}

Status ReadGlobs(const Reader& reader, const Field& f, std::vector<std::string>& out) {
  Result<std::vector<Field>> items = reader.ListItems(f);
  if (!items) return items.error();
  out.clear();
  for (const Field& item : *items) {
    Result<std::string> glob = reader.ReadString(item);
    if (!glob) return glob.error();
    if (!IsGlob(*glob)) {
      return reader.Expected(item, "a variable name or glob (letters, digits, _ and *)");
    }
    out.push_back(*glob);
  }
  return Status::Ok();
}

Status ReadPattern(const Reader& reader, const Field& f, std::string& out) {
  Result<std::string> text = reader.ReadString(f);
  if (!text) return text.error();
  if (text->find('\0') != std::string::npos) return reader.Expected(f, "a path without NUL");
  out = *text;
  return Status::Ok();
}

}  // namespace

Status ReadJobs(const Reader& reader, const Field& f, JobPolicy& jobs) {
  if (!f.node.IsNull() && !f.node.IsMap()) {
    return reader.Expected(f, "a map (env_deny, env_allow, default_output, default_array_output)");
  }
  Result<std::vector<Entry>> keys = reader.MapEntries(f);
  if (!keys) return keys.error();
  for (const Entry& k : *keys) {
    if (k.key == "env_deny") {
      SLUICE_RETURN_IF_ERROR(ReadGlobs(reader, k.value, jobs.env_deny));
    } else if (k.key == "env_allow") {
      SLUICE_RETURN_IF_ERROR(ReadGlobs(reader, k.value, jobs.env_allow));
    } else if (k.key == "default_output") {
      SLUICE_RETURN_IF_ERROR(ReadPattern(reader, k.value, jobs.default_output));
    } else if (k.key == "default_array_output") {
      SLUICE_RETURN_IF_ERROR(ReadPattern(reader, k.value, jobs.default_array_output));
    } else {
      return reader.Error(k.key_line, k.value.path, "unknown key");
    }
  }
  return Status::Ok();
}

}  // namespace sluice::config::yaml
