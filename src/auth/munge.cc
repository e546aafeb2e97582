#include "auth/munge.h"

#include <munge.h>
#include <sys/stat.h>

#include <cstdlib>
#include <memory>

namespace sluice::auth {
namespace {

struct CtxDeleter {
  void operator()(munge_ctx_t ctx) const { munge_ctx_destroy(ctx); }
};
using Ctx = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, CtxDeleter>;

Result<Ctx> ContextFor(const std::string& socket) {
  Ctx ctx(munge_ctx_create());
  if (!ctx) return Status(StatusCode::kInternal, "munge: cannot create a context");
  if (munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS) {
    return Status(StatusCode::kInternal, "munge: cannot use socket " + socket);
  }
  return ctx;
}

std::string Reason(munge_ctx_t ctx, munge_err_t err) {
  const char* text = munge_ctx_strerror(ctx);
  return text != nullptr ? text : munge_strerror(err);
}

}  // namespace

Result<std::string> MungeEncode(const std::string& socket, int ttl_seconds) {
  Result<Ctx> ctx = ContextFor(socket);
  if (!ctx) return ctx.error();
  if (ttl_seconds > 0 && munge_ctx_set(ctx->get(), MUNGE_OPT_TTL, ttl_seconds) != EMUNGE_SUCCESS) {
    return Status(StatusCode::kInternal,
                  "munge: cannot set a ttl of " + std::to_string(ttl_seconds) + " s");
  }
  char* cred = nullptr;
  const munge_err_t err = munge_encode(&cred, ctx->get(), nullptr, 0);
  if (err != EMUNGE_SUCCESS) {
    std::free(cred);
    return Status(
        err == EMUNGE_SOCKET ? StatusCode::kUnavailable : StatusCode::kInternal,
        "cannot encode a MUNGE credential via " + socket + ": " + Reason(ctx->get(), err));
  }
  std::string text(cred);
  std::free(cred);
  return text;
}

Result<MungeIdentity> MungeDecode(const std::string& socket, const std::string& credential) {
  Result<Ctx> ctx = ContextFor(socket);
  if (!ctx) return ctx.error();
  void* payload = nullptr;
  int length = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  const munge_err_t err =
      munge_decode(credential.c_str(), ctx->get(), &payload, &length, &uid, &gid);
  std::free(payload);
  if (err == EMUNGE_SOCKET) {
    return Status(StatusCode::kUnavailable, "the controller cannot reach munged at " + socket +
                                                ": " + Reason(ctx->get(), err));
  }
  if (err != EMUNGE_SUCCESS) {
    return Status(StatusCode::kUnauthenticated,
                  std::string("MUNGE credential refused: ") + Reason(ctx->get(), err));
  }
  if (length != 0) {
    return Status(StatusCode::kUnauthenticated, "MUNGE credential refused: unexpected payload");
  }
  MungeIdentity identity{.uid = uid, .gid = gid};
  time_t encoded = 0;
  int ttl = 0;
  munge_ctx_get(ctx->get(), MUNGE_OPT_ENCODE_TIME, &encoded);
  munge_ctx_get(ctx->get(), MUNGE_OPT_TTL, &ttl);
  identity.encoded_at = encoded;
  identity.ttl_seconds = ttl;
  return identity;
}

bool IsSocket(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace sluice::auth
