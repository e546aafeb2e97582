#include "client/array_format.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace sluice::client {
namespace {

using nlohmann::json;

bool AllDigits(std::string_view text) {
  if (text.empty() || text.size() > 18) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string Member(const json& job, const char* key) {
  auto it = job.find(key);
  if (it == job.end() || it->is_null()) return "-";
  if (it->is_string()) return it->get<std::string>().empty() ? "-" : it->get<std::string>();
  return it->dump();
}

int64_t Count(const json& job, const char* state) {
  auto elements = job.find("elements");
  if (elements == job.end() || !elements->is_object()) return 0;
  auto it = elements->find(state);
  return it != elements->end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

std::string JobRef::Path(std::string_view suffix) const {
  std::string path = "/v1/jobs/" + std::to_string(id) + std::string(suffix);
  if (!index.empty()) path += "?index=" + index;
  return path;
}

Result<JobRef> ParseJobRef(std::string_view text) {
  const auto bad = [&] {
    return InvalidArgument("job id '" + std::string(text) +
                           "': expected ID, ID[INDEX] or ID[FIRST-LAST]");
  };
  std::string_view id = text;
  std::string_view index;
  bool has_index = true;
  if (const size_t open = text.find('['); open != std::string_view::npos) {
    if (text.back() != ']') return bad();
    id = text.substr(0, open);
    index = text.substr(open + 1, text.size() - open - 2);
  } else if (const size_t underscore = text.find('_'); underscore != std::string_view::npos) {
    id = text.substr(0, underscore);  // Slurm's 12_3
    index = text.substr(underscore + 1);
  } else {
    has_index = false;
  }
  if (!AllDigits(id)) return bad();
  if (has_index) {
    const size_t dash = index.find('-');
    if (!AllDigits(index.substr(0, dash)) ||
        (dash != std::string_view::npos && !AllDigits(index.substr(dash + 1)))) {
      return bad();
    }
  }
  JobRef ref;
  std::from_chars(id.data(), id.data() + id.size(), ref.id);
  ref.index = std::string(index);
  return ref;
}

std::string JobIdText(const json& job) {
  if (!job.is_object()) return "-";
  const std::string id = Member(job, "id");
  if (auto index = job.find("index"); index != job.end() && index->is_number_integer()) {
    return id + "[" + index->dump() + "]";
  }
  if (auto array = job.find("array"); array != job.end() && array->is_string()) {
    return id + "[" + array->get<std::string>() + "]";
  }
  return id;
}

std::string FormatArrays(const json& jobs) {
  const std::vector<std::string> header = {"JOBID", "NAME", "USER", "QUEUE", "NJOBS", "PEND",
                                           "HELD",  "RUN",  "DONE", "EXIT",  "CANCEL"};
  std::vector<std::vector<std::string>> rows;
  for (const json& job : jobs.is_array() ? jobs : json::array()) {
    if (!job.is_object() || !job.contains("array")) continue;
    int64_t total = 0;
    for (const char* s : {"PENDING", "HELD", "RUNNING", "DONE", "EXIT", "CANCELLED"}) {
      total += Count(job, s);
    }
    rows.push_back({Member(job, "id"), Member(job, "name"), Member(job, "user"),
                    Member(job, "queue"), std::to_string(total),
                    std::to_string(Count(job, "PENDING")), std::to_string(Count(job, "HELD")),
                    std::to_string(Count(job, "RUNNING")), std::to_string(Count(job, "DONE")),
                    std::to_string(Count(job, "EXIT")), std::to_string(Count(job, "CANCELLED"))});
  }
  if (rows.empty()) return "No job arrays found\n";
  std::vector<size_t> widths(header.size());
  for (size_t i = 0; i < header.size(); ++i) {
    widths[i] = header[i].size();
    for (const auto& row : rows) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  const auto line = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) out += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out += '\n';
  };
  line(header);
  for (const auto& row : rows) line(row);
  return out;
}

}  // namespace sluice::client
