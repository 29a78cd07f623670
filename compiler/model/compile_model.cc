// The model compiler's driver: graph passes by opt level, lowering, parallel codegen, linking.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "compiler/codegen/codegen_llvm.h"
#include "compiler/codegen/codegen_nvptx.h"
#include "compiler/codegen/object_emitter.h"
#include "compiler/frontend/zoo.h"
#include "compiler/ir/ir_equality.h"
#include "compiler/model/compile_graph.h"
#include "compiler/model/lower_graph.h"
#include "compiler/model/optimize.h"
#include "compiler/passes/lower.h"

namespace tunefarm::compiler {
namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string SymbolFor(size_t index, const std::string& op) {
  std::string s = "tf_k" + std::to_string(index) + "_";
  for (char c : op) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Lowers and compiles the kernels into objects, split across the machine's cores (each LLVM
// context is independent), then links one shared library.
// `target` is what the kernels are lowered for; `code_target` what the code runs on (the host when
// CUDA kernels are emulated).
Result<std::string> BuildLibrary(ModelPlan* plan, const Target& target, const Target& code_target,
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
    TUNEFARM_ASSIGN_OR_RETURN(source.func, passes::Lower(*k.def.schedule, k.def.args, symbol, target, lower));
    if (!source.func.is_gpu) {
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
    ak.workload = k.workload;
    ak.config_index = k.config_index;
    ak.config_source = k.config_source;
    ak.run_if = k.run_if;
    if (!sources.empty() && sources.back().func.is_gpu) {  // GPU kernels are never shared
      ak.grid = sources.back().func.launch.grid;
      ak.block = sources.back().func.launch.block;
      ak.shared_bytes = sources.back().func.launch.shared_bytes;
    }
    plan->artifact.kernels.push_back(std::move(ak));
  }
  stats->lower_ms = MsSince(t0);
  if (sources.empty()) return std::string();

  if (target.is_cuda() && !target.emulated) {
    // One PTX module; ptxas (when the toolkit is here) checks every kernel against the register file.
    t0 = std::chrono::steady_clock::now();
    std::map<std::string, int64_t> threads;
    for (const KernelSource& src : sources) threads[src.func.name] = src.func.launch.threads_per_block();
    TUNEFARM_ASSIGN_OR_RETURN(std::string ptx, EmitPtx(sources, target));
    stats->codegen_ms = MsSince(t0);
    t0 = std::chrono::steady_clock::now();
    TUNEFARM_RETURN_IF_ERROR(CheckPtxRegisters(ptx, target, threads).status());
    stats->link_ms = MsSince(t0);
    return ptx;
  }

  t0 = std::chrono::steady_clock::now();
  const size_t parts = std::min<size_t>(sources.size(), std::max(1u, std::min(4u, std::thread::hardware_concurrency())));
  std::vector<std::vector<KernelSource>> chunks(parts);
  for (size_t i = 0; i < sources.size(); ++i) chunks[i % parts].push_back(std::move(sources[i]));
  std::vector<Result<std::string>> objects(parts, Status::Internal("not built"));
  std::vector<std::thread> workers;
  for (size_t p = 0; p < parts; ++p) {
    workers.emplace_back([&, p] { objects[p] = EmitObject(chunks[p], code_target); });
  }
  for (auto& w : workers) w.join();
  stats->codegen_ms = MsSince(t0);

  t0 = std::chrono::steady_clock::now();
  static std::atomic<int> counter{0};
  const char* tmpdir = std::getenv("TMPDIR");
  std::string base = std::string(tmpdir ? tmpdir : "/tmp") + "/tunefarm-compile-" + std::to_string(getpid()) + "-" +
                     std::to_string(counter++);
  std::vector<std::string> paths;
  Status status = Status::OK();
  for (size_t p = 0; p < parts && status.ok(); ++p) {
    if (!objects[p].ok()) {
      status = objects[p].status();
      break;
    }
    paths.push_back(base + "-" + std::to_string(p) + ".o");
    std::ofstream out(paths.back(), std::ios::binary);
    out.write(objects[p]->data(), std::streamsize(objects[p]->size()));
    if (!out) status = Status::IOError("cannot write " + paths.back());
  }
  std::string so_path = base + ".so";
  if (status.ok()) status = LinkSharedLibrary(paths, code_target, so_path, options.toolchain_linker);
  Result<std::string> library = status.ok() ? ReadFile(so_path) : Result<std::string>(status);
  for (const auto& p : paths) std::remove(p.c_str());
  std::remove(so_path.c_str());
  stats->link_ms = MsSince(t0);
  return library;
}

}  // namespace

Result<runtime::Artifact> CompileGraph(graph::Graph g, const std::string& model_name, const Target& target,
                                       const CompileOptions& options, CompileStats* stats_out) {
  const bool cuda = target.is_cuda();
  // Emulated CUDA kernels are host code; real ones PTX for the target.
  const Target code_target = cuda && target.emulated ? HostTarget() : target;
  CompileStats stats;
  auto start = std::chrono::steady_clock::now();
  TUNEFARM_RETURN_IF_ERROR(Optimize(&g, options.opt_level, target).WithContext(model_name));
  stats.optimize_ms = MsSince(start);

  LowerGraphOptions lower;
  lower.plan_layouts = PlansLayouts(target, options.opt_level);
  lower.configs = options.configs;
  lower.warn = options.warn ? options.warn : [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  auto plan = LowerGraph(g, target, lower);
  if (!plan.ok()) return plan.status().WithContext(model_name);
  for (const PlannedKernel& k : plan->kernels) {
    if (k.workload.empty()) continue;
    stats.tunable_nodes.push_back({k.node, k.workload.substr(0, k.workload.find('|')), k.config_source});
  }
  TUNEFARM_ASSIGN_OR_RETURN(std::string library, BuildLibrary(&*plan, target, code_target, options, &stats));
  runtime::Artifact artifact = std::move(plan->artifact);
  artifact.target = code_target.ToString();
  artifact.device = cuda && !target.emulated ? "cuda" : "cpu";
  if (!artifact.is_cuda()) {
    artifact.triple = code_target.triple;
    artifact.cpu = code_target.cpu;
    artifact.cpu_features = RequiredCpuFeatures(code_target);
  }
  artifact.library = std::move(library);
  artifact.model = model_name;
  artifact.opt_level = options.opt_level;
  stats.kernels = int(artifact.kernels.size());
  stats.tunable_kernels = plan->tunable_kernels;
  stats.from_records = plan->from_records;
  stats.layouts = plan->layouts;
  stats.total_ms = MsSince(start);
  if (stats_out) *stats_out = stats;
  TUNEFARM_RETURN_IF_ERROR(artifact.Validate());
  return artifact;
}

Result<runtime::Artifact> CompileModel(const std::string& model, const Target& target, const CompileOptions& options,
                                       CompileStats* stats) {
  TUNEFARM_ASSIGN_OR_RETURN(graph::Graph g, frontend::LoadModel(model, options.input_shapes));
  return CompileGraph(std::move(g), model, target, options, stats);
}

}  // namespace tunefarm::compiler
