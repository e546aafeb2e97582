#include "core/model/dependency.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "base/array_ids.h"

namespace sluice::core {

std::string_view ToString(DependOp op) {
  switch (op) {
    case DependOp::kDone:
      return "done";
    case DependOp::kExit:
      return "exit";
    case DependOp::kEnded:
      return "ended";
    case DependOp::kStarted:
      return "started";
    case DependOp::kNot:
      return "!";
    case DependOp::kAnd:
      return "&&";
    case DependOp::kOr:
      return "||";
  }
  return "?";
}

std::string_view ToString(DependVerdict verdict) {
  switch (verdict) {
    case DependVerdict::kSatisfied:
      return "satisfied";
    case DependVerdict::kWaiting:
      return "waiting";
    case DependVerdict::kNever:
      return "never";
  }
  return "?";
}

// Recursive descent over the grammar of dependency.h; `depth_` bounds the recursion.
class DependencyParser {
 public:
  explicit DependencyParser(std::string_view text) : text_(text) {}

  Result<Dependency> Run() {
    if (text_.size() > kMaxDependencyText) {
      return InvalidArgument("longer than " + std::to_string(kMaxDependencyText) + " characters");
    }
    SkipBlanks();
    if (pos_ == text_.size()) return Error("expected a condition such as done(12)");
    Result<int32_t> root = ParseOr();
    if (!root) return root.error();
    SkipBlanks();
    if (pos_ != text_.size()) return Error("expected &&, || or the end");
    std::vector<JobId>& jobs = dep_.jobs_;
    std::sort(jobs.begin(), jobs.end());
    jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
    return std::move(dep_);
  }

 private:
  Status Error(std::string_view what) const {
    std::string message = "column " + std::to_string(pos_ + 1) + ": " + std::string(what);
    if (pos_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      message += c >= 0x21 && c < 0x7f ? std::string(", got '") + text_[pos_] + "'"
                                       : ", got a byte " + std::to_string(c);
    }
    return InvalidArgument(std::move(message));
  }

  void SkipBlanks() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool Accept(std::string_view token) {
    SkipBlanks();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  int32_t Add(Dependency::Node node) {
    dep_.nodes_.push_back(node);
    return static_cast<int32_t>(dep_.nodes_.size()) - 1;
  }

  Result<int32_t> ParseOr() {
    Result<int32_t> left = ParseAnd();
    if (!left) return left;
    while (Accept("||")) {
      Result<int32_t> right = ParseAnd();
      if (!right) return right;
      left = Add({.op = DependOp::kOr, .left = *left, .right = *right});
    }
    return left;
  }

  Result<int32_t> ParseAnd() {
    Result<int32_t> left = ParseUnary();
    if (!left) return left;
    while (Accept("&&")) {
      Result<int32_t> right = ParseUnary();
      if (!right) return right;
      left = Add({.op = DependOp::kAnd, .left = *left, .right = *right});
    }
    return left;
  }

  Result<int32_t> ParseUnary() {
    if (++depth_ > kMaxDependencyDepth) {
      return Error("nested more than " + std::to_string(kMaxDependencyDepth) + " levels");
    }
    Result<int32_t> result = ParseUnaryBody();
    --depth_;
    return result;
  }

  Result<int32_t> ParseUnaryBody() {
    if (Accept("!")) {
      Result<int32_t> operand = ParseUnary();
      if (!operand) return operand;
      return Add({.op = DependOp::kNot, .left = *operand});
    }
    if (Accept("(")) {
      Result<int32_t> inner = ParseOr();
      if (!inner) return inner;
      if (!Accept(")")) return Error("expected ')'");
      return inner;
    }
    return ParseAtom();
  }

  Result<int32_t> ParseAtom() {
    SkipBlanks();
    static constexpr std::pair<std::string_view, DependOp> kNames[] = {
        {"done", DependOp::kDone},
        {"exit", DependOp::kExit},
        {"ended", DependOp::kEnded},
        {"started", DependOp::kStarted}};
    size_t end = pos_;
    while (end < text_.size() && text_[end] >= 'a' && text_[end] <= 'z') ++end;
    const std::string_view word = text_.substr(pos_, end - pos_);
    if (word.empty()) {
      if (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        Result<JobId> id = ParseId();
        if (!id) return id.error();
        return AddAtom(DependOp::kDone, *id);
      }
      return Error("expected done(id), exit(id), ended(id), started(id), a job id, '!' or '('");
    }
    const auto* name = std::find_if(std::begin(kNames), std::end(kNames),
                                    [&](const auto& n) { return n.first == word; });
    if (name == std::end(kNames)) {
      return Error("expected done, exit, ended or started, not '" + std::string(word) + "'");
    }
    pos_ = end;
    if (!Accept("(")) return Error("expected '(' after " + std::string(word));
    SkipBlanks();
    Result<JobId> id = ParseId();
    if (!id) return id.error();
    if (!Accept(")")) return Error("expected ')'");
    return AddAtom(name->second, *id);
  }

  Result<JobId> ParseId() {
    const char* first = text_.data() + pos_;
    const char* last = text_.data() + text_.size();
    JobId id = 0;
    auto [ptr, ec] = std::from_chars(first, last, id);
    if (ec == std::errc::result_out_of_range) return Error("job id out of range");
    if (ec != std::errc() || ptr == first || id < 1 || *first == '-' || *first == '+') {
      return Error("expected a job id (a positive integer)");
    }
    pos_ += static_cast<size_t>(ptr - first);
    if (pos_ < text_.size() && text_[pos_] == '[') return ParseElement(id);
    // Ids above this are array elements' packed ids (base/array_ids.h): written `ID[INDEX]`.
    if (id > kMaxArrayJobId) return Error("job id out of range");
    return id;
  }

  // `ID[INDEX]`: one element of array ID (R-UX-3).
  Result<JobId> ParseElement(JobId array) {
    ++pos_;
    const char* first = text_.data() + pos_;
    const char* last = text_.data() + text_.size();
    int32_t index = 0;
    auto [ptr, ec] = std::from_chars(first, last, index);
    if (ec != std::errc() || ptr == first || index < 0 || index > kMaxArrayIndex || *first == '+') {
      return Error("expected an array index");
    }
    pos_ += static_cast<size_t>(ptr - first);
    if (!Accept("]")) return Error("expected ']'");
    if (array > kMaxArrayJobId) return Error("array id out of range");
    return ArrayElementId(array, index);
  }

  int32_t AddAtom(DependOp op, JobId id) {
    dep_.jobs_.push_back(id);
    return Add({.op = op, .job = id});
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  Dependency dep_;
};

Result<Dependency> Dependency::Parse(std::string_view text) { return DependencyParser(text).Run(); }

namespace {

bool IsAtom(DependOp op) { return op <= DependOp::kStarted; }

// Binding strength, for printing only the parentheses the grammar needs.
int Precedence(DependOp op) {
  switch (op) {
    case DependOp::kOr:
      return 1;
    case DependOp::kAnd:
      return 2;
    default:
      return 3;
  }
}

DependVerdict Negate(DependVerdict v) {
  if (v == DependVerdict::kSatisfied) return DependVerdict::kNever;
  if (v == DependVerdict::kNever) return DependVerdict::kSatisfied;
  return v;
}

}  // namespace

DependVerdict EvaluateAtom(DependOp op, const std::optional<DependTarget>& target) {
  if (!target) return DependVerdict::kNever;
  const JobState s = target->state;
  const bool ended = IsTerminal(s);
  const bool failed = s == JobState::kExit || s == JobState::kCancelled;
  switch (op) {
    case DependOp::kDone:
      if (s == JobState::kDone) return DependVerdict::kSatisfied;
      return failed ? DependVerdict::kNever : DependVerdict::kWaiting;
    case DependOp::kExit:
      if (failed) return DependVerdict::kSatisfied;
      return s == JobState::kDone ? DependVerdict::kNever : DependVerdict::kWaiting;
    case DependOp::kEnded:
      return ended ? DependVerdict::kSatisfied : DependVerdict::kWaiting;
    case DependOp::kStarted:
      if (s == JobState::kAdmitting || s == JobState::kRunning) return DependVerdict::kSatisfied;
      if (ended) return target->started ? DependVerdict::kSatisfied : DependVerdict::kNever;
      return DependVerdict::kWaiting;
    default:
      break;
  }
  return DependVerdict::kNever;
}

std::string Dependency::Text(int32_t node) const {
  const Node& n = nodes_[node];
  if (IsAtom(n.op)) return std::string(core::ToString(n.op)) + "(" + FormatJobId(n.job) + ")";
  auto operand = [&](int32_t child) {
    std::string text = Text(child);
    const DependOp child_op = nodes_[child].op;
    // `!` binds tightest; an operand of lower precedence (or a binary under `!`) needs parens.
    const bool parens = n.op == DependOp::kNot ? !IsAtom(child_op) && child_op != DependOp::kNot
                                               : Precedence(child_op) < Precedence(n.op);
    return parens ? "(" + text + ")" : text;
  };
  if (n.op == DependOp::kNot) return "!" + operand(n.left);
  return operand(n.left) + " " + std::string(core::ToString(n.op)) + " " + operand(n.right);
}

DependVerdict Dependency::Verdict(int32_t node, const DependLookup& lookup) const {
  const Node& n = nodes_[node];
  if (IsAtom(n.op)) return EvaluateAtom(n.op, lookup(n.job));
  if (n.op == DependOp::kNot) return Negate(Verdict(n.left, lookup));
  const DependVerdict a = Verdict(n.left, lookup);
  const DependVerdict b = Verdict(n.right, lookup);
  // `&&` is `||` under De Morgan: swap the roles of satisfied and never.
  const DependVerdict dominant =
      n.op == DependOp::kAnd ? DependVerdict::kNever : DependVerdict::kSatisfied;
  if (a == dominant || b == dominant) return dominant;
  if (a == DependVerdict::kWaiting || b == DependVerdict::kWaiting) return DependVerdict::kWaiting;
  return a;  // both the non-dominant final value
}

std::string Dependency::Explain(int32_t node, DependVerdict verdict,
                                const DependLookup& lookup) const {
  const Node& n = nodes_[node];
  if (n.op == DependOp::kAnd) {
    // The first operand that alone gives the verdict (a never, or a wait) is the blocker.
    for (int32_t child : {n.left, n.right}) {
      if (Verdict(child, lookup) == verdict) return Explain(child, verdict, lookup);
    }
  }
  return Text(node);
}

DependEvaluation Dependency::Evaluate(const DependLookup& lookup) const {
  if (nodes_.empty()) return DependEvaluation{.verdict = DependVerdict::kSatisfied};
  const DependVerdict verdict = Verdict(Root(), lookup);
  if (verdict == DependVerdict::kSatisfied) return DependEvaluation{.verdict = verdict};
  return DependEvaluation{.verdict = verdict, .condition = Explain(Root(), verdict, lookup)};
}

}  // namespace sluice::core
