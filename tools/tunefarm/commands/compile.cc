// tunefarm compile MODEL --target T [--records DB|none] [--opt-level N] -o OUT
#include <cstdio>

#include "tools/tunefarm/command_table.h"
#include "tunefarm/runtime/atomic_file.h"
#include "tools/tunefarm/records_option.h"
#include "tunefarm/compiler/compile.h"

namespace tunefarm::cli {

int CompileCommand(const Args& args) {
  const char* usage = "usage: tunefarm compile MODEL --target T [--records DB|none] [--opt-level 0-3] -o OUT";
  for (const auto& [flag, value] : args.flags) {
    if (flag != "--target" && flag != "--records" && flag != "--opt-level" && flag != "-o" && flag != "--output") {
      std::fprintf(stderr, "tunefarm compile: unknown flag %s\n%s\n", flag.c_str(), usage);
      return 2;
    }
  }
  if (args.positional.size() != 1) {
    std::fprintf(stderr, "tunefarm compile: expected one MODEL\n%s\n", usage);
    return 2;
  }
  std::string out = args.Get("-o", args.Get("--output", ""));
  if (out.empty()) {
    std::fprintf(stderr, "tunefarm compile: missing -o OUT\n%s\n", usage);
    return 2;
  }
  std::string level_text = args.Get("--opt-level", "3");
  if (level_text.size() != 1 || level_text[0] < '0' || level_text[0] > '3') {
    std::fprintf(stderr, "tunefarm compile: --opt-level takes 0, 1, 2 or 3, got '%s'\n%s\n", level_text.c_str(), usage);
    return 2;
  }
  auto target = compiler::ParseTarget(args.Get("--target", "native"));
  if (!target.ok()) {
    std::fprintf(stderr, "tunefarm compile: %s\n", target.status().message().c_str());
    return 1;
  }
  auto records = OpenRecordsForCompile(args.Get("--records", ""));
  if (!records.ok()) {
    std::fprintf(stderr, "tunefarm compile: %s\n", records.status().message().c_str());
    return 1;
  }
  compiler::CompileOptions options;
  options.opt_level = level_text[0] - '0';
  options.configs = records->get();
  // --records none asks for the fallback configs: no warning per workload (the summary line says
  // "0 from records").
  if (args.Get("--records", "") == "none") options.warn = [](const std::string&) {};
  // Refused before the compile, not after it: -o /dev/null, a FIFO, a directory, a symlink.
  if (Status s = CheckWritableRegularPath(out); !s.ok()) {
    std::fprintf(stderr, "tunefarm compile: -o: %s\n", s.message().c_str());
    return 2;
  }
  compiler::CompileStats stats;
  auto artifact = compiler::CompileModel(args.positional[0], *target, options, &stats);
  if (!artifact.ok()) {
    std::fprintf(stderr, "tunefarm compile: %s\n", artifact.status().message().c_str());
    return 1;
  }
  Status s = artifact->WriteFile(out);
  if (!s.ok()) {
    std::fprintf(stderr, "tunefarm compile: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("compiled %s for %s at opt level %d: %d kernels (%d tunable, %d from records) in %.2f s -> %s\n",
              args.positional[0].c_str(), target->ToString().c_str(), options.opt_level, stats.kernels,
              stats.tunable_kernels, stats.from_records, stats.total_ms / 1000.0, out.c_str());
  return 0;
}

}  // namespace tunefarm::cli
