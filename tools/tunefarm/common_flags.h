// The flags several `tunefarm` commands share, declared in one place so each reads and explains
// them the same way: --target, --opt-level, --records, --json, --input-shape, the token and TLS files.
#ifndef TUNEFARM_TOOLS_TUNEFARM_COMMON_FLAGS_H_
#define TUNEFARM_TOOLS_TUNEFARM_COMMON_FLAGS_H_

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/command_line/command_line.h"
#include "tunefarm/compiler/input_shape.h"

namespace tunefarm::cli {

// The target string as compiler::ParseTarget reads it (checked by the command, which reports the
// compiler's message); *out keeps its default when the flag is absent.
CLI::Option* AddTargetFlag(CLI::App& app, std::string* out);
CLI::Option* AddOptLevelFlag(CLI::App& app, int* out);  // 0-3, default 3
// --records DB; `help` says what the command does with it.
CLI::Option* AddRecordsFlag(CLI::App& app, std::string* out, const std::string& help);
CLI::Option* AddJsonFlag(CLI::App& app, bool* out);
// --threads N for tune and compile: the thread count records are measured at and applied for
// (a config tuned for one core can lose on two). *out stays 0 when the flag is absent: the command
// then takes tuner::DefaultThreads.
CLI::Option* AddThreadsFlag(CLI::App& app, int* out, const std::string& what);
// --input-shape NAME:DIMS, repeatable (compiler::ParseInputShape checks each as it is parsed).
CLI::Option* AddInputShapeFlag(CLI::App& app, std::vector<compiler::InputShape>* out);

// A command whose first argument picks an action (records list|best|..., jobs list|watch|cancel):
// each action a subcommand of `app` with its own flags, one of them required; the chosen one's name
// goes to *chosen once parsed. Returns them by name, in order, for the flags each declares.
std::vector<std::pair<std::string, CLI::App*>> AddActions(
    CLI::App& app, std::initializer_list<std::pair<const char*, const char*>> name_and_help, std::string* chosen);

struct FarmClientFlags {
  std::string token_file, tls_cert, tls_key, tls_ca;
};
// --token-file (else $TUNEFARM_TOKEN) and, with `tls`, the --tls-* files of mutual TLS.
void AddFarmClientFlags(CLI::App& app, FarmClientFlags* out, bool tls);

}  // namespace tunefarm::cli

#endif  // TUNEFARM_TOOLS_TUNEFARM_COMMON_FLAGS_H_
