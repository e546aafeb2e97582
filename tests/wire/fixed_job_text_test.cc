// FixedJobText (wire/job_json.h) writes a job's fixed members by hand (issue 45: building a
// json object and dumping it was a quarter of a restart's CPU). Its text must stay what the
// object's dump gave, byte for byte, so that listings do not change: the reference below is
// that first version, and random specs with odd strings, argv commands, absent members and
// reservations must give the same text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "wire/job_json.h"

namespace sluice::wire {
namespace {

using nlohmann::json;

std::string Reference(const json& spec) {
  json fixed = {{"name", spec.value("name", "")},
                {"min_tasks", spec.value("min_tasks", 1)},
                {"max_tasks", spec.value("max_tasks", 1)},
                {"resreq", spec.value("resreq", "")},
                {"run_limit", spec.value("run_limit", json(nullptr))},
                {"priority", spec.value("priority", 0)},
                {"project", spec.value("project", "")},
                {"exclusive", spec.value("exclusive", false)},
                {"depend", spec.value("depend", "")},
                {"begin", spec.value("begin", json(nullptr))},
                {"command", CommandText(spec.value("command", json("")))},
                {"cwd", spec.value("cwd", "")},
                {"output", spec.value("output", "")},
                {"error", spec.value("error", "")}};
  if (const std::string rsv = spec.value("reservation", ""); !rsv.empty()) fixed["reservation"] = rsv;
  const std::string text = fixed.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.substr(1, text.size() - 2);
}

std::string OddText(std::mt19937& rng) {
  static const std::vector<std::string> kPieces = {
      "a", "sleep 10", "\"", "\\", "\n", "\t", "\r", "\b", "\f", "\x01", "\x1f", "é", "日本",
      "/", " ", "%j", "\x7f"};
  std::string text;
  const int n = std::uniform_int_distribution<int>(0, 6)(rng);
  for (int i = 0; i < n; ++i)
    text += kPieces[std::uniform_int_distribution<size_t>(0, kPieces.size() - 1)(rng)];
  return text;
}

TEST(FixedJobTextTest, SameTextAsTheDumpedObject) {
  std::mt19937 rng(45);
  auto coin = [&rng] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
  for (int round = 0; round < 2000; ++round) {
    json spec = json::object();
    for (const char* name : {"name", "resreq", "project", "depend", "cwd", "output", "error"})
      if (coin()) spec[name] = OddText(rng);
    if (coin()) {
      spec["command"] = OddText(rng);
    } else if (coin()) {
      spec["command"] = json::array({OddText(rng), OddText(rng)});
    }
    if (coin()) spec["min_tasks"] = std::uniform_int_distribution<int>(1, 4096)(rng);
    if (coin()) spec["max_tasks"] = std::uniform_int_distribution<int>(1, 4096)(rng);
    if (coin()) spec["priority"] = std::uniform_int_distribution<int>(-100, 100)(rng);
    if (coin()) spec["exclusive"] = coin();
    if (coin()) spec["run_limit"] = coin() ? json(std::uniform_int_distribution<int>(1, 1 << 30)(rng))
                                           : json(nullptr);
    if (coin()) spec["begin"] = coin() ? json(1'800'000'000) : json("2026-12-07T10:00:00");
    if (coin()) spec["reservation"] = coin() ? "" : OddText(rng) + "r";
    if (coin()) spec["script"] = "#!/bin/sh\ntrue\n";  // not a fixed member
    ASSERT_EQ(*FixedJobText(spec), Reference(spec)) << spec.dump();
  }
}

// A member of the wrong type is refused as the object's version refused it (the API checks
// specs before they get here; a stored row that slipped through fails its restore alike).
TEST(FixedJobTextTest, AWrongTypeThrowsAsBefore) {
  for (const json& spec : {json{{"name", 5}}, json{{"cwd", json::array()}}, json{{"min_tasks", "x"}},
                           json{{"exclusive", "yes"}}, json::array()}) {
    EXPECT_THROW(Reference(spec), json::type_error) << spec.dump();
    EXPECT_THROW(FixedJobText(spec), json::type_error) << spec.dump();
  }
}

TEST(FixedJobTextTest, AnEmptySpecHasEveryMemberWithItsDefault) {
  EXPECT_EQ(*FixedJobText(json::object()),
            R"("begin":null,"command":"","cwd":"","depend":"","error":"","exclusive":false,)"
            R"("max_tasks":1,"min_tasks":1,"name":"","output":"","priority":0,"project":"",)"
            R"("resreq":"","run_limit":null)");
}

}  // namespace
}  // namespace sluice::wire
