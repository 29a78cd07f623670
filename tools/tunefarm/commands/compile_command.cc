// tunefarm compile MODEL --target T [--records DB|none] [--opt-level N] [--threads N] -o OUT
#include <algorithm>
#include <cstdio>
#include <map>

#include "tools/tunefarm/command_table.h"
#include "tools/tunefarm/common_flags.h"
#include "tools/tunefarm/records_option.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/runtime/atomic_file.h"
#include "tunefarm/tuner/tuning_job.h"

namespace tunefarm::cli {
namespace {

struct CompileFlags {
  std::string model, target = "native", records, output;
  int opt_level = 3, threads = 0;
  std::vector<compiler::InputShape> input_shapes;
};

int Compile(const CompileFlags& f) {
  auto target = compiler::ParseTarget(f.target);
  if (!target.ok()) {
    std::fprintf(stderr, "tunefarm compile: %s\n", target.status().message().c_str());
    return 1;
  }
  const int threads = f.threads > 0 ? f.threads : tuner::DefaultThreads(f.target == "native");
  auto records = OpenRecordsForCompile(f.records, threads);
  if (!records.ok()) {
    std::fprintf(stderr, "tunefarm compile: %s\n", records.status().message().c_str());
    return 1;
  }
  compiler::CompileOptions options;
  options.opt_level = f.opt_level;
  options.input_shapes = f.input_shapes;
  options.configs = records->get();
  options.threads = threads;
  // Refused before the compile, not after it: -o /dev/null, a FIFO, a directory, a symlink.
  if (Status s = CheckWritableRegularPath(f.output); !s.ok()) {
    std::fprintf(stderr, "tunefarm compile: -o: %s\n", s.message().c_str());
    return 2;
  }
  compiler::CompileStats stats;
  auto artifact = compiler::CompileModel(f.model, *target, options, &stats);
  if (!artifact.ok()) {
    std::fprintf(stderr, "tunefarm compile: %s\n", artifact.status().message().c_str());
    return 1;
  }
  Status s = artifact->WriteFile(f.output);
  if (!s.ok()) {
    std::fprintf(stderr, "tunefarm compile: %s\n", s.message().c_str());
    return 1;
  }
  std::printf(
      "compiled %s for %s at opt level %d, %d thread%s: %d kernels (%d tunable, %d from records) in %.2f s -> %s\n",
      f.model.c_str(), target->ToString().c_str(), options.opt_level, threads, threads == 1 ? "" : "s", stats.kernels,
      stats.tunable_kernels, stats.from_records, stats.total_ms / 1000.0, f.output.c_str());
  // Which implementation each tunable node runs: Winograd or direct convolution is chosen per
  // node, by the records or (untuned) by the estimate of each implementation's fallback.
  std::map<std::string, int> per_implementation;
  for (const auto& n : stats.tunable_nodes)
    ++per_implementation[n.implementation + " (" + runtime::ConfigOriginName(n.config_origin) + ")"];
  std::string counts;
  for (const auto& [name, count] : per_implementation)
    counts += (counts.empty() ? "" : ", ") + std::to_string(count) + " " + name;
  std::printf("implementations: %s\n", counts.c_str());
  if (const auto& dim = artifact->symbolic_dim) {
    std::printf(
        "symbolic: '%s' in [%lld, %lld], one artifact for every size; memory planned for %lld "
        "(docs/dynamic_shapes.md)\n",
        dim->name.c_str(), static_cast<long long>(dim->min), static_cast<long long>(dim->max),
        static_cast<long long>(dim->max));
  }
  if (stats.layouts.ran) {
    // Estimates: the records' kernel times plus layout changes priced by their bytes.
    const auto& l = stats.layouts;
    std::printf(
        "layouts: planned over the graph with records for %d tunable nodes; %d run another config than their "
        "own fastest record; estimated %.3f ms incl. %.3f ms of layout changes (per-node choice: %.3f ms incl. "
        "%.3f ms)%s\n",
        l.planned, l.changed, l.planned_ms, l.planned_transform_ms, l.per_node_ms, l.per_node_transform_ms,
        l.exact ? "" : "; too many combinations to search them all: the cheapest 4096 were kept at each step");
  }
  size_t width = 4;
  for (const auto& n : stats.tunable_nodes) width = std::max(width, n.node.size());
  for (const auto& n : stats.tunable_nodes) {
    std::printf("  %-*s  %-24s %s\n", int(width), n.node.c_str(), n.implementation.c_str(),
                runtime::ConfigOriginName(n.config_origin));
  }
  return 0;
}

}  // namespace

Action DeclareCompile(CLI::App& app) {
  auto f = std::make_shared<CompileFlags>();
  app.add_option("MODEL", f->model, "an ONNX file or a zoo model (resnet-18, squeezenet-1.1, ...)")->required();
  app.add_option("-o,--output", f->output, "the artifact to write (a regular file; replaced atomically)")
      ->type_name("OUT")
      ->required();
  AddTargetFlag(app, &f->target);
  AddRecordsFlag(
      app, &f->records,
      "apply the best records of this database (default ./tunefarm.db when it exists; none: fallback configs only)");
  AddOptLevelFlag(app, &f->opt_level);
  AddThreadsFlag(app, &f->threads,
                 "the thread count to compile for: records measured at it are applied, and `run` defaults to it");
  AddInputShapeFlag(app, &f->input_shapes);
  return [f] { return Compile(*f); };
}

}  // namespace tunefarm::cli
