// tunefarm ops [--markdown]: the ONNX operators tunefarm compiles (its operator registry).
#include <cstdio>

#include "tools/tunefarm/command_table.h"
#include "tunefarm/compiler/operators.h"

namespace tunefarm::cli {

int OpsCommand(const Args& args) {
  for (const auto& [flag, value] : args.flags) {
    if (flag != "--markdown") {
      std::fprintf(stderr, "tunefarm ops: unknown flag %s\nusage: tunefarm ops [--markdown]\n", flag.c_str());
      return 2;
    }
  }
  if (!args.positional.empty()) {
    std::fprintf(stderr, "tunefarm ops: takes no arguments\nusage: tunefarm ops [--markdown]\n");
    return 2;
  }
  if (args.Has("--markdown")) {
    std::printf("%s", compiler::OperatorSupportMarkdown().c_str());
    return 0;
  }
  const auto names = compiler::SupportedOperators();
  std::printf("%zu ONNX operators (default domain, opsets 1-21):\n", names.size());
  for (size_t i = 0; i < names.size(); ++i) std::printf("%s%s", names[i].c_str(), i + 1 == names.size() ? "\n" : (i % 8 == 7 ? "\n" : ", "));
  return 0;
}

}  // namespace tunefarm::cli
