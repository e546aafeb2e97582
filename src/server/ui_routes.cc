// The dashboard's static files (dashboard_routes.h, R-UI-1).
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "server/dashboard_routes.h"
#include "server/ui_assets.h"

namespace sluice::server {

namespace {

std::string_view ContentTypeOf(std::string_view path) {
  const size_t dot = path.rfind('.');
  const std::string_view ext = dot == std::string_view::npos ? "" : path.substr(dot + 1);
  if (ext == "html") return "text/html; charset=utf-8";
  if (ext == "js") return "text/javascript; charset=utf-8";
  if (ext == "css") return "text/css; charset=utf-8";
  if (ext == "svg") return "image/svg+xml";
  if (ext == "json") return "application/json";
  return "application/octet-stream";
}

// A strong validator from the bytes (FNV-1a, 64 bits): the files change only with the binary.
std::string ETagOf(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  char text[24];
  std::snprintf(text, sizeof(text), "\"%016llx\"", static_cast<unsigned long long>(h));
  return text;
}

const UiAsset* FindAsset(std::string_view path) {
  for (const UiAsset& asset : UiAssets()) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

// An app address (a page of the single-page app) rather than a file: no extension in its
// last segment, or a host's page.
bool IsAppAddress(std::string_view path) {
  if (path.starts_with("hosts/")) return true;  // a host's page: its name may have dots
  const size_t slash = path.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return last.find('.') == std::string_view::npos;
}

void SendAsset(const httplib::Request& req, httplib::Response& res, const UiAsset& asset) {
  const std::string etag = ETagOf(asset.bytes);
  res.set_header("ETag", etag);
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Content-Security-Policy",
                 "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                 "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  if (req.get_header_value("If-None-Match") == etag) {
    res.status = 304;
    return;
  }
  res.status = 200;
  res.set_content(std::string(asset.bytes), std::string(ContentTypeOf(asset.path)));
}

void SendNotFound(httplib::Response& res, const std::string& path) {
  res.status = 404;
  res.set_header("Cache-Control", "no-cache");
  const nlohmann::json body = {{"error", "no dashboard file /ui/" + path.substr(0, 200)}};
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

}  // namespace

void InstallUiRoutes(httplib::Server& server) {
  const auto to_app = [](const httplib::Request&, httplib::Response& res) {
    res.set_redirect("/ui/", 302);
  };
  server.Get("/", to_app);
  server.Get("/ui", to_app);
  server.Get(R"(/ui/(.*))", [](const httplib::Request& req, httplib::Response& res) {
    const std::string path = req.matches[1];
    if (path.find("..") != std::string::npos || path.find('\\') != std::string::npos ||
        path.find("//") != std::string::npos || path.starts_with("/")) {
      return SendNotFound(res, path);
    }
    if (const UiAsset* asset = FindAsset(path); asset != nullptr) {
      return SendAsset(req, res, *asset);
    }
    const UiAsset* index = FindAsset("index.html");
    if (!IsAppAddress(path) || index == nullptr) return SendNotFound(res, path);
    SendAsset(req, res, *index);
  });
}

}  // namespace sluice::server
