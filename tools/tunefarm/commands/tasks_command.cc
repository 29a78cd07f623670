// tunefarm tasks MODEL [--target T] [--opt-level 0-3] [--json]
#include <cstdio>
#include <nlohmann/json.hpp>

#include "tools/tunefarm/command_table.h"
#include "tools/tunefarm/common_flags.h"
#include "tunefarm/compiler/model.h"

namespace tunefarm::cli {
namespace {

struct TasksFlags {
  std::string model, target = "native";
  int opt_level = 3;
  std::vector<compiler::InputShape> input_shapes;
  bool json = false;
};

int Tasks(const TasksFlags& f) {
  auto target = compiler::ParseTarget(f.target);
  if (!target.ok()) {
    std::fprintf(stderr, "tunefarm tasks: %s\n", target.status().message().c_str());
    return 1;
  }
  // The same graph pipeline as `tunefarm compile --opt-level N`: the tasks are the kernels it tunes.
  auto tasks = compiler::ExtractTasks(f.model, *target, f.opt_level, f.input_shapes);
  if (!tasks.ok()) {
    std::fprintf(stderr, "tunefarm tasks: %s\n", tasks.status().message().c_str());
    return 1;
  }
  if (f.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (size_t i = 0; i < tasks->size(); ++i) {
      const auto& t = (*tasks)[i];
      out.push_back({{"index", i + 1},
                     {"template", t.workload.implementation},
                     {"workload", t.workload.Key()},
                     {"target", target->ToString()},
                     {"count", t.count},
                     {"flops", t.flops},
                     {"config_space_size", t.config_space_size},
                     {"alternative", t.alternative},
                     {"alternative_of", t.default_workload ? t.default_workload->ImplementationKey() : ""},
                     {"nodes", t.nodes}});
    }
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return 0;
  }
  double total = 0;
  for (const auto& t : *tasks) total += t.alternative ? 0 : t.flops * t.count;
  std::printf("%zu tasks for %s on %s (%.1f MFLOP per inference in tuned ops)\n", tasks->size(), f.model.c_str(),
              target->ToString().c_str(), total / 1e6);
  for (size_t i = 0; i < tasks->size(); ++i) {
    const auto& t = (*tasks)[i];
    std::printf("[Task %2zu/%2zu] x%-2d %8.1f MFLOP  space %8lld  %s%s\n", i + 1, tasks->size(), t.count, t.flops / 1e6,
                (long long)t.config_space_size, t.workload.ImplementationKey().c_str(),
                t.alternative ? "  (alternative implementation)" : "");
  }
  return 0;
}

}  // namespace

Action DeclareTasks(CLI::App& app) {
  auto f = std::make_shared<TasksFlags>();
  app.add_option("MODEL", f->model, "an ONNX file or a zoo model (resnet-18, squeezenet-1.1, ...)")->required();
  AddTargetFlag(app, &f->target);
  AddOptLevelFlag(app, &f->opt_level);
  AddInputShapeFlag(app, &f->input_shapes);
  AddJsonFlag(app, &f->json);
  return [f] { return Tasks(*f); };
}

}  // namespace tunefarm::cli
