#include "client/jobs_output.h"

#include <cctype>
#include <utility>

#include "client/array_format.h"
#include "client/format.h"
#include "client/job_long_format.h"
#include "client/printable.h"

namespace sluice::client {
namespace {

using nlohmann::json;

// A table printed row by row: the first kSizingRows rows are kept to size the columns, then
// printed with the header; later rows go out at once. `after` is text under a row (reasons).
class StreamedTable {
 public:
  StreamedTable(std::ostream& out, TableRow header) : out_(out), header_(std::move(header)) {}

  void Add(TableRow row, std::string after) {
    if (!sized_) {
      kept_.push_back({std::move(row), std::move(after)});
      if (kept_.size() >= JobsOutput::kSizingRows) Size();
      return;
    }
    Print(row, after);
  }
  // Prints the rows still kept; false when no row came at all.
  bool Finish() {
    if (!sized_ && kept_.empty()) return false;
    if (!sized_) Size();
    return true;
  }

 private:
  struct Kept {
    TableRow row;
    std::string after;
  };
  void Size() {
    std::vector<TableRow> rows;
    rows.reserve(kept_.size());
    for (const Kept& k : kept_) rows.push_back(k.row);
    widths_ = ColumnWidths(header_, rows);
    sized_ = true;
    out_ << PrintableText(TableLine(header_, widths_));
    for (const Kept& k : kept_) Print(k.row, k.after);
    kept_.clear();
    kept_.shrink_to_fit();
  }
  void Print(const TableRow& row, const std::string& after) {
    out_ << PrintableText(TableLine(row, widths_) + after);
  }

  std::ostream& out_;
  TableRow header_;
  std::vector<Kept> kept_;
  std::vector<size_t> widths_;
  bool sized_ = false;
};

// FormatJobs, FormatPendingJobs and FormatJobFields, row by row.
class TableOutput final : public JobsOutput {
 public:
  TableOutput(std::ostream& out, JobsLayout layout, int64_t now, std::vector<std::string> fields)
      : out_(out), layout_(layout), now_(now), fields_(std::move(fields)),
        table_(out, Header(layout_, fields_)) {}

  void Add(const json& job) override {
    if (layout_ == JobsLayout::kFields) {
      TableRow row;
      for (const std::string& field : fields_) row.push_back(JobFieldCell(job, field, now_));
      table_.Add(std::move(row), "");
    } else if (layout_ == JobsLayout::kPending) {
      const json state = job.is_object() ? job.value("state", json()) : json();
      if (state != "PENDING" && state != "HELD") return;
      table_.Add(JobTableRow(job, now_), " PENDING REASONS:\n" + PendingReasonText(job));
    } else {
      table_.Add(JobTableRow(job, now_), "");
      notes_ += ExitNote(job);
    }
  }

  void Finish() override {
    if (!table_.Finish()) {
      out_ << (layout_ == JobsLayout::kPending ? "No pending jobs found\n" : "No jobs found\n");
      return;
    }
    out_ << PrintableText(notes_);
  }

 private:
  static TableRow Header(JobsLayout layout, const std::vector<std::string>& fields) {
    if (layout != JobsLayout::kFields) return JobTableHeader();
    TableRow header;
    for (std::string name : fields) {
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      header.push_back(std::move(name));
    }
    return header;
  }

  std::ostream& out_;
  JobsLayout layout_;
  int64_t now_;
  std::vector<std::string> fields_;
  StreamedTable table_;
  std::string notes_;  // EXIT jobs' messages, under the table (few: ended jobs with a message)
};

// `--json`: what json::array(jobs).dump(2) prints, element by element.
class JsonOutput final : public JobsOutput {
 public:
  explicit JsonOutput(std::ostream& out) : out_(out) {}
  void Add(const json& job) override {
    std::string text = job.dump(2);
    std::string indented;
    indented.reserve(text.size() + text.size() / 8);
    for (char c : text) {
      indented += c;
      if (c == '\n') indented += "  ";  // raw newlines are layout only: strings escape theirs
    }
    out_ << (first_ ? "[\n  " : ",\n  ") << indented;
    first_ = false;
  }
  void Finish() override { out_ << (first_ ? "[]" : "\n]") << "\n"; }

 private:
  std::ostream& out_;
  bool first_ = true;
};

// `-l`: each job as it comes, a blank line between; `-A`: the arrays' objects, at the end.
class LongOutput final : public JobsOutput {
 public:
  LongOutput(std::ostream& out, bool arrays) : out_(out), arrays_(arrays) {}
  void Add(const json& job) override {
    if (arrays_) {
      if (job.is_object() && job.contains("array")) kept_.push_back(job);
      return;
    }
    out_ << (any_ ? "\n" : "") << PrintableText(FormatJobLong(job));
    any_ = true;
  }
  void Finish() override {
    if (arrays_) out_ << PrintableText(FormatArrays(kept_));
    if (!arrays_ && !any_) out_ << "No jobs found\n";
  }

 private:
  std::ostream& out_;
  bool arrays_;
  bool any_ = false;
  json kept_ = json::array();
};

}  // namespace

std::unique_ptr<JobsOutput> NewJobsOutput(std::ostream& out, JobsLayout layout, int64_t now,
                                          std::vector<std::string> fields) {
  switch (layout) {
    case JobsLayout::kJson:
      return std::make_unique<JsonOutput>(out);
    case JobsLayout::kLong:
    case JobsLayout::kArrays:
      return std::make_unique<LongOutput>(out, layout == JobsLayout::kArrays);
    default:
      return std::make_unique<TableOutput>(out, layout, now, std::move(fields));
  }
}

}  // namespace sluice::client
