#include "client/compat/options.h"

namespace sluice::client::compat {
namespace {

// The long option `name` (without `=`), exactly or by a unique prefix.
Result<const OptionSpec*> FindLong(std::string_view name, std::span<const OptionSpec> specs) {
  const OptionSpec* prefix_match = nullptr;
  bool ambiguous = false;
  for (const OptionSpec& spec : specs) {
    if (spec.long_name.empty()) continue;
    if (spec.long_name == name) return &spec;
    if (name.size() > 2 && spec.long_name.starts_with(name)) {
      if (prefix_match != nullptr && prefix_match->id != spec.id) ambiguous = true;
      prefix_match = &spec;
    }
  }
  if (ambiguous) return InvalidArgument("option '" + std::string(name) + "' is ambiguous");
  if (prefix_match == nullptr) {
    return InvalidArgument("unrecognized option '" + std::string(name) + "'");
  }
  return prefix_match;
}

const OptionSpec* FindShort(std::string_view name, std::span<const OptionSpec> specs) {
  for (const OptionSpec& spec : specs) {
    if (!spec.short_name.empty() && spec.short_name == name) return &spec;
  }
  return nullptr;
}

// One `--name[=value]` word at args[i]; may take args[i + 1] as its value.
Status ReadLong(std::span<const std::string> args, size_t& i, std::span<const OptionSpec> specs,
                ParsedArgs& out) {
  const std::string& word = args[i];
  const size_t eq = word.find('=');
  const std::string name = word.substr(0, eq);
  Result<const OptionSpec*> spec = FindLong(name, specs);
  if (!spec) return spec.error();
  ParsedOption option{.id = (*spec)->id, .written = word};
  if (eq != std::string::npos) {
    if (!(*spec)->takes_value) {
      return InvalidArgument("option '" + std::string((*spec)->long_name) +
                             "' doesn't allow an argument");
    }
    option.value = word.substr(eq + 1);
    option.has_value = true;
  } else if ((*spec)->takes_value && !(*spec)->optional_value) {
    if (i + 1 >= args.size()) {
      return InvalidArgument("option '" + std::string((*spec)->long_name) +
                             "' requires an argument");
    }
    option.value = args[++i];
    option.has_value = true;
  }
  out.options.push_back(std::move(option));
  return Status::Ok();
}

// One cluster of short options `-abc` at args[i]; a letter with a value takes the rest of the
// word, or args[i + 1].
Status ReadShortCluster(std::span<const std::string> args, size_t& i,
                        std::span<const OptionSpec> specs, ParsedArgs& out) {
  const std::string& word = args[i];
  for (size_t at = 1; at < word.size(); ++at) {
    const std::string name = std::string("-") + word[at];
    const OptionSpec* spec = FindShort(name, specs);
    if (spec == nullptr) return InvalidArgument(std::string("invalid option -- '") + word[at] + "'");
    ParsedOption option{.id = spec->id, .written = name};
    if (spec->takes_value) {
      if (at + 1 < word.size()) {
        option.value = word.substr(at + 1);
      } else if (i + 1 < args.size()) {
        option.value = args[++i];
      } else {
        return InvalidArgument(std::string("option requires an argument -- '") + word[at] + "'");
      }
      option.has_value = true;
      out.options.push_back(std::move(option));
      return Status::Ok();
    }
    out.options.push_back(std::move(option));
  }
  return Status::Ok();
}

// One LSF option word at args[i], with its value in args[i + 1] when it takes one.
Status ReadLsf(std::span<const std::string> args, size_t& i, std::span<const OptionSpec> specs,
               ParsedArgs& out) {
  const std::string& word = args[i];
  const OptionSpec* spec = FindShort(word, specs);
  if (spec == nullptr) return InvalidArgument("illegal option -- " + word.substr(1));
  ParsedOption option{.id = spec->id, .written = word};
  if (spec->takes_value) {
    if (i + 1 >= args.size()) {
      return InvalidArgument("option requires an argument -- " + word.substr(1));
    }
    option.value = args[++i];
    option.has_value = true;
  }
  out.options.push_back(std::move(option));
  return Status::Ok();
}

}  // namespace

Result<ParsedArgs> ParseOptions(std::span<const std::string> args,
                                std::span<const OptionSpec> specs, OptionStyle style,
                                bool stop_at_operand) {
  ParsedArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    const bool getopt = style == OptionStyle::kGetopt;
    if (getopt && word == "--") {
      out.operands.insert(out.operands.end(), args.begin() + static_cast<ptrdiff_t>(i) + 1,
                          args.end());
      break;
    }
    if (word.size() < 2 || word[0] != '-') {
      if (stop_at_operand) {
        out.operands.insert(out.operands.end(), args.begin() + static_cast<ptrdiff_t>(i),
                            args.end());
        break;
      }
      out.operands.push_back(word);
      continue;
    }
    Status read = !getopt                 ? ReadLsf(args, i, specs, out)
                  : word.starts_with("--") ? ReadLong(args, i, specs, out)
                                           : ReadShortCluster(args, i, specs, out);
    if (!read.ok()) return read;
  }
  return out;
}

}  // namespace sluice::client::compat
