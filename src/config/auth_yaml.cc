#include "config/auth_yaml.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sluice::config::yaml {
namespace {

using NameSet = std::set<std::string, std::less<>>;

// Secrets seen so far: clear tokens and digests, each kind distinct.
struct Seen {
  NameSet names;
  NameSet tokens;
  NameSet digests;
};

// A SHA-256 digest in hex: 64 hex digits, returned lowercase.
Result<std::string> ReadDigest(const Reader& reader, const Field& f) {
  Result<std::string> text = reader.ReadString(f);
  if (!text) return text.error();
  std::string digest = *text;
  const bool hex = std::all_of(digest.begin(), digest.end(),
                               [](unsigned char c) { return std::isxdigit(c) != 0; });
  if (digest.size() != 64 || !hex) {
    return reader.Error(f,
                        "expected a SHA-256 digest (64 hex digits), e.g. from "
                        "`printf %s TOKEN | sha256sum`");
  }
  std::transform(digest.begin(), digest.end(), digest.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return digest;
}

// Records a user's or the agent's secret; refuses one already used.
Status NoteSecret(const Reader& reader, const Field& f, const std::string& token,
                  const std::string& digest, Seen& seen) {
  if (!token.empty() && !seen.tokens.insert(token).second) {
    return reader.Error(f, "duplicate token");
  }
  if (!digest.empty() && !seen.digests.insert(digest).second) {
    return reader.Error(f, "duplicate token_sha256");
  }
  return Status::Ok();
}

Status ReadUser(const Reader& reader, const Field& item, Seen& seen, AuthUser& user) {
  if (!item.node.IsMap()) return reader.Expected(item, "a map (name, token, admin, unix_user)");
  Result<std::vector<Entry>> keys = reader.MapEntries(item);
  if (!keys) return keys.error();
  for (const Entry& k : *keys) {
    if (k.key == "name") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadName(k.value), user.name));
    } else if (k.key == "token") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadName(k.value), user.token));
    } else if (k.key == "token_sha256") {
      SLUICE_RETURN_IF_ERROR(Assign(ReadDigest(reader, k.value), user.token_sha256));
    } else if (k.key == "admin") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadBool(k.value), user.admin));
    } else if (k.key == "unix_user") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadName(k.value), user.unix_user));
    } else {
      return reader.Error(k.key_line, k.value.path, "unknown key");
    }
  }
  if (user.name.empty() || user.token.empty() == user.token_sha256.empty()) {
    return reader.Error(item, "a user needs a name and a token (token or token_sha256, not both)");
  }
  if (!seen.names.insert(user.name).second) {
    return reader.Error(item, "duplicate user " + Quote(user.name));
  }
  return NoteSecret(reader, item, user.token, user.token_sha256, seen);
}

Status ReadMunge(const Reader& reader, const Field& f, MungeConfig& munge) {
  if (!f.node.IsNull() && !f.node.IsMap()) return reader.Expected(f, "a map (socket)");
  Result<std::vector<Entry>> entries = reader.MapEntries(f);
  if (!entries) return entries.error();
  for (const Entry& e : *entries) {
    if (e.key != "socket") return reader.Error(e.key_line, e.value.path, "unknown key");
    SLUICE_RETURN_IF_ERROR(Assign(reader.ReadString(e.value), munge.socket));
    if (munge.socket.empty() || munge.socket[0] != '/') {
      return reader.Error(e.value, "expected an absolute path to munged's socket");
    }
  }
  munge.enabled = true;
  return Status::Ok();
}

}  // namespace

Status ReadAuth(const Reader& reader, const Field& f, AuthConfig& auth) {
  if (!f.node.IsNull() && !f.node.IsMap()) {
    return reader.Expected(f, "a map (agent_token, users, admins, munge)");
  }
  Result<std::vector<Entry>> entries = reader.MapEntries(f);
  if (!entries) return entries.error();
  Seen seen;
  for (const Entry& e : *entries) {
    if (e.key == "allow_dynamic_hosts") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadBool(e.value), auth.allow_dynamic_hosts));
      continue;
    }
    if (e.key == "agent_token") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadName(e.value), auth.agent_token));
      SLUICE_RETURN_IF_ERROR(NoteSecret(reader, e.value, auth.agent_token, "", seen));
    } else if (e.key == "agent_token_sha256") {
      SLUICE_RETURN_IF_ERROR(Assign(ReadDigest(reader, e.value), auth.agent_token_sha256));
      SLUICE_RETURN_IF_ERROR(NoteSecret(reader, e.value, "", auth.agent_token_sha256, seen));
    } else if (e.key == "allow_root_jobs") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadBool(e.value), auth.allow_root_jobs));
    } else if (e.key == "admins") {
      SLUICE_RETURN_IF_ERROR(Assign(reader.ReadNameList(e.value), auth.admins));
    } else if (e.key == "munge") {
      SLUICE_RETURN_IF_ERROR(ReadMunge(reader, e.value, auth.munge));
    } else if (e.key == "users") {
      Result<std::vector<Field>> items = reader.ListItems(e.value);
      if (!items) return items.error();
      for (const Field& item : *items) {
        AuthUser user;
        SLUICE_RETURN_IF_ERROR(ReadUser(reader, item, seen, user));
        auth.users.push_back(std::move(user));
      }
    } else {
      return reader.Error(e.key_line, e.value.path, "unknown key");
    }
  }
  if (!auth.agent_token.empty() && !auth.agent_token_sha256.empty()) {
    return reader.Error(f, "agent_token and agent_token_sha256 are exclusive");
  }
  return Status::Ok();
}

}  // namespace sluice::config::yaml
