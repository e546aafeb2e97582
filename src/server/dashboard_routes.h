// The dashboard's routes (R-UI-1 ... R-UI-3; docs/design/dashboard.md):
//   GET /            302 to /ui/
//   GET /ui, /ui/... the embedded files (ui_assets.h); an app address (/ui/, /ui/jobs,
//                    /ui/jobs/ID, /ui/hosts, /ui/queues, any path without a file extension)
//                    answers index.html; an unknown file is a 404. No authentication: the
//                    files hold no data; the app calls the API with the user's token.
//   GET /v1/stats    the time series (stats_sampler.h), authenticated like every user route
//   GET /v1/whoami   the caller's user name and whether it is an administrator
// and the paged form of GET /v1/jobs (job_pages.h), answered with an X-Total-Count header.
// Files are looked up by exact name in the embedded table, so no path can reach the file
// system; each reply carries its Content-Type, an ETag (If-None-Match answers 304),
// `Cache-Control: no-cache` and a Content-Security-Policy that allows only this server.
// Thread-safety: handlers run on httplib's pool; the controller and sampler lock.
#pragma once

#include <httplib.h>

#include <map>
#include <string>

#include "server/controller.h"
#include "server/http_reply.h"
#include "server/stats_sampler.h"

namespace sluice::server {

void InstallUiRoutes(httplib::Server& server);
void InstallStatsRoutes(httplib::Server& server, Controller& controller, StatsSampler& stats);

// Answers GET /v1/jobs when `query` asks for a page (IsJobPageQuery) and returns true; the
// caller was authenticated. Returns false (nothing sent) for a plain listing.
bool AnswerJobPage(Controller& controller, const std::map<std::string, std::string>& query,
                   httplib::Response& res);

}  // namespace sluice::server
