#include "tunefarm/command_line/command_line.h"

#include <climits>
#include <cstdio>

namespace tunefarm {
namespace {

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// The flag's long name as a user typed it ("-o,--output" -> "--output"), for messages.
std::string FlagName(const std::string& declared) {
  const size_t comma = declared.rfind(',');
  return comma == std::string::npos ? declared : declared.substr(comma + 1);
}

// Extras are collected instead of refused by CLI11, so the message can name each one ours.
void AllowExtrasEverywhere(CLI::App& app) {
  app.allow_extras();
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) AllowExtrasEverywhere(*sub);
}

// The deepest subcommand chosen on this command line, and the program name up to it.
CLI::App* Chosen(CLI::App& app, std::string* program) {
  *program = app.get_name();
  CLI::App* at = &app;
  for (;;) {
    const auto subs = at->get_subcommands();
    if (subs.empty()) return at;
    at = subs.front();
    *program += " " + at->get_name();
  }
}

}  // namespace

Result<int64_t> ParseIntFlag(std::string_view flag, std::string_view value, int64_t min, int64_t max) {
  const std::string range = " in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  size_t i = 0;
  bool negative = false;
  if (i < value.size() && (value[i] == '-' || value[i] == '+')) negative = value[i++] == '-';
  if (i == value.size())
    return Status::InvalidArgument(std::string(flag) + " " + Quote(value) + ": expected an integer" + range);
  // Accumulate negatively so INT64_MIN parses; stop at the first non-digit or overflow.
  int64_t acc = 0;
  for (; i < value.size(); ++i) {
    const char c = value[i];
    if (c < '0' || c > '9')
      return Status::InvalidArgument(std::string(flag) + " " + Quote(value) + ": expected an integer" + range);
    if (acc < (INT64_MIN + (c - '0')) / 10)
      return Status::InvalidArgument(std::string(flag) + " " + Quote(value) + ": out of range, expected" + range);
    acc = acc * 10 - (c - '0');
  }
  if (!negative && acc == INT64_MIN)
    return Status::InvalidArgument(std::string(flag) + " " + Quote(value) + ": out of range, expected" + range);
  const int64_t v = negative ? acc : -acc;
  if (v < min || v > max)
    return Status::InvalidArgument(std::string(flag) + " " + Quote(value) + ": out of range, expected" + range);
  return v;
}

CLI::Option* AddCheckedFlag(CLI::App& app, const std::string& name, std::function<Status(const std::string&)> check,
                            std::string help, std::string value_name) {
  // Every occurrence is checked in order (a repeated flag: the last one counts, or each is kept,
  // as the check decides). CLI11 reports what the callback throws as the parse error; the Status
  // message is all of it.
  return app
      .add_option_function<std::vector<std::string>>(
          name,
          [check = std::move(check)](const std::vector<std::string>& values) {
            for (const std::string& value : values) {
              Status s = check(value);
              if (!s.ok()) throw CLI::ValidationError(s.message());
            }
          },
          std::move(help))
      ->type_name(std::move(value_name))
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
}

CLI::Option* AddIntFlag(CLI::App& app, const std::string& name, int64_t* out, int64_t min, int64_t max,
                        const std::string& help) {
  const std::string flag = FlagName(name);
  return AddCheckedFlag(
      app, name,
      [out, flag, min, max](const std::string& value) -> Status {
        TUNEFARM_ASSIGN_OR_RETURN(*out, ParseIntFlag(flag, value, min, max));
        return Status::OK();
      },
      help + " [" + std::to_string(min) + ", " + std::to_string(max) + "]", "N");
}

CLI::Option* AddIntFlag(CLI::App& app, const std::string& name, int* out, int min, int max, const std::string& help) {
  const std::string flag = FlagName(name);
  return AddCheckedFlag(
      app, name,
      [out, flag, min, max](const std::string& value) -> Status {
        TUNEFARM_ASSIGN_OR_RETURN(int64_t v, ParseIntFlag(flag, value, min, max));
        *out = int(v);
        return Status::OK();
      },
      help + " [" + std::to_string(min) + ", " + std::to_string(max) + "]", "N");
}

Status ParseArguments(CLI::App& app, int argc, const char* const* argv, bool* help) {
  *help = false;
  AllowExtrasEverywhere(app);
  // An argument nobody declared is named first: a mistyped flag (--listn) is why a required one
  // (--listen) is "missing".
  auto undeclared = [&app]() -> Status {
    for (const std::string& extra : app.remaining(true)) {
      return Status::InvalidArgument(extra.size() > 1 && extra[0] == '-' ? "unknown flag " + extra
                                                                         : "unexpected argument " + Quote(extra));
    }
    return Status::OK();
  };
  try {
    app.parse(argc, argv);
    return undeclared();
  } catch (const CLI::CallForHelp&) {
    *help = true;
  } catch (const CLI::ParseError& e) {
    Status s = undeclared();
    return s.ok() ? Status::InvalidArgument(e.what()) : s;
  } catch (const std::exception& e) {  // nothing else is expected from CLI11; never let it escape
    return Status::InvalidArgument(e.what());
  }
  return Status::OK();
}

std::optional<int> ParseCommandLine(CLI::App& app, int argc, const char* const* argv) {
  bool help = false;
  Status s = ParseArguments(app, argc, argv, &help);
  if (help) {
    std::printf("%s", app.help().c_str());  // the chosen subcommand's help when there is one
    return 0;
  }
  if (s.ok()) return std::nullopt;
  std::string program;
  CLI::App* at = Chosen(app, &program);
  std::string usage = CLI::Formatter().make_usage(at, program);
  if (usage.rfind("Usage:", 0) == 0) usage = "usage:" + usage.substr(6);
  while (!usage.empty() && usage.back() == '\n') usage.pop_back();
  std::fprintf(stderr, "%s: %s\n%s\n(%s --help lists every flag)\n", program.c_str(), s.message().c_str(),
               usage.c_str(), program.c_str());
  return 2;
}

}  // namespace tunefarm
