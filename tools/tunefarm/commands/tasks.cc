// tunefarm tasks MODEL [--target T] [--opt-level 0-3] [--json]
#include <cstdio>

#include <nlohmann/json.hpp>

#include "tools/tunefarm/command_table.h"
#include "tunefarm/compiler/model.h"

namespace tunefarm::cli {

int TasksCommand(const Args& args) {
  const char* usage = "usage: tunefarm tasks MODEL [--target T] [--opt-level 0-3] [--json]";
  for (const auto& [flag, value] : args.flags) {
    if (flag != "--target" && flag != "--json" && flag != "--opt-level") {
      std::fprintf(stderr, "tunefarm tasks: unknown flag %s\n%s\n", flag.c_str(), usage);
      return 2;
    }
  }
  if (args.positional.size() != 1) {
    std::fprintf(stderr, "tunefarm tasks: expected one MODEL\n%s\n", usage);
    return 2;
  }
  auto target = compiler::ParseTarget(args.Get("--target", "native"));
  if (!target.ok()) {
    std::fprintf(stderr, "tunefarm tasks: %s\n", target.status().message().c_str());
    return 1;
  }
  // The same graph pipeline as `tunefarm compile --opt-level N`: the tasks are the kernels it tunes.
  const std::string level = args.Get("--opt-level", "3");
  if (level.size() != 1 || level[0] < '0' || level[0] > '3') {
    std::fprintf(stderr, "tunefarm tasks: --opt-level must be 0, 1, 2 or 3, got '%s'\n", level.c_str());
    return 2;
  }
  auto tasks = compiler::ExtractTasks(args.positional[0], *target, level[0] - '0');
  if (!tasks.ok()) {
    std::fprintf(stderr, "tunefarm tasks: %s\n", tasks.status().message().c_str());
    return 1;
  }
  if (args.Has("--json")) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (size_t i = 0; i < tasks->size(); ++i) {
      const auto& t = (*tasks)[i];
      out.push_back({{"index", i + 1},
                     {"template", t.workload.template_name},
                     {"workload", t.workload.Key()},
                     {"target", target->ToString()},
                     {"count", t.count},
                     {"flops", t.flops},
                     {"config_space_size", t.config_space_size},
                     {"alternative", t.alternative},
                     {"alternative_of", t.default_workload},
                     {"nodes", t.nodes}});
    }
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return 0;
  }
  double total = 0;
  for (const auto& t : *tasks) total += t.alternative ? 0 : t.flops * t.count;
  std::printf("%zu tasks for %s on %s (%.1f MFLOP per inference in tuned ops)\n", tasks->size(),
              args.positional[0].c_str(), target->ToString().c_str(), total / 1e6);
  for (size_t i = 0; i < tasks->size(); ++i) {
    const auto& t = (*tasks)[i];
    std::printf("[Task %2zu/%2zu] x%-2d %8.1f MFLOP  space %8lld  %s%s\n", i + 1, tasks->size(), t.count, t.flops / 1e6,
                (long long)t.config_space_size, t.workload.Key().c_str(), t.alternative ? "  (alternative implementation)" : "");
  }
  return 0;
}

}  // namespace tunefarm::cli
