// How every tunefarm program declares and reads its command line: with CLI11. Each flag and
// positional is declared once, with its help text, on a CLI::App; the usage line, `--help` and every
// parse error come from that one declaration (no usage text written out by hand).
//
// Contract:
//  - ParseIntFlag accepts an optional sign and decimal digits only, within [min, max]; the error
//    names the flag, the value and the range ("--threads '0': out of range, expected in [1, 1024]").
//  - AddIntFlag declares an integer flag checked by ParseIntFlag (the same message at parse time).
//  - AddCheckedFlag declares a flag whose value a function checks and stores; the function's Status
//    message is the whole error.
//  - ParseArguments never throws and prints nothing: OK (with *help set when `--help` was asked),
//    or an InvalidArgument whose message is what is wrong. Arguments nobody declared are named:
//    "unknown flag --frob", "unexpected argument 'x'".
//  - ParseCommandLine (ParseArguments, then printing) never throws. It returns std::nullopt when the program should go
//  on, else the
//    exit code: 0 after printing the help asked for (`--help` of the program or of a subcommand),
//    2 after printing "PROGRAM: what is wrong", the usage line and where the full help is. PROGRAM
//    is the app's name and the subcommand chosen ("tunefarm compile").
#ifndef TUNEFARM_COMMAND_LINE_COMMAND_LINE_H_
#define TUNEFARM_COMMAND_LINE_COMMAND_LINE_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "tunefarm/runtime/result.h"

namespace tunefarm {

Result<int64_t> ParseIntFlag(std::string_view flag, std::string_view value, int64_t min, int64_t max);

// `name` is CLI11's ("--threads", "-o,--output"); the help text gets the range appended.
CLI::Option* AddIntFlag(CLI::App& app, const std::string& name, int64_t* out, int64_t min, int64_t max,
                        const std::string& help);
CLI::Option* AddIntFlag(CLI::App& app, const std::string& name, int* out, int min, int max, const std::string& help);

// `check(value)` validates and stores one value; the flag's type shows as `value_name` in the help.
CLI::Option* AddCheckedFlag(CLI::App& app, const std::string& name, std::function<Status(const std::string&)> check,
                            std::string help, std::string value_name = "TEXT");

Status ParseArguments(CLI::App& app, int argc, const char* const* argv, bool* help);
std::optional<int> ParseCommandLine(CLI::App& app, int argc, const char* const* argv);

}  // namespace tunefarm

#endif  // TUNEFARM_COMMAND_LINE_COMMAND_LINE_H_
