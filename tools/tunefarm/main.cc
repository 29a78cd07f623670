// tunefarm: the command-line interface (TVMC habits). `tunefarm help` lists the commands.
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/tunefarm/command_table.h"

namespace tunefarm::cli {

bool Args::Has(const std::string& flag) const {
  for (const auto& [name, value] : flags) {
    if (name == flag) return true;
  }
  return false;
}

std::string Args::Get(const std::string& flag, const std::string& def) const {
  for (const auto& [name, value] : flags) {
    if (name == flag) return value;
  }
  return def;
}

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"tasks", "tunefarm tasks MODEL [--target T] [--json]",
       "list the tunable tasks (conv2d, depthwise, dense workloads) of a model", &TasksCommand, {"--json"}},
  };
  return kCommands;
}

namespace {

void PrintHelp() {
  std::printf("usage: tunefarm COMMAND [ARGS]\n\ncommands:\n");
  for (const Command& c : Commands()) std::printf("  %-8s %s\n           %s\n", c.name, c.help, c.usage);
  std::printf("\nThe tune, compile, run, records and tracker commands arrive with their issues.\n");
}

}  // namespace
}  // namespace tunefarm::cli

int main(int argc, char** argv) {
  using namespace tunefarm::cli;  // NOLINT(google-build-using-namespace)
  if (argc < 2 || std::strcmp(argv[1], "help") == 0 || std::strcmp(argv[1], "--help") == 0) {
    PrintHelp();
    return argc < 2 ? 2 : 0;
  }
  for (const Command& c : Commands()) {
    if (c.name != std::string(argv[1])) continue;
    Args args;
    for (int i = 2; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0) {
        args.positional.push_back(a);
        continue;
      }
      bool is_switch = false;
      for (const auto& s : c.switches) is_switch = is_switch || s == a;
      if (is_switch) {
        args.flags.emplace_back(a, "");
      } else if (i + 1 < argc) {
        args.flags.emplace_back(a, argv[++i]);
      } else {
        std::fprintf(stderr, "tunefarm %s: flag %s needs a value\nusage: %s\n", c.name, a.c_str(), c.usage);
        return 2;
      }
    }
    return c.handler(args);
  }
  std::fprintf(stderr, "tunefarm: unknown command '%s' (try: tunefarm help)\n", argv[1]);
  return 2;
}
