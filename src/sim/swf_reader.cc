#include "sim/swf_reader.h"

#include <zlib.h>

#ifdef SLUICE_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace sluice::sim {
namespace {

constexpr int kMinFields = 9;
constexpr int kUsedFields = 15;  // fields past the 15th are validated, not kept

// One data line that passed the syntax check (rule 2), before the machine-size rules.
struct SwfRecord {
  int64_t id = 0;
  int64_t submit = 0;
  int64_t runtime = 0;
  int64_t allocated_procs = 0;
  int64_t requested_procs = 0;
  int64_t requested_time = 0;
  int64_t user = -1;
  int64_t queue = -1;
  int64_t line = 0;
};

struct SwfHeader {
  std::optional<int64_t> max_procs;
  std::optional<int64_t> max_nodes;
  std::optional<int64_t> unix_start_time;
};

// The blanks between fields: every whitespace but the newline that ends a line. A table,
// because the parser tests ~19 million characters of a full trace against it.
constexpr std::array<bool, 256> kBlank = [] {
  std::array<bool, 256> blank{};
  for (unsigned char c : {' ', '\t', '\r', '\v', '\f'}) blank[c] = true;
  return blank;
}();

bool IsBlank(char c) { return kBlank[static_cast<unsigned char>(c)]; }

std::string_view TrimLeft(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && IsBlank(s[i])) ++i;
  return s.substr(i);
}

// A whole token as a number: integers exactly; decimals (some archive fields are averages)
// truncated toward zero and saturated to the int64 range. nullopt for anything else.
std::optional<int64_t> ParseNumber(std::string_view token) {
  const char* first = token.data();
  const char* last = token.data() + token.size();
  int64_t integer = 0;
  auto [end, ec] = std::from_chars(first, last, integer);
  if (ec == std::errc() && end == last) return integer;
  double real = 0;
  auto [real_end, real_ec] = std::from_chars(first, last, real);
  if (real_ec != std::errc() || real_end != last || !std::isfinite(real)) return std::nullopt;
  if (real >= 9.2e18) return INT64_MAX;
  if (real <= -9.2e18) return INT64_MIN;
  return static_cast<int64_t>(real);
}

// Reads `; Key: N` header comments (rule 1). `body` is the text after the `;`.
void ReadHeaderComment(std::string_view body, SwfHeader& header) {
  body = TrimLeft(body);
  const auto read_value = [&body](std::string_view key, std::optional<int64_t>& out) {
    if (out.has_value() || !body.starts_with(key)) return;
    std::string_view rest = TrimLeft(body.substr(key.size()));
    int64_t value = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec == std::errc() && end != rest.data()) out = value;
  };
  read_value("MaxProcs:", header.max_procs);
  read_value("MaxNodes:", header.max_nodes);
  read_value("UnixStartTime:", header.unix_start_time);
}

// The common token, a plain integer of at most 18 digits, read in the same pass that finds
// its end (archive lines are ~18 such fields). Moves `p` past the token; false for anything
// else (a sign on its own, a decimal, more digits), which ParseNumber then judges.
bool ParsePlainInteger(const char*& p, const char* end, int64_t& value) {
  const char* q = p;
  const bool negative = *q == '-';  // REQUIRES: p != end
  if (negative) ++q;
  const char* const digits_start = q;
  uint64_t magnitude = 0;
  for (; q != end; ++q) {
    const unsigned digit = static_cast<unsigned>(static_cast<unsigned char>(*q)) - '0';
    if (digit > 9) break;
    magnitude = magnitude * 10 + digit;
  }
  const ptrdiff_t digits = q - digits_start;
  if (digits == 0 || digits > 18 || (q != end && !IsBlank(*q))) return false;
  value = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  p = q;
  return true;
}

// Splits a data line into fields and fills `record`. False when the line is malformed
// (rule 2).
bool ParseDataLine(std::string_view line, SwfRecord& record) {
  std::array<int64_t, kUsedFields> fields;
  fields.fill(-1);
  int count = 0;
  const char* p = line.data();
  const char* const end = p + line.size();
  while (true) {
    while (p != end && IsBlank(*p)) ++p;
    if (p == end) break;
    int64_t value = 0;
    if (!ParsePlainInteger(p, end, value)) {
      const char* const start = p;
      while (p != end && !IsBlank(*p)) ++p;
      std::optional<int64_t> number =
          ParseNumber(std::string_view(start, static_cast<size_t>(p - start)));
      if (!number.has_value()) return false;
      value = *number;
    }
    if (count < kUsedFields) fields[count] = value;
    ++count;
  }
  if (count < kMinFields) return false;
  record.id = fields[0];
  record.submit = fields[1];
  record.runtime = fields[3];
  record.allocated_procs = fields[4];
  record.requested_procs = fields[7];
  record.requested_time = fields[8];
  record.user = count >= 12 ? fields[11] : -1;
  record.queue = count >= 15 ? fields[14] : -1;
  return true;
}

// Rule 3: the machine size, or 0 when none is known.
int64_t MachineSize(const SwfOptions& options, const SwfHeader& header) {
  if (options.procs > 0) return options.procs;
  if (header.max_procs.value_or(0) > 0) return *header.max_procs;
  return std::max<int64_t>(header.max_nodes.value_or(0), 0);
}

// Rules 4 and 5: sets each record's processor count (field 8, else 5) and removes, in place
// and keeping file order, the records the rules skip. Returns how many were removed.
int64_t ApplyJobRules(int64_t procs, std::vector<SwfRecord>& records) {
  size_t kept = 0;
  for (SwfRecord& record : records) {
    const int64_t job_procs =
        record.requested_procs > 0 ? record.requested_procs : record.allocated_procs;
    if (record.runtime < 0 || job_procs <= 0 || job_procs > procs || record.submit < 0) continue;
    record.requested_procs = job_procs;
    records[kept++] = record;
  }
  const int64_t removed = static_cast<int64_t>(records.size() - kept);
  records.resize(kept);
  return removed;
}

// REQUIRES: `record` passed ApplyJobRules (requested_procs holds the job's processors).
// Fills a default WorkloadJob in place (the job list is built without moving each job).
void FillJob(const SwfRecord& record, WorkloadJob& job) {
  const int64_t procs = record.requested_procs;
  job.spec.id = record.id;
  job.spec.submit_time = record.submit;
  job.spec.min_tasks = static_cast<int32_t>(procs);
  job.spec.max_tasks = static_cast<int32_t>(procs);
  job.spec.run_limit = record.requested_time > 0 ? record.requested_time : record.runtime;
  if (record.user >= 0) job.spec.user = "u" + std::to_string(record.user);
  job.runtime = record.runtime;
  job.line = record.line;
  job.swf_queue = record.queue;
}

// Closes a zlib inflate stream on every return path.
class InflateStream {
 public:
  InflateStream() = default;
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
  ~InflateStream() {
    if (initialized_) inflateEnd(&stream_);
  }
  bool Init() {
    // 15 + 16: a gzip wrapper with the largest window.
    initialized_ = inflateInit2(&stream_, 15 + 16) == Z_OK;
    return initialized_;
  }
  z_stream& stream() { return stream_; }

 private:
  z_stream stream_{};
  bool initialized_ = false;
};

// The gzip trailer's last field is the (last member's) size mod 2^32: for the usual single
// member the exact size, so the text is inflated without a regrowth; one spare byte lets
// the end of the stream be seen before the buffer is full. The field is only trusted up to
// deflate's largest ratio (~1032:1), so a damaged trailer cannot make a small file claim
// gigabytes up front.
size_t InflatedSizeGuess(std::string_view compressed) {
  size_t expected = compressed.size() * 8;
  if (compressed.size() >= 18) {
    const auto* tail =
        reinterpret_cast<const unsigned char*>(compressed.data() + compressed.size() - 4);
    const size_t stated =
        size_t{tail[0]} | size_t{tail[1]} << 8 | size_t{tail[2]} << 16 | size_t{tail[3]} << 24;
    expected = std::clamp<size_t>(stated, compressed.size(), compressed.size() * 1032);
  }
  return std::max<size_t>(expected + 1, 1 << 16);
}

// Streams every member through zlib; its messages name what is wrong with a damaged file.
Result<std::string> GunzipWithZlib(const std::string& path, std::string_view compressed) {
  InflateStream inflater;
  if (!inflater.Init()) return Internal(path + ": gzip: cannot initialize zlib");
  z_stream& zs = inflater.stream();
  std::string out;
  out.resize(InflatedSizeGuess(compressed));
  size_t in_pos = 0;
  size_t out_pos = 0;
  while (true) {
    if (zs.avail_in == 0 && in_pos < compressed.size()) {
      size_t chunk = std::min<size_t>(compressed.size() - in_pos, UINT_MAX);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + in_pos));
      zs.avail_in = static_cast<uInt>(chunk);
      in_pos += chunk;
    }
    if (out_pos == out.size()) out.resize(out.size() * 2);
    size_t room = std::min<size_t>(out.size() - out_pos, UINT_MAX);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
    zs.avail_out = static_cast<uInt>(room);
    int rc = inflate(&zs, Z_NO_FLUSH);
    out_pos += room - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // Another gzip member may follow (concatenated .gz files are valid gzip).
      if (zs.avail_in == 0 && in_pos == compressed.size()) break;
      if (inflateReset(&zs) != Z_OK) return Internal(path + ": gzip: cannot reset zlib");
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && in_pos == compressed.size()) {
      return InvalidArgument(path + ": gzip: truncated stream");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::string what = zs.msg != nullptr ? zs.msg : "corrupt stream";
      return InvalidArgument(path + ": gzip: " + what);
    }
  }
  out.resize(out_pos);
  return out;
}

#ifdef SLUICE_HAVE_LIBDEFLATE
// Inflates member after member of a gzip file held whole, into a buffer sized like zlib's
// (the trailer's size, capped) and doubled whenever a member does not fit. Nothing when
// libdeflate cannot read the file: the caller then lets zlib say what is wrong with it.
std::optional<std::string> GunzipWithLibdeflate(std::string_view compressed) {
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> decompressor(
      libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
  if (decompressor == nullptr || compressed.empty()) return std::nullopt;
  std::string out(InflatedSizeGuess(compressed), '\0');
  size_t in_pos = 0;
  size_t out_pos = 0;
  while (in_pos < compressed.size()) {
    size_t in_used = 0;
    size_t out_used = 0;
    const libdeflate_result rc = libdeflate_gzip_decompress_ex(
        decompressor.get(), compressed.data() + in_pos, compressed.size() - in_pos,
        out.data() + out_pos, out.size() - out_pos, &in_used, &out_used);
    if (rc == LIBDEFLATE_INSUFFICIENT_SPACE) {
      out.resize(out.size() * 2);
      continue;
    }
    if (rc != LIBDEFLATE_SUCCESS || in_used == 0) return std::nullopt;
    in_pos += in_used;
    out_pos += out_used;
  }
  out.resize(out_pos);
  return out;
}
#endif

Result<std::string> Gunzip(const std::string& path, std::string_view compressed) {
#ifdef SLUICE_HAVE_LIBDEFLATE
  if (std::optional<std::string> text = GunzipWithLibdeflate(compressed)) return *std::move(text);
#endif
  return GunzipWithZlib(path, compressed);
}

}  // namespace

Result<Workload> ParseSwf(std::string_view text, const SwfOptions& options) {
  // 1. One pass over the lines: header comments, and the syntax check of data lines.
  Workload workload;
  SwfHeader header;
  std::vector<SwfRecord> records;
  records.reserve(text.size() / 64 + 1);
  int64_t line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = TrimLeft(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_number;
    if (line.empty()) continue;
    if (line.front() == ';') {
      ReadHeaderComment(line.substr(1), header);
      continue;
    }
    SwfRecord record;
    record.line = line_number;
    if (ParseDataLine(line, record)) {
      records.push_back(record);
    } else {
      ++workload.skipped;
    }
  }

  // 2. The machine size P (rule 3), needed by the processor rule.
  const int64_t procs = MachineSize(options, header);
  if (procs <= 0) {
    return InvalidArgument(
        "machine size unknown: no --procs and no positive MaxProcs or MaxNodes header");
  }
  if (procs > INT32_MAX) return InvalidArgument("machine size too large: " + std::to_string(procs));
  workload.procs = static_cast<int32_t>(procs);
  workload.unix_start_time = header.unix_start_time.value_or(0);

  // 3. The filtering rules (4, 5).
  workload.skipped += ApplyJobRules(procs, records);

  // 4. Stable sort by submit time (archive traces are usually sorted already), then max_jobs.
  const auto by_submit = [](const SwfRecord& a, const SwfRecord& b) { return a.submit < b.submit; };
  if (!std::is_sorted(records.begin(), records.end(), by_submit)) {
    std::stable_sort(records.begin(), records.end(), by_submit);
  }
  if (options.max_jobs >= 0 && static_cast<uint64_t>(options.max_jobs) < records.size()) {
    records.resize(static_cast<size_t>(options.max_jobs));
  }

  // 5. Build the jobs.
  workload.jobs.reserve(records.size());
  for (const SwfRecord& record : records) {
    FillJob(record, workload.jobs.emplace_back());
  }
  return workload;
}

void MapSwfQueues(const core::ClusterConfig& config, Workload& workload) {
  std::set<std::string, std::less<>> names;
  for (const core::QueueSpec& queue : config.queues) names.insert(queue.name);
  for (WorkloadJob& job : workload.jobs) {
    if (job.swf_queue < 0) continue;
    std::string name = "q" + std::to_string(job.swf_queue);
    if (names.contains(name)) job.spec.queue = std::move(name);
  }
}

Result<std::string> ReadMaybeGzipFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return NotFound(path + ": cannot open: " + std::strerror(errno));
  std::string raw;
  std::array<char, 1 << 16> buffer;
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), file)) > 0) raw.append(buffer.data(), n);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return NotFound(path + ": cannot read");
  const bool gzip = raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
                    static_cast<unsigned char>(raw[1]) == 0x8b;
  if (!gzip) return raw;
  return Gunzip(path, raw);
}

Result<Workload> ReadSwf(const std::string& path, const SwfOptions& options) {
  Result<std::string> text = ReadMaybeGzipFile(path);
  if (!text) return text.error();
  Result<Workload> workload = ParseSwf(*text, options);
  if (!workload) return workload.error().WithPrefix(path);
  return workload;
}

}  // namespace sluice::sim
