// The public kernel-building API (tunefarm/compiler/kernel.h): template -> schedule -> Lower ->
// LLVM, with the metadata every kernel carries.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/backend/backend.h"
#include "compiler/codegen/codegen_nvptx.h"
#include "compiler/codegen/object_emitter.h"
#include "compiler/features/loop_nest_features.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/schedule/op_template.h"
#include "compiler/schedule/template_table.h"
#include "compiler/schedule/templates/template_util.h"
#include "tunefarm/compiler/kernel.h"

namespace tunefarm::compiler {
namespace {

// Adds each phase's wall time to BuildOptions::times (when the caller asked for it).
class PhaseClock {
 public:
  explicit PhaseClock(BuildOptions::Times* times) : times_(times), last_(std::chrono::steady_clock::now()) {}
  void Lap(double BuildOptions::Times::*phase) {
    const auto now = std::chrono::steady_clock::now();
    if (times_) times_->*phase += std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
  }

 private:
  BuildOptions::Times* times_;
  std::chrono::steady_clock::time_point last_;
};

std::string DefaultSymbol(const KernelSpec& spec, int64_t index) {
  size_t h = std::hash<std::string>()(spec.workload.ImplementationKey() + "#" + spec.epilogue.ToString() + "#" +
                                      std::to_string(index));
  char buf[32];
  std::snprintf(buf, sizeof(buf), "_%016zx", h);
  return spec.workload.implementation + buf;
}

Status CheckSymbol(const std::string& s) {
  bool ok = !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0]));
  for (char ch : s) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  if (!ok) return Status::InvalidArgument("kernel symbol '" + s + "' is not a C identifier");
  return Status::OK();
}

struct Lowered {
  KernelSource source;
  KernelInfo info;
};

Result<Lowered> LowerSpec(const KernelSpec& spec, const BuildOptions& options) {
  TUNEFARM_ASSIGN_OR_RETURN(const OpTemplate* tmpl, FindTemplate(spec.workload.implementation));
  TUNEFARM_RETURN_IF_ERROR(tmpl->Check(spec.workload));
  TUNEFARM_RETURN_IF_ERROR(CheckImplementation(spec.workload, spec.target));
  ConfigSpace space = tmpl->Space(spec.workload, spec.target);
  int64_t index = spec.config_index;
  if (index < 0) {
    TUNEFARM_ASSIGN_OR_RETURN(Config fb, tmpl->Fallback(spec.workload, spec.target, space));
    index = fb.index();
  }
  TUNEFARM_ASSIGN_OR_RETURN(Config cfg, space.Get(index));
  const Backend& backend = BackendFor(spec.target);
  // On a GPU the launch verifier, run below, names the limit a config breaks; the space's filter
  // is its cheap estimate. On a CPU the filter is the whole check.
  const bool filtered_out = !space.IsValid(cfg);
  if (filtered_out && !backend.VerifiesRefusedConfigs()) {
    return Status::InvalidArgument("config index " + std::to_string(index) + " is not a valid point of " +
                                   space.description() + " (its register tile does not fit the target)");
  }
  std::string symbol = spec.symbol.empty() ? DefaultSymbol(spec, index) : spec.symbol;
  TUNEFARM_RETURN_IF_ERROR(CheckSymbol(symbol));
  KernelDef def = tmpl->Instantiate(spec.workload, spec.epilogue, cfg, spec.target);

  std::vector<passes::PassTiming> timings;
  passes::LowerOptions lower_options;
  lower_options.dump_after = options.dump_after;
  lower_options.dump = options.dump;
  lower_options.timings = options.pass_times ? &timings : nullptr;
  lower_options.stop_after = options.stop_after;
  lower_options.auto_unroll_max_step = def.auto_unroll_max_step;
  Lowered out;
  TUNEFARM_ASSIGN_OR_RETURN(out.source.func, passes::Lower(*def.schedule, def.args, symbol, spec.target,
                                                           backend.lowering_steps(), lower_options));
  if (filtered_out) {
    return Status::InvalidArgument("config index " + std::to_string(index) + " is not a valid point of " +
                                   space.description() +
                                   " (its threads, register tile or shared memory exceed the "
                                   "limits of some card of this architecture)");
  }
  if (options.pass_times) {
    for (const auto& t : timings) options.pass_times->emplace_back(t.pass, t.milliseconds);
  }

  KernelInfo& info = out.info;
  info.symbol = symbol;
  info.workload_key = spec.workload.Key();
  info.implementation = spec.workload.implementation;
  info.epilogue = spec.epilogue.ToString();
  info.target = spec.target.ToString();
  info.config_index = index;
  info.config_json = cfg.ToJson();
  info.flops = spec.workload.Flops();
  if (backend.lowering_steps() != passes::StepList::kCpu) {  // lowered for a launch: its grid and block
    const passes::GpuLaunch& launch = out.source.func.launch;
    info.gpu = true;
    for (int d = 0; d < 3; ++d) {
      info.grid[d] = launch.grid[size_t(d)];
      info.block[d] = launch.block[size_t(d)];
    }
    info.shared_bytes = launch.shared_bytes;
  }
  for (size_t i = 0; i < def.args.size(); ++i) {
    info.buffers.push_back(
        {def.args[i]->name, BufferRoleName(def.roles[i]), def.args[i]->shape, def.args[i]->dtype.ToString()});
  }
  out.source.metadata_json = info.ToJson();
  return out;
}

Result<std::vector<KernelSource>> LowerAll(const std::vector<KernelSpec>& specs, std::vector<KernelInfo>* infos,
                                           const BuildOptions& options) {
  if (specs.empty()) return Status::InvalidArgument("no kernels to build");
  std::vector<KernelSource> sources;
  for (const auto& spec : specs) {
    if (spec.target.ToString() != specs[0].target.ToString()) {
      return Status::InvalidArgument("kernels of one module must share a target: " + spec.target.ToString() + " vs " +
                                     specs[0].target.ToString());
    }
    TUNEFARM_ASSIGN_OR_RETURN(Lowered l, LowerSpec(spec, options));
    sources.push_back(std::move(l.source));
    if (infos) infos->push_back(std::move(l.info));
  }
  return sources;
}

}  // namespace

int64_t KernelBufferInfo::num_elements() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::string KernelInfo::ToJson() const {
  nlohmann::ordered_json j;
  j["symbol"] = symbol;
  j["workload"] = workload_key;
  j["implementation"] = implementation;
  j["epilogue"] = epilogue;
  j["target"] = target;
  j["config_index"] = config_index;
  // The config is the compiler's own JSON; anything else is kept as a string rather than thrown on.
  nlohmann::ordered_json config =
      nlohmann::ordered_json::parse(config_json.empty() ? "{}" : config_json, nullptr, false);
  j["config"] = config.is_discarded() ? nlohmann::ordered_json(config_json) : config;
  j["flops"] = flops;
  nlohmann::ordered_json bufs = nlohmann::ordered_json::array();
  for (const auto& b : buffers)
    bufs.push_back({{"name", b.name}, {"role", b.role}, {"shape", b.shape}, {"dtype", b.dtype}});
  j["buffers"] = bufs;
  if (gpu) {
    j["launch"] = {{"grid", {grid[0], grid[1], grid[2]}},
                   {"block", {block[0], block[1], block[2]}},
                   {"shared_bytes", shared_bytes},
                   {"registers", registers}};
  }
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

namespace {
Result<KernelInfo> ParseKernelInfo(const std::string& json);
}  // namespace

Result<KernelInfo> KernelInfo::FromJson(const std::string& json) {
  auto bad = [&](const std::string& why) { return Status::InvalidArgument("malformed kernel metadata: " + why); };
  // nlohmann reports a field of the wrong type ("flops": "2") and text that is not UTF-8 only by
  // exception; none leaves this parser.
  try {
    return ParseKernelInfo(json);
  } catch (const nlohmann::json::exception& e) {
    return bad(e.what());
  }
}

namespace {
Result<KernelInfo> ParseKernelInfo(const std::string& json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  auto bad = [&](const std::string& why) { return Status::InvalidArgument("malformed kernel metadata: " + why); };
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  KernelInfo info;
  if (!j.contains("symbol") || !j["symbol"].is_string()) return bad("missing symbol");
  if (!j.contains("buffers") || !j["buffers"].is_array()) return bad("missing buffers");
  info.symbol = j["symbol"];
  info.workload_key = j.value("workload", "");
  info.implementation = j.value("implementation", "");
  info.epilogue = j.value("epilogue", "");
  info.target = j.value("target", "");
  info.config_index = j.value("config_index", int64_t(0));
  info.config_json = j.contains("config") ? j["config"].dump() : "{}";
  info.flops = j.value("flops", 0.0);
  for (const auto& b : j["buffers"]) {
    if (!b.is_object() || !b.contains("shape") || !b["shape"].is_array()) return bad("buffer without shape");
    KernelBufferInfo bi{b.value("name", ""), b.value("role", ""), {}, b.value("dtype", "float32")};
    for (const auto& d : b["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) return bad("bad dimension in buffer " + bi.name);
      bi.shape.push_back(d.get<int64_t>());
    }
    info.buffers.push_back(std::move(bi));
  }
  if (j.contains("launch")) {
    const auto& l = j["launch"];
    auto dims = [&](const char* key, int64_t* out) {
      if (!l.is_object() || !l.contains(key) || !l[key].is_array() || l[key].size() != 3) return false;
      for (size_t d = 0; d < 3; ++d) {
        if (!l[key][d].is_number_integer() || l[key][d].get<int64_t>() < 1) return false;
        out[d] = l[key][d].get<int64_t>();
      }
      return true;
    };
    if (!dims("grid", info.grid) || !dims("block", info.block))
      return bad("launch needs grid and block of 3 positive sizes");
    info.gpu = true;
    info.shared_bytes = l.value("shared_bytes", int64_t(0));
    info.registers = l.value("registers", 0);
  }
  return info;
}
}  // namespace

Result<ConfigSpace> GetConfigSpace(const Workload& workload, const Target& target) {
  TUNEFARM_ASSIGN_OR_RETURN(const OpTemplate* tmpl, FindTemplate(workload.implementation));
  TUNEFARM_RETURN_IF_ERROR(tmpl->Check(workload));
  return tmpl->Space(workload, target);
}

Result<int64_t> FallbackConfigIndex(const Workload& workload, const Target& target) {
  TUNEFARM_ASSIGN_OR_RETURN(const OpTemplate* tmpl, FindTemplate(workload.implementation));
  TUNEFARM_RETURN_IF_ERROR(tmpl->Check(workload));
  ConfigSpace space = tmpl->Space(workload, target);
  TUNEFARM_ASSIGN_OR_RETURN(Config c, tmpl->Fallback(workload, target, space));
  return c.index();
}

std::function<bool(const Config&)> ModelLayoutFilter(const Workload& w, const Target& t) {
  // The fallback's blocks follow the channel counts alone (FallbackChannelBlock), so they are the
  // blocks the neighbouring kernels' fallbacks read and write too.
  auto tmpl = FindTemplate(w.implementation);
  if (!tmpl.ok() || !(*tmpl)->Check(w).ok()) return [](const Config&) { return false; };
  const ConfigSpace space = (*tmpl)->Space(w, t);
  auto fallback = (*tmpl)->Fallback(w, t, space);
  if (!fallback.ok()) return [](const Config&) { return false; };
  const OpTemplate* op = *tmpl;
  const OpTemplate::Blocks blocks = op->ActivationBlocks(w, *fallback);
  return [op, w, blocks](const Config& c) { return op->ActivationBlocks(w, c) == blocks; };
}

bool KeepsModelLayout(const Workload& w, const Target& t, const Config& c) { return ModelLayoutFilter(w, t)(c); }

std::function<bool(const Config&)> ParallelismFilter(const Workload& w) {
  auto tmpl = FindTemplate(w.implementation);
  if (!tmpl.ok()) return [](const Config&) { return false; };
  const OpTemplate* op = *tmpl;
  return [op, w](const Config& c) { return op->FeedsEveryCore(w, c); };
}

Result<KernelInfo> DescribeKernel(const KernelSpec& spec, const BuildOptions& options) {
  TUNEFARM_ASSIGN_OR_RETURN(Lowered l, LowerSpec(spec, options));
  return l.info;
}

Result<std::vector<float>> LoopNestFeatures(const KernelSpec& spec) {
  BuildOptions options;
  // Before unrolling: on GPUs also before thread binding, while block and thread loops are loops.
  options.stop_after = BackendFor(spec.target).features_after();
  TUNEFARM_ASSIGN_OR_RETURN(Lowered l, LowerSpec(spec, options));
  return features::ExtractLoopNestFeatures(l.source.func.body);
}

int LoopNestFeatureCount() { return features::LoopNestFeatureCount(); }

Result<std::string> LoweredIR(const KernelSpec& spec) {
  TUNEFARM_ASSIGN_OR_RETURN(Lowered l, LowerSpec(spec, {}));
  return ir::ToString(l.source.func.body);
}

Result<std::unique_ptr<JitModule>> BuildJit(const std::vector<KernelSpec>& specs, std::vector<KernelInfo>* infos,
                                            const BuildOptions& options) {
  TUNEFARM_ASSIGN_OR_RETURN(auto sources, LowerAll(specs, infos, options));
  return BackendFor(specs[0].target).Jit(sources, specs[0].target);
}

namespace {
ToolLimits ToolLimitsOf(const BuildOptions& options) { return ToolLimits{options.tool_timeout_ms, options.cancel}; }
}  // namespace

Result<std::string> BuildPtx(const std::vector<KernelSpec>& specs, std::vector<KernelInfo>* infos,
                             const BuildOptions& options) {
  if (!specs.empty() && &BackendFor(specs[0].target) != &CudaBackend()) {
    return Status::InvalidArgument("PTX is for CUDA targets, not '" + specs[0].target.ToString() +
                                   "' (its backend: " + BackendFor(specs[0].target).name() + ")");
  }
  std::vector<KernelInfo> local_infos;
  if (!infos) infos = &local_infos;
  const size_t first = infos->size();
  PhaseClock clock(options.times);
  TUNEFARM_ASSIGN_OR_RETURN(auto sources, LowerAll(specs, infos, options));
  clock.Lap(&BuildOptions::Times::lower_ms);
  const Target& target = specs[0].target;
  TUNEFARM_ASSIGN_OR_RETURN(std::string ptx, EmitPtx(sources, target));
  clock.Lap(&BuildOptions::Times::codegen_ms);
  std::map<std::string, int64_t> threads;
  for (size_t i = first; i < infos->size(); ++i) {
    const KernelInfo& info = (*infos)[i];
    threads[info.symbol] = info.block[0] * info.block[1] * info.block[2];
  }
  auto checked = CheckPtxRegisters(ptx, target, threads, options.cubin, ToolLimitsOf(options));
  clock.Lap(&BuildOptions::Times::tool_ms);
  TUNEFARM_ASSIGN_OR_RETURN(auto registers, std::move(checked));
  for (size_t i = first; i < infos->size() && !registers.empty(); ++i)
    (*infos)[i].registers = registers.at((*infos)[i].symbol);
  return ptx;
}

Result<std::string> BuildObject(const std::vector<KernelSpec>& specs, std::vector<KernelInfo>* infos,
                                const BuildOptions& options) {
  PhaseClock clock(options.times);
  TUNEFARM_ASSIGN_OR_RETURN(auto sources, LowerAll(specs, infos, options));
  clock.Lap(&BuildOptions::Times::lower_ms);
  // Emulated CUDA kernels are host loop nests by now: their code is the host's.
  auto object = EmitObject(sources, specs.empty() ? Target() : BackendFor(specs[0].target).CodeTarget(specs[0].target));
  clock.Lap(&BuildOptions::Times::codegen_ms);
  return object;
}

Status BuildSharedLibrary(const std::vector<KernelSpec>& specs, const std::string& path, std::vector<KernelInfo>* infos,
                          const BuildOptions& options) {
  TUNEFARM_ASSIGN_OR_RETURN(std::string object, BuildObject(specs, infos, options));
  static std::atomic<int> counter{0};
  std::string obj_path = path + ".tmp" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".o";
  {
    std::ofstream out(obj_path, std::ios::binary);
    out.write(object.data(), std::streamsize(object.size()));
    if (!out) return Status::IOError("cannot write " + obj_path);
  }
  PhaseClock clock(options.times);
  Status s = LinkSharedLibrary({obj_path}, specs[0].target, path, options.toolchain_linker, ToolLimitsOf(options));
  clock.Lap(&BuildOptions::Times::tool_ms);
  std::remove(obj_path.c_str());
  return s;
}

Result<Candidate> BuildCandidate(const KernelSpec& spec, const std::string& tmp_dir, const BuildOptions& options) {
  return BackendFor(spec.target).BuildCandidate(spec, tmp_dir, options);
}

bool MeasuresWhileBuilding(const Target& target) { return BackendFor(target).MeasuresWhileBuilding(); }

Status CheckMeasurableHere(const Target& target) { return BackendFor(target).CheckMeasurableHere(target); }

}  // namespace tunefarm::compiler
