#include "config/auth_yaml.h"

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sluice::config::yaml {

Status ReadAuth(const Reader& reader, const Field& f, AuthConfig& auth) {
  if (!f.node.IsNull() && !f.node.IsMap()) return reader.Expected(f, "a map (agent_token, users)");
  Result<std::vector<Entry>> entries = reader.MapEntries(f);
  if (!entries) return entries.error();
  std::set<std::string, std::less<>> names;
  std::set<std::string, std::less<>> tokens;
  for (const Entry& e : *entries) {
    if (e.key == "allow_dynamic_hosts") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadBool(e.value), auth.allow_dynamic_hosts));
      continue;
    }
    if (e.key == "agent_token") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadName(e.value), auth.agent_token));
      tokens.insert(auth.agent_token);
      continue;
    }
    if (e.key != "users") return reader.Error(e.key_line, e.value.path, "unknown key");
    Result<std::vector<Field>> items = reader.ListItems(e.value);
    if (!items) return items.error();
    for (const Field& item : *items) {
      if (!item.node.IsMap()) return reader.Expected(item, "a map (name, token, admin)");
      Result<std::vector<Entry>> keys = reader.MapEntries(item);
      if (!keys) return keys.error();
      AuthUser user;
      for (const Entry& k : *keys) {
        if (k.key == "name") {
          SLUICE_RETURN_IF_ERROR(Assign(reader.ReadName(k.value), user.name));
        } else if (k.key == "token") {
          SLUICE_RETURN_IF_ERROR(Assign(reader.ReadName(k.value), user.token));
        } else if (k.key == "admin") {
          SLUICE_RETURN_IF_ERROR(Assign(reader.ReadBool(k.value), user.admin));
        } else {
          return reader.Error(k.key_line, k.value.path, "unknown key");
        }
      }
      if (user.name.empty() || user.token.empty()) {
        return reader.Error(item, "a user needs a name and a token");
      }
      if (!names.insert(user.name).second) {
        return reader.Error(item, "duplicate user " + Quote(user.name));
      }
      if (!tokens.insert(user.token).second) return reader.Error(item, "duplicate token");
      auth.users.push_back(std::move(user));
    }
  }
  return Status::Ok();
}

}  // namespace sluice::config::yaml
