// The dashboard in a real browser (R-UI-4): a real server with real agents, jobs in several
// states, and headless Chromium (Debian's `chromium`, driven over the DevTools protocol on a
// pipe, browser.h). Checks: the #token= link logs in and leaves the address bar; the overview
// shows the queues; the jobs page lists every job and updates live; a pending job's detail
// shows its reasons and hint; the cancel button cancels (checked through the API); the hosts
// and queues pages render; no JavaScript error reaches the console. A second test shows a
// reservation on the hosts page (skipped against a server without /v1/reservations).
// Screenshots of every page at 1280x800 (and the jobs page at phone width) go to
// build/dashboard-screenshots/.
//
// Without chromium the test is skipped and says why; SLUICE_DASHBOARD_JOBS=N adds N parked
// jobs before the jobs page's first paint is measured (the figure in docs/design/dashboard.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "integration/browser.h"
#include "integration/cluster_harness.h"
#include "testing/build_paths.h"

namespace sluice::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kHostsAndQueues = R"(hosts:
  - {name: h1, slots: 2}
  - {name: h2, slots: 2}
queues:
  - {name: normal, policy: fifo, capacity: 50}
  - {name: parked, active: false}
default_queue: normal
)";

fs::path ScreenshotDir() {
  return fs::path(sluice::testing::SluiceBinary()).parent_path() / "dashboard-screenshots";
}

int64_t Submit(Cluster& cluster, json job) {
  int status = 0;
  json reply = cluster.Post("/v1/jobs", job, "alice-token", &status);
  EXPECT_EQ(status, 201) << reply.dump();
  return reply.value("id", int64_t{0});
}

// N jobs in the inactive queue, in batches (they pend with QUEUE_INACTIVE for ever).
void SubmitParked(Cluster& cluster, int64_t n) {
  for (int64_t done = 0; done < n;) {
    const int64_t batch = std::min<int64_t>(n - done, 20'000);
    json jobs = json::array();
    for (int64_t i = 0; i < batch; ++i) {
      jobs.push_back({{"command", {"true"}},
                      {"queue", "parked"},
                      {"name", "parked-" + std::to_string(done + i)}});
    }
    int status = 0;
    cluster.Post("/v1/jobs/batch", {{"jobs", jobs}}, "alice-token", &status);
    ASSERT_EQ(status, 201);
    done += batch;
  }
}

class DashboardBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* skip = std::getenv("SLUICE_SKIP_BROWSER"); skip != nullptr && *skip == '1') {
      std::cout << "[dashboard] SKIPPED: SLUICE_SKIP_BROWSER=1\n";
      GTEST_SKIP() << "SLUICE_SKIP_BROWSER=1";
    }
    chromium_ = Browser::Find();
    if (!chromium_) {
      std::cout << "[dashboard] SKIPPED: no chromium on PATH (scripts/setup installs Debian's "
                   "`chromium`; or set SLUICE_CHROMIUM=/path/to/chrome)\n";
      GTEST_SKIP() << "no chromium";
    }
  }

  std::optional<std::string> chromium_;
};

TEST_F(DashboardBrowserTest, PagesWorkInChromium) {
  Cluster cluster(DefaultClusterYaml(kHostsAndQueues));
  std::string error;
  ASSERT_TRUE(cluster.StartServer(&error, {"--stats-interval", "1"})) << error;
  cluster.StartAgent("h1", 2);
  cluster.StartAgent("h2", 2);
  ASSERT_TRUE(Eventually(
      [&] { return cluster.HostState("h1") == "ok" && cluster.HostState("h2") == "ok"; }, 20s))
      << cluster.Logs();

  // Jobs: one done, two running (filling both hosts), one pending with a reason, one held,
  // one to cancel from the page.
  const int64_t done = Submit(cluster, {{"command", {"true"}}, {"name", "quick"}});
  const int64_t array =
      Submit(cluster, {{"command", {"true"}}, {"name", "sweep"}, {"array", "1-3"}});
  ASSERT_TRUE(cluster.WaitAllEnded({done, array}, 20s)) << cluster.Logs();
  const int64_t run1 =
      Submit(cluster, {{"command", {"sh", "-c", "echo hello from the job; sleep 300"}},
                       {"tasks", 2},
                       {"name", "long-a"},
                       {"cwd", (cluster.dir() / "cli").string()},
                       {"output", (cluster.dir() / "long-a.out").string()}});
  const int64_t run2 =
      Submit(cluster, {{"command", {"sleep", "300"}},
                       {"tasks", 2},
                       {"name", "long-b"},
                       {"output", "/dev/null"}});
  ASSERT_TRUE(Eventually(
      [&] { return cluster.JobState(run1) == "RUNNING" && cluster.JobState(run2) == "RUNNING"; },
      20s))
      << cluster.Logs();
  const int64_t waiting = Submit(cluster, {{"command", {"sleep", "1"}}, {"name", "waits"}});
  const int64_t held = Submit(cluster, {{"command", {"sleep", "1"}}, {"name", "held-one"}});
  int status = 0;
  cluster.Post("/v1/jobs/" + std::to_string(held) + "/hold", json::object(), "alice-token",
               &status);
  ASSERT_EQ(status, 200);
  const int64_t doomed = Submit(cluster, {{"command", {"sleep", "1"}}, {"name", "to-cancel"}});
  ASSERT_TRUE(Eventually(
      [&] {
        json job = cluster.Job(waiting);
        return job.value("reason", "") != "" && job.value("reason", "") != "NEW_JOB";
      },
      10s))
      << cluster.Job(waiting).dump();

  Browser browser(*chromium_, 1280, 800);
  ASSERT_TRUE(browser.ok()) << "chromium " << *chromium_ << " did not start: " << browser.error();
  const std::string ui = cluster.url() + "/ui";
  const fs::path shots = ScreenshotDir();

  // 1. The #token= link (R-UI-2): logged in, the token kept, the address bar clean.
  ASSERT_TRUE(browser.Navigate(ui + "/#token=alice-token")) << browser.error();
  ASSERT_TRUE(
      browser.WaitFor("document.querySelector('.overview .cards') && "
                      "document.querySelector('#who').textContent === 'alice'"))
      << browser.error();
  EXPECT_EQ(browser.Eval("location.hash"), "");
  EXPECT_EQ(browser.Eval("sessionStorage.getItem('sluice.token')"), "alice-token");
  // 2. The overview shows the queues, their capacity and the charts.
  ASSERT_TRUE(browser.WaitFor("document.querySelectorAll('.overview svg.capbar').length === 2"));
  const std::string overview = browser.Eval("document.querySelector('main').innerText");
  EXPECT_NE(overview.find("normal"), std::string::npos);
  EXPECT_NE(overview.find("parked"), std::string::npos);
  EXPECT_NE(overview.find("Utilization"), std::string::npos);
  ASSERT_TRUE(browser.WaitFor("document.querySelectorAll('.overview path.series').length >= 2"));
  EXPECT_TRUE(browser.WaitFor("document.querySelector('#live').textContent === 'live'"));
  // Its numbers agree (issue 47.9): the Pending card is the sum of the pending-by-reason table
  // (held jobs apart), and alice's usage row shows her 4 slots.
  EXPECT_TRUE(browser.WaitFor(
      "(() => { const cards = [...document.querySelectorAll('.card')];"
      " const pending = cards.find((c) => c.querySelector('.card-label').textContent === 'Pending');"
      " const tables = [...document.querySelectorAll('table.counts')];"
      " const reasons = tables.find((t) => t.caption.textContent === 'Pending jobs by reason');"
      " const sum = [...reasons.querySelectorAll('td.num')].reduce((a, td) => a + Number(td.textContent), 0);"
      " return pending && Number(pending.querySelector('.card-value').textContent) === sum && sum > 0; })()"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  EXPECT_TRUE(browser.WaitFor(
      "document.querySelector('table.users-now tr[data-user=\"alice\"]') && "
      "document.querySelector('table.users-now tr[data-user=\"alice\"]').cells[2].textContent === '4'"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  EXPECT_TRUE(browser.Screenshot(shots / "overview.png"));

  // 3. The jobs page (by its nav link) lists every job; a new one appears live.
  browser.Eval("document.querySelector('nav a[data-page=jobs]').click()");
  for (int64_t id : {done, run1, run2, waiting, held, doomed}) {
    EXPECT_TRUE(
        browser.WaitFor("document.querySelector('tr[data-job=\"" + std::to_string(id) + "\"]')"))
        << "job " << id << " is not listed";
  }
  EXPECT_EQ(browser.Eval("location.pathname"), "/ui/jobs");
  const int64_t late = Submit(cluster, {{"command", {"sleep", "1"}}, {"name", "late"}});
  EXPECT_TRUE(
      browser.WaitFor("document.querySelector('tr[data-job=\"" + std::to_string(late) + "\"]')"))
      << "a job submitted while the page is open did not appear (live updates)";
  EXPECT_TRUE(browser.Screenshot(shots / "jobs.png"));

  // 4. A pending job's detail: its reasons (with per-host detail) and hint.
  ASSERT_TRUE(browser.Navigate(ui + "/jobs/" + std::to_string(waiting)));
  ASSERT_TRUE(browser.WaitFor("document.querySelector('.pending .reasons li')")) << browser.error();
  const json job = cluster.Job(waiting);
  const std::string pending = browser.Eval("document.querySelector('.pending').innerText");
  EXPECT_NE(pending.find(job.value("reason", "?")), std::string::npos) << pending;
  if (job["reasons"].contains("hint")) {
    EXPECT_TRUE(browser.WaitFor("document.querySelector('.pending .hint')")) << pending;
  }
  EXPECT_NE(pending.find("Estimated start"), std::string::npos);
  EXPECT_TRUE(browser.Screenshot(shots / "job-pending.png"));

  // 5. A running job's detail shows its output tail.
  EXPECT_TRUE(Eventually(
      [&] {
        auto text = testing::ReadFile(cluster.dir() / "long-a.out");
        return text && text->find("hello from the job") != std::string::npos;
      },
      10s));
  ASSERT_TRUE(browser.Navigate(ui + "/jobs/" + std::to_string(run1)));
  EXPECT_TRUE(browser.WaitFor(
      "document.querySelector('pre.output') && "
      "document.querySelector('pre.output').innerText.includes('hello from the job')",
      15s))
      << browser.Eval("document.querySelector('.output-box').innerText").dump();
  // Its steps (R-LAUNCH-2): one launched into it is listed with its host and command.
  {
    const json running = cluster.Job(run1);
    const std::string host = running["hosts"].is_array() && !running["hosts"].empty()
                                 ? running["hosts"][0].value("name", "h1")
                                 : "h1";
    int step_status = 0;
    cluster.Post("/v1/jobs/" + std::to_string(run1) + "/steps",
                 {{"host", host}, {"command", "echo from-a-step"}}, "alice-token", &step_status);
    EXPECT_EQ(step_status, 201) << running.dump();
    ASSERT_TRUE(browser.Navigate(ui + "/jobs/" + std::to_string(run1)));
    EXPECT_TRUE(browser.WaitFor(
        "document.querySelector('section.steps') && "
        "document.querySelector('section.steps').innerText.includes('" + std::to_string(run1) +
        ".1') && document.querySelector('section.steps').innerText.includes('from-a-step')",
        15s))
        << browser.Eval("document.querySelector('main').innerText").dump();
  }
  // Its fields are named in words (issue 47.9), never by the API's keys.
  EXPECT_TRUE(browser.WaitFor(
      "[...document.querySelectorAll('dl.fields dt')].some((d) => d.textContent === 'Working directory')"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  EXPECT_EQ(browser.Eval("[...document.querySelectorAll('dl.fields dt')]"
                         ".filter((d) => /_/.test(d.textContent)).map((d) => d.textContent).join(',')"),
            "");
  EXPECT_TRUE(browser.Screenshot(shots / "job-running.png"));
  // A running job whose output goes to /dev/null says so, without a refused peek (a 409 in the
  // console).
  ASSERT_TRUE(browser.Navigate(ui + "/jobs/" + std::to_string(run2)));
  EXPECT_TRUE(browser.WaitFor(
      "document.querySelector('.output-box') && "
      "document.querySelector('.output-box').innerText.includes('keeps no output')"))
      << browser.Eval("document.querySelector('main').innerText").dump();

  // 5b. Arrays (issue 47.5): an element has its own page, /ui/jobs/ID[INDEX], linking to its
  // array; the array's page lists its elements, each linking to its page.
  const std::string element = std::to_string(array) + "[2]";
  ASSERT_TRUE(browser.Navigate(ui + "/jobs/" + element));
  EXPECT_TRUE(browser.WaitFor("document.querySelector('h1') && "
                              "document.querySelector('h1').innerText.includes('Job " + element +
                              "') && document.querySelector('.crumbs a[href=\"/ui/jobs/" +
                              std::to_string(array) + "\"]')"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  ASSERT_TRUE(browser.Navigate(ui + "/jobs/" + std::to_string(array)));
  EXPECT_TRUE(browser.WaitFor("document.querySelectorAll('table.elements tbody tr').length === 3 && "
                              "document.querySelector('table.elements a[href=\"/ui/jobs/" +
                              element + "\"]')"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  EXPECT_NE(browser.Eval("document.querySelector('h1').innerText").get<std::string>().find(
                "Job array " + std::to_string(array) + "[1-3]"),
            std::string::npos);
  EXPECT_TRUE(browser.Screenshot(shots / "job-array.png"));

  // 6. The cancel button (pressed twice: confirm) cancels, as the API shows.
  ASSERT_TRUE(browser.Navigate(ui + "/jobs/" + std::to_string(doomed)));
  ASSERT_TRUE(browser.WaitFor("document.querySelector('button[data-action=cancel]')"));
  browser.Eval("document.querySelector('button[data-action=cancel]').click()");
  browser.Eval("document.querySelector('button[data-action=cancel]').click()");
  EXPECT_TRUE(Eventually([&] { return cluster.JobState(doomed) == "CANCELLED"; }, 10s))
      << cluster.Job(doomed).dump();
  EXPECT_TRUE(browser.WaitFor("document.querySelector('h1 .badge').textContent === 'CANCELLED'"));

  // 7. Hosts and queues.
  ASSERT_TRUE(browser.Navigate(ui + "/hosts"));
  ASSERT_TRUE(browser.WaitFor("document.querySelectorAll('.tile').length === 2"));
  EXPECT_TRUE(browser.WaitFor("document.querySelectorAll('.tile.load-full').length === 2"));
  EXPECT_TRUE(browser.Screenshot(shots / "hosts.png"));
  ASSERT_TRUE(browser.Navigate(ui + "/queues"));
  EXPECT_TRUE(browser.WaitFor("document.querySelectorAll('.queue').length === 2"))
      << browser.Eval("document.querySelector('main').innerText").dump()
      << " server: " << cluster.Get("/v1/queues").dump().substr(0, 200)
      << " stats: " << cluster.Get("/v1/stats?points=1").dump().substr(0, 200)
      << " limits: " << cluster.Get("/v1/limits").dump() << " from the page: "
      << browser
             .Eval(
                 "Promise.race([fetch('/v1/limits', {headers: {Authorization: 'Bearer "
                 "alice-token'}}).then(r => r.status), new Promise(r => setTimeout(() => "
                 "r('timeout'), 3000))])")
             .dump();
  EXPECT_TRUE(browser.Screenshot(shots / "queues.png"));

  // 7b. A host's page (issue 47.9): its slots, memory, agent and the job running on it.
  ASSERT_TRUE(browser.Navigate(ui + "/hosts/h1"));
  EXPECT_TRUE(browser.WaitFor("document.querySelector('h1') && "
                              "document.querySelector('h1').innerText.includes('Host h1') && "
                              "document.querySelectorAll('table.host-jobs tbody tr').length === 1"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  const std::string host_page = browser.Eval("document.querySelector('main').innerText");
  EXPECT_NE(host_page.find("2 of 2 used"), std::string::npos) << host_page;
  EXPECT_NE(host_page.find("connected"), std::string::npos) << host_page;
  // Its load and free memory, as its agent read them from /proc.
  EXPECT_NE(host_page.find("Load (1, 5, 15 min)"), std::string::npos) << host_page;
  EXPECT_EQ(host_page.find("not reported yet"), std::string::npos) << host_page;
  EXPECT_NE(host_page.find("Memory available"), std::string::npos) << host_page;
  EXPECT_TRUE(browser.Screenshot(shots / "host.png"));
  // 7c. History (issue 47.9): ended jobs newest first, and usage by user.
  ASSERT_TRUE(browser.Navigate(ui + "/history"));
  EXPECT_TRUE(browser.WaitFor(
      "document.querySelector('table.history tr[data-job=\"" + std::to_string(done) +
      "\"]') && document.querySelector('table.usage tr[data-user=\"alice\"]')"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  EXPECT_TRUE(browser.WaitFor("document.querySelector('table.history tr[data-job=\"" +
                              std::to_string(array) + "[3]\"]')"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  EXPECT_TRUE(browser.Screenshot(shots / "history.png"));

  // 7d. Submit (issue 47.9): a field the form cannot read is refused on the page; a job
  // the server refuses shows its error with the form kept; a good one opens the job's page.
  ASSERT_TRUE(browser.Navigate(ui + "/submit"));
  ASSERT_TRUE(browser.WaitFor("document.querySelector('form.submit-form') && "
                              "document.querySelectorAll('#queue option').length === 3"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  const auto set = [&](const std::string& id, const std::string& value) {
    browser.Eval("document.getElementById('" + id + "').value = " + json(value).dump());
  };
  const std::string press = "document.querySelector('form.submit-form button[type=submit]').click()";
  set("command", "echo from the form");
  set("run_limit", "1:75");
  browser.Eval(press);
  EXPECT_TRUE(browser.WaitFor(
      "document.querySelector('.submit-status').innerText.includes('hours:minutes')"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  set("run_limit", "1:30");
  set("resreq", "rusage[bogus=");
  browser.Eval(press);
  EXPECT_TRUE(browser.WaitFor(
      "document.querySelector('.submit-status .error') && "
      "document.querySelector('.submit-status').innerText.includes('POST /v1/jobs')"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  EXPECT_EQ(browser.Eval("document.getElementById('command').value"), "echo from the form");
  EXPECT_TRUE(browser.Screenshot(shots / "submit.png"));
  set("resreq", "");
  set("name", "from-web");
  set("tasks", "2");
  browser.Eval("document.getElementById('hold').checked = true");
  browser.Eval(press);
  ASSERT_TRUE(browser.WaitFor("/^\\/ui\\/jobs\\/\\d+$/.test(location.pathname) && "
                              "document.querySelector('h1') && "
                              "document.querySelector('h1').innerText.includes('from-web')"))
      << browser.Eval("location.pathname").dump()
      << browser.Eval("document.querySelector('main').innerText").dump();
  {
    const std::string path = browser.Eval("location.pathname");
    const json submitted = cluster.Job(std::stoll(path.substr(path.rfind('/') + 1)));
    EXPECT_EQ(submitted.value("name", ""), "from-web") << submitted.dump();
    EXPECT_EQ(submitted.value("state", ""), "HELD") << submitted.dump();
    EXPECT_EQ(submitted.value("tasks", 0), 2) << submitted.dump();
    EXPECT_EQ(submitted.value("run_limit", 0), 5400) << submitted.dump();
    EXPECT_EQ(submitted.value("user", ""), "alice") << submitted.dump();
  }

  // 8. Phone width: the page itself does not scroll sideways (wide tables scroll inside).
  browser.Resize(390, 844, true);
  ASSERT_TRUE(browser.Navigate(ui + "/jobs")) << browser.error() << "\n"
                                              << cluster.Logs() << [&] {
                                                   std::string text;
                                                   for (const std::string& e : browser.errors())
                                                     text += e + "\n";
                                                   return text;
                                                 }();
  ASSERT_TRUE(browser.WaitFor("document.querySelector('tr[data-job]')"));
  EXPECT_LE(browser.Eval("document.documentElement.scrollWidth").get<int>(), 400);
  EXPECT_TRUE(browser.Screenshot(shots / "jobs-phone.png"));
  browser.Resize(1280, 800);

  // 9. The jobs page's first paint (a full load), with SLUICE_DASHBOARD_JOBS more jobs.
  int64_t extra = 0;
  if (const char* n = std::getenv("SLUICE_DASHBOARD_JOBS"); n != nullptr) extra = std::atoll(n);
  if (extra > 0) SubmitParked(cluster, extra);
  ASSERT_TRUE(browser.Navigate(ui + "/jobs"));
  ASSERT_TRUE(
      browser.WaitFor("performance.getEntriesByName('sluice:jobs-rendered').length > 0", 30s));
  const double paint_ms =
      browser.Eval("performance.getEntriesByName('sluice:jobs-rendered')[0].startTime")
          .get<double>();
  std::cout << "[dashboard] jobs page first paint: " << paint_ms << " ms with " << (extra + 7)
            << " jobs\n";
  RecordProperty("jobs_first_paint_ms", std::to_string(paint_ms));

  // 10. No JavaScript error anywhere on the way, but the browser's note of the one refusal
  // the submit form was meant to get (7d).
  std::vector<std::string> errors = browser.errors();
  const auto refused = std::find_if(errors.begin(), errors.end(), [&](const std::string& e) {
    return e.find("status of 400") != std::string::npos &&
           e.ends_with(cluster.url() + "/v1/jobs");
  });
  EXPECT_NE(refused, errors.end()) << "the refused submission left no trace";
  if (refused != errors.end()) errors.erase(refused);
  EXPECT_TRUE(errors.empty()) << [&] {
    std::string text;
    for (const std::string& e : errors) text += e + "\n";
    return text;
  }();
  std::cout << "[dashboard] screenshots in " << shots.string() << "\n";
}

// The hosts page shows a host's reservation on its tile and the reservations under the tiles
// (R-RSV-1). The controller serves /v1/reservations (issue 42): a 404 fails the test.
TEST_F(DashboardBrowserTest, HostsPageShowsReservations) {
  Cluster cluster(DefaultClusterYaml(kHostsAndQueues));
  std::string error;
  ASSERT_TRUE(cluster.StartServer(&error)) << error;
  int status = 0;
  cluster.Get("/v1/reservations", "admin-token", &status);
  ASSERT_EQ(status, 200) << "GET /v1/reservations\n" << cluster.Logs();
  cluster.StartAgent("h1", 2);
  cluster.StartAgent("h2", 2);
  ASSERT_TRUE(Eventually(
      [&] { return cluster.HostState("h1") == "ok" && cluster.HostState("h2") == "ok"; }, 20s))
      << cluster.Logs();
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const json created = cluster.Post("/v1/reservations",
                                    {{"name", "maint-h1"},
                                     {"hosts", {"h1"}},
                                     {"begin", now + 3600},
                                     {"duration", 7200},
                                     {"maint", true}},
                                    "admin-token", &status);
  ASSERT_EQ(status, 201) << created.dump();

  Browser browser(*chromium_, 1280, 800);
  ASSERT_TRUE(browser.ok()) << "chromium " << *chromium_ << " did not start: " << browser.error();
  const std::string ui = cluster.url() + "/ui";
  ASSERT_TRUE(browser.Navigate(ui + "/hosts#token=admin-token")) << browser.error();
  ASSERT_TRUE(browser.WaitFor("document.querySelectorAll('.tile').length === 2"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  // h1's tile names the reservation; h2's has none.
  EXPECT_TRUE(
      browser.WaitFor("document.querySelector('#host-h1 .badge.rsv[data-rsv=\"maint-h1\"]')"))
      << browser.Eval("document.querySelector('main').innerText").dump()
      << cluster.Get("/v1/hosts").dump();
  EXPECT_FALSE(browser.Eval("!!document.querySelector('#host-h2 .badge.rsv')").get<bool>());
  // The reservations table lists it with its host and flags.
  const std::string row_selector =
      "document.querySelector('table.reservations tr[data-rsv=\"maint-h1\"]')";
  EXPECT_TRUE(browser.WaitFor(row_selector))
      << browser.Eval("document.querySelector('main').innerText").dump();
  const std::string row = browser.Eval(row_selector + ".innerText");
  EXPECT_NE(row.find("h1"), std::string::npos) << row;
  EXPECT_NE(row.find("maintenance"), std::string::npos) << row;
  EXPECT_TRUE(browser.Screenshot(ScreenshotDir() / "hosts-reservations.png"));
  // The host's own page lists it among its fields.
  ASSERT_TRUE(browser.Navigate(ui + "/hosts/h1"));
  EXPECT_TRUE(browser.WaitFor(
      "[...document.querySelectorAll('dl.fields dt')].some((d) => d.textContent === "
      "'Reservations' && d.nextElementSibling.textContent.startsWith('maint-h1 '))"))
      << browser.Eval("document.querySelector('main').innerText").dump();
  EXPECT_TRUE(browser.errors().empty()) << [&] {
    std::string text;
    for (const std::string& e : browser.errors()) text += e + "\n";
    return text;
  }();
}

}  // namespace
}  // namespace sluice::integration
