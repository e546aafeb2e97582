// The dashboard's static files (R-UI-1), compiled into the binary: the build embeds every
// file under src/server/ui/ (cmake/embed_files.cmake writes ui_assets.cc with one byte array
// per file), so the server reads no file and fetches nothing at run time.
// Thread-safety: immutable after static initialization.
#pragma once

#include <span>
#include <string_view>

namespace sluice::server {

struct UiAsset {
  std::string_view path;   // relative to src/server/ui/, e.g. "app.js", "pages/jobs.js"
  std::string_view bytes;  // the file's content
};

// Every embedded file, sorted by path.
std::span<const UiAsset> UiAssets();

}  // namespace sluice::server
