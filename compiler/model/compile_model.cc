// The model compiler's driver: graph passes by opt level, lowering, then the target's backend emits
// the library (backend/backend.h).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "compiler/backend/backend.h"
#include "compiler/codegen/codegen_llvm.h"
#include "compiler/frontend/zoo.h"
#include "compiler/ir/ir_equality.h"
#include "compiler/model/check_size_independent.h"
#include "compiler/model/compile_graph.h"
#include "compiler/model/lower_graph.h"
#include "compiler/model/lowering/follow_symbolic_dim.h"
#include "compiler/model/passes/pipeline.h"
#include "compiler/passes/lower.h"
#include "tunefarm/runtime/executor.h"
#include "tunefarm/runtime/no_throw.h"

namespace tunefarm::compiler {
namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

graph::ConstantData FromBytes(graph::DataType dtype, const std::vector<int64_t>& shape, const void* data) {
  graph::ConstantData c{dtype, shape, {}, {}};
  const int64_t n = c.num_elements();
  if (dtype == graph::DataType::kFloat32) {
    c.f32.resize(size_t(n));
    std::memcpy(c.f32.data(), data, size_t(n) * 4);
    return c;
  }
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case graph::DataType::kInt64: {
        int64_t v;
        std::memcpy(&v, bytes + i * 8, 8);
        c.i64.push_back(v);
        break;
      }
      case graph::DataType::kInt32: {
        int32_t v;
        std::memcpy(&v, bytes + i * 4, 4);
        c.i64.push_back(v);
        break;
      }
      case graph::DataType::kInt8:
        c.i64.push_back(int8_t(bytes[i]));
        break;
      default:
        c.i64.push_back(bytes[i]);
        break;
    }
  }
  return c;
}

std::string SymbolFor(size_t index, const std::string& op) {
  std::string s = "tf_k" + std::to_string(index) + "_";
  for (char c : op) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

// Lowers the plan's kernels and emits them as the artifact's library (the target's backend: a
// shared object, or one PTX module).
Result<std::string> BuildLibrary(ModelPlan* plan, const Target& target, const Backend& backend,
                                 const CompileOptions& options, CompileStats* stats) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<KernelSource> sources;
  // Host kernels that lower to the same function (the same operator on the same shapes: a repeated
  // block, a long element-wise chain) are emitted once and share a symbol: LLVM's time is most of
  // a compile, and it grew with every copy (3.3 ms a node on a 20,000-node model).
  std::unordered_map<size_t, std::vector<size_t>> emitted_by_hash;  // hash -> indices into sources
  for (size_t i = 0; i < plan->kernels.size(); ++i) {
    PlannedKernel& k = plan->kernels[i];
    std::string symbol = SymbolFor(i, k.op);
    passes::LowerOptions lower;
    lower.auto_unroll_max_step = k.def.auto_unroll_max_step;
    KernelSource source;
    TUNEFARM_ASSIGN_OR_RETURN(
        source.func, passes::Lower(*k.def.schedule, k.def.args, symbol, target, backend.lowering_steps(), lower));
    if (source.func.form == passes::KernelForm::kLoopNest) {
      std::vector<size_t>& same_hash = emitted_by_hash[ir::StructuralHash(source.func.buffers, source.func.body)];
      for (size_t j : same_hash) {
        const passes::LoweredFunc& other = sources[j].func;
        if (ir::StructuralEqual(source.func.buffers, source.func.body, other.buffers, other.body)) {
          symbol = other.name;
          break;
        }
      }
      if (symbol == source.func.name) same_hash.push_back(sources.size());
    }
    if (symbol == source.func.name) {
      source.metadata_json = "{\"symbol\":\"" + symbol + "\",\"op\":\"" + k.op + "\"}";
      sources.push_back(std::move(source));
    }
    runtime::ArtifactKernel ak;
    ak.symbol = symbol;
    ak.op = k.op;
    ak.args = k.args;
    if (k.workload) ak.workload = k.workload->ImplementationKey();  // the artifact's form
    ak.config_index = k.config_index;
    ak.config_origin = k.config_origin;
    ak.run_if = k.run_if;
    ak.index_checks = k.index_checks;
    ak.condition_checks = k.condition_checks;
    if (!sources.empty() && sources.back().func.form == passes::KernelForm::kThreadProgram) {  // never shared
      ak.grid = sources.back().func.launch.grid;
      ak.block = sources.back().func.launch.block;
      ak.shared_bytes = sources.back().func.launch.shared_bytes;
    }
    plan->artifact.kernels.push_back(std::move(ak));
  }
  stats->lower_ms = MsSince(t0);
  if (sources.empty()) return std::string();
  LibraryStats emitted;
  LibraryOptions library_options;
  library_options.toolchain_linker = options.toolchain_linker;
  auto library = backend.EmitLibrary(std::move(sources), target, library_options, &emitted);
  stats->codegen_ms = emitted.codegen_ms;
  stats->link_ms = emitted.link_ms;
  return library;
}

}  // namespace

Result<runtime::Artifact> CompileGraph(graph::Graph g, const std::string& model_name, const Target& target,
                                       const CompileOptions& options, CompileStats* stats_out) {
  const Backend& backend = BackendFor(target);
  // Emulated CUDA kernels are host code; real ones PTX for the target.
  const Target code_target = backend.CodeTarget(target);
  CompileStats stats;
  auto start = std::chrono::steady_clock::now();
  OptimizeOptions optimize;
  optimize.evaluate_constants = HostConstantEvaluator();
  std::optional<graph::Graph> unoptimized;
  if (g.symbolic_dim) {
    if (backend.lowering_steps() != passes::StepList::kCpu) {
      return Status::Unimplemented(model_name + ": '" + g.symbolic_dim->name + "' is kept symbolic (a range in " +
                                   "--input-shape), which CPU targets support so far; compile for " +
                                   target.ToString() + " with one size");
    }
    unoptimized = g;
  }
  TUNEFARM_RETURN_IF_ERROR(Optimize(&g, options.opt_level, target, optimize).WithContext(model_name));
  if (unoptimized) {
    // Fixed shapes fold what the model computes from the size: optimize at other sizes and compare.
    for (int64_t size : ProbeSizes(*g.symbolic_dim)) {
      graph::Graph at_size = WithSize(*unoptimized, size);
      TUNEFARM_RETURN_IF_ERROR(Optimize(&at_size, options.opt_level, target, optimize).WithContext(model_name));
      TUNEFARM_RETURN_IF_ERROR(CheckSizeIndependent(g, at_size, size).WithContext(model_name));
    }
  }
  stats.optimize_ms = MsSince(start);

  LowerGraphOptions lower;
  lower.backend = &backend;
  lower.plan_layouts = backend.PlansLayouts(options.opt_level);
  lower.configs = options.configs;
  lower.warn =
      options.warn ? options.warn : [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  auto plan = LowerGraph(g, target, lower);
  if (!plan.ok()) return plan.status().WithContext(model_name);
  TUNEFARM_RETURN_IF_ERROR(lowering::FollowSymbolicDim(&*plan).WithContext(model_name));
  for (const PlannedKernel& k : plan->kernels) {
    if (k.workload) stats.tunable_nodes.push_back({k.node, k.workload->implementation, k.config_origin});
  }
  TUNEFARM_ASSIGN_OR_RETURN(std::string library, BuildLibrary(&*plan, target, backend, options, &stats));
  runtime::Artifact artifact = std::move(plan->artifact);
  backend.DescribeCode(code_target, &artifact);
  artifact.library = std::move(library);
  artifact.model = model_name;
  artifact.opt_level = options.opt_level;
  artifact.threads = options.threads;
  stats.kernels = int(artifact.kernels.size());
  stats.tunable_kernels = plan->tunable_kernels;
  stats.from_records = plan->from_records;
  stats.layouts = plan->layouts;
  stats.total_ms = MsSince(start);
  if (stats_out) *stats_out = stats;
  TUNEFARM_RETURN_IF_ERROR(artifact.Validate());
  return artifact;
}

graph::ConstantEvaluator HostConstantEvaluator() {
  return [](graph::Graph one_node, std::vector<graph::ConstantData>* outputs) {
    std::vector<graph::DataType> dtypes;
    for (int out : one_node.outputs) dtypes.push_back(one_node.values[size_t(out)].dtype);
    CompileOptions options;
    options.opt_level = 0;
    options.warn = [](const std::string&) {};
    auto artifact = CompileGraph(std::move(one_node), "constant folding", HostTarget(), options);
    if (!artifact.ok()) return false;
    auto ex = runtime::Executor::Load(std::move(*artifact));
    if (!ex.ok() || !(*ex)->Run().ok()) return false;
    for (size_t k = 0; k < dtypes.size(); ++k) {
      outputs->push_back(FromBytes(dtypes[k], (*ex)->outputs()[k].shape, (*ex)->Output(k)));
    }
    return true;
  };
}

Result<runtime::Artifact> CompileModel(const std::string& model, const Target& target, const CompileOptions& options,
                                       CompileStats* stats) {
  return NoThrow("compiling " + model, [&]() -> Result<runtime::Artifact> {
    TUNEFARM_ASSIGN_OR_RETURN(graph::Graph g, frontend::LoadModel(model, options.input_shapes));
    return CompileGraph(std::move(g), model, target, options, stats);
  });
}

}  // namespace tunefarm::compiler
