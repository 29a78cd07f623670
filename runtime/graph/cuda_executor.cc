#include "tunefarm/runtime/cuda_executor.h"

#include <cstdlib>

#include "runtime/graph/memory_plan.h"
#include "tunefarm/runtime/element_convert.h"

namespace tunefarm::runtime {
namespace {

// Device allocations are 256-byte aligned; the arena keeps every tensor so.
constexpr size_t kDeviceAlign = 256;

// sm_XY of "cuda -arch=sm_90 ...", as 90; 0 when the target names none.
int PtxArch(const std::string& target) {
  const size_t at = target.find("-arch=sm_");
  return at == std::string::npos ? 0 : std::atoi(target.c_str() + at + 9);
}

}  // namespace

// The device's context must be current on the calling thread (a C caller may load on one thread
// and run on another, or use two GPUs from one thread).
CudaExecutor::~CudaExecutor() {
  if (device_) (void)device_->Bind();
}

Result<std::unique_ptr<CudaExecutor>> CudaExecutor::LoadFile(const std::string& path,
                                                             const CudaExecutorOptions& options) {
  TUNEFARM_ASSIGN_OR_RETURN(Artifact a, Artifact::ReadFile(path));
  auto e = Load(std::move(a), options);
  if (!e.ok()) return e.status().WithContext(path);
  return e;
}

Result<std::unique_ptr<CudaExecutor>> CudaExecutor::Load(Artifact artifact, const CudaExecutorOptions& options) {
  TUNEFARM_RETURN_IF_ERROR(artifact.Validate());
  if (artifact.device_kind() != Device::Kind::kCuda) {
    return Status::InvalidArgument(
        "the artifact holds " + artifact.device + " code for " + artifact.target +
        ", not CUDA kernels: compile the model with --target cuda (or a GPU tag such as h100)");
  }
  if (artifact.symbolic_dim) {
    return Status::Unimplemented("the artifact keeps '" + artifact.symbolic_dim->name +
                                 "' symbolic; the CUDA executor runs fixed shapes only");
  }
  std::unique_ptr<CudaExecutor> e(new CudaExecutor());
  e->artifact_ = std::move(artifact);
  e->use_graph_ = options.use_graph;
  TUNEFARM_ASSIGN_OR_RETURN(e->device_, CudaDevice::Open(options.ordinal));
  const CudaDeviceInfo& gpu = e->device_->info();
  const int needed = PtxArch(e->artifact_.target), have = gpu.compute_major * 10 + gpu.compute_minor;
  if (needed > have) {
    return Status::FailedPrecondition("the artifact's PTX is for sm_" + std::to_string(needed) + "; GPU " +
                                      std::to_string(options.ordinal) + " (" + gpu.name + ") is " + gpu.arch() +
                                      ": compile with --target 'cuda -arch=" + gpu.arch() + "'");
  }
  if (e->use_graph_ && !e->device_->SupportsGraphs()) {
    e->use_graph_ = false;
    e->graph_fallback_ = "this CUDA driver has no graph entry points";
  }
  for (const ArtifactKernel& k : e->artifact_.kernels) {
    // A check reads a condition back between launches, which a replayed graph cannot.
    if (e->use_graph_ && !k.condition_checks.empty()) {
      e->use_graph_ = false;
      e->graph_fallback_ = "kernel '" + k.symbol + "' checks a condition computed on the GPU between launches";
    }
  }
  const Artifact& a = e->artifact_;
  if (!a.kernels.empty()) {
    TUNEFARM_ASSIGN_OR_RETURN(e->module_, e->device_->LoadPtx(a.library, a.model.empty() ? "model" : a.model));
  }
  for (const ArtifactKernel& k : a.kernels) {
    TUNEFARM_ASSIGN_OR_RETURN(CudaKernel kernel, e->module_->Kernel(k.symbol));
    CudaLaunchDims dims;
    for (int d = 0; d < 3; ++d) {
      dims.grid[size_t(d)] = unsigned(k.grid[size_t(d)]);
      dims.block[size_t(d)] = unsigned(k.block[size_t(d)]);
    }
    TUNEFARM_RETURN_IF_ERROR(e->device_->CheckLaunch(kernel, dims));
    e->kernels_.push_back(std::move(kernel));
    e->dims_.push_back(dims);
  }
  TUNEFARM_RETURN_IF_ERROR(e->Plan());
  // The parameters and the PTX now live on the GPU: keep no second copy.
  std::string().swap(e->artifact_.params);
  std::string().swap(e->artifact_.library);
  return e;
}

Status CudaExecutor::Plan() {
  const Artifact& a = artifact_;
  // The CUDA lowering runs both branches of an If and selects: a guarded kernel is not its output.
  for (const auto& k : a.kernels) {
    if (!k.run_if.empty()) {
      return Status::FailedPrecondition("kernel '" + k.symbol +
                                        "' runs under a condition, which only the CPU executor reads");
    }
  }
  const size_t nt = a.tensors.size();
  // peak_bytes counts activations and inputs/outputs, as on CPUs (parameters are param_bytes).
  auto alloc = [&](size_t bytes, const std::string& what, bool counted) -> Result<CudaDevicePtr> {
    auto buffer = device_->Alloc(std::max<size_t>(bytes, kDeviceAlign));
    if (!buffer.ok()) return buffer.status().WithContext(what);
    if (counted) peak_bytes_ += int64_t(buffer->bytes());
    buffers_.push_back(std::move(*buffer));
    return buffers_.back().ptr();
  };
  tensor_ptrs_.assign(nt, 0);
  param_bytes_ = int64_t(a.params.size());
  TUNEFARM_ASSIGN_OR_RETURN(CudaDevicePtr params, alloc(a.params.size(), "parameters", false));
  if (!a.params.empty()) TUNEFARM_RETURN_IF_ERROR(device_->Upload(buffers_.back(), a.params.data(), a.params.size()));
  const ArenaPlan plan = PlanArena(a, kDeviceAlign);
  arena_bytes_ = int64_t(plan.size);
  TUNEFARM_ASSIGN_OR_RETURN(CudaDevicePtr arena, alloc(plan.size, "the activation arena", true));
  for (size_t t = 0; t < nt; ++t) {
    const ArtifactTensor& tensor = a.tensors[t];
    if (tensor.view_of >= 0) continue;
    switch (tensor.kind) {
      case ArtifactTensor::kParam:
        tensor_ptrs_[t] = params + CudaDevicePtr(tensor.param_offset);
        break;
      case ArtifactTensor::kIntermediate:
        tensor_ptrs_[t] = arena + plan.offset[t];
        break;
      case ArtifactTensor::kInput:
      case ArtifactTensor::kOutput: {
        TUNEFARM_ASSIGN_OR_RETURN(tensor_ptrs_[t], alloc(size_t(tensor.bytes()), "tensor '" + tensor.name + "'", true));
        // Zeroed like the CPU executor's, so an input never set reads zeros, not garbage.
        TUNEFARM_RETURN_IF_ERROR(device_->Fill(buffers_.back(), 0));
        break;
      }
    }
  }
  for (size_t t = 0; t < nt; ++t) {
    if (a.tensors[t].view_of >= 0) tensor_ptrs_[t] = tensor_ptrs_[size_t(a.tensors[t].view_of)];
  }
  for (const auto& k : a.kernels) {
    std::vector<CudaDevicePtr> args;
    for (int arg : k.args) args.push_back(tensor_ptrs_[size_t(arg)]);
    kernel_args_.push_back(std::move(args));
  }
  for (int i : a.inputs)
    input_info_.push_back({a.tensors[size_t(i)].name, a.tensors[size_t(i)].caller_dtype(), a.tensors[size_t(i)].shape});
  for (int o : a.outputs) {
    const ArtifactTensor& tensor = a.tensors[size_t(o)];
    output_info_.push_back({tensor.name, tensor.caller_dtype(), tensor.shape});
    host_outputs_.emplace_back(size_t(output_info_.back().bytes()), '\0');
    // An output with an edge type comes down as stored and is converted on the host.
    host_storage_.emplace_back(tensor.edge_dtype ? size_t(tensor.bytes()) : 0, '\0');
  }
  return Status::OK();
}

Status CudaExecutor::SetInput(size_t index, const void* data, size_t bytes) {
  TUNEFARM_RETURN_IF_ERROR(device_->Bind());
  if (index >= input_info_.size())
    return Status::InvalidArgument("input index " + std::to_string(index) + " out of range");
  const TensorInfo& info = input_info_[index];
  if (int64_t(bytes) != info.bytes()) {
    return Status::InvalidArgument("input '" + info.name + "' takes " + std::to_string(info.bytes()) + " bytes, got " +
                                   std::to_string(bytes));
  }
  const int t = artifact_.inputs[index];
  const CudaDevicePtr to = tensor_ptrs_[size_t(t)];
  const ArtifactTensor& tensor = artifact_.tensors[size_t(t)];
  if (!tensor.edge_dtype) {
    TUNEFARM_RETURN_IF_ERROR(CheckInputIndices(t, data));
    return device_->Upload(to, data, bytes, info.name);
  }
  std::string stored(size_t(tensor.bytes()), '\0');
  TUNEFARM_RETURN_IF_ERROR(
      ConvertToStorage(*tensor.edge_dtype, data, stored.data(), tensor.num_elements(), "input '" + info.name + "'"));
  TUNEFARM_RETURN_IF_ERROR(CheckInputIndices(t, stored.data()));
  return device_->Upload(to, stored.data(), stored.size(), info.name);
}

// Runtime indices that arrive as a graph input (token ids) are checked on the host before they are
// uploaded (IndexCheck): an error naming the node instead of a clamped row. Indices computed on the
// device rely on the kernels' clamp alone.
Status CudaExecutor::CheckInputIndices(int tensor, const void* storage) const {
  const ArtifactTensor& t = artifact_.tensors[size_t(tensor)];
  for (const auto& k : artifact_.kernels) {
    for (const auto& check : k.index_checks) {
      // The indices may be a view of the input (a Reshape of input_ids): the same storage.
      int storage_of = check.tensor;
      for (int hops = 0; artifact_.tensors[size_t(storage_of)].view_of >= 0 && hops < 64; ++hops) {
        storage_of = artifact_.tensors[size_t(storage_of)].view_of;
      }
      if (storage_of == tensor) TUNEFARM_RETURN_IF_ERROR(CheckIndices(check, t.dtype, storage, t.num_elements()));
    }
  }
  return Status::OK();
}

Status CudaExecutor::SetInput(const std::string& name, const void* data, size_t bytes) {
  TUNEFARM_ASSIGN_OR_RETURN(size_t index, FindInput(input_info_, name));
  return SetInput(index, data, bytes);
}

Status CudaExecutor::CheckConditionsOf(size_t k) {
  const ArtifactKernel& kernel = artifact_.kernels[k];
  if (kernel.condition_checks.empty()) return Status::OK();
  return CheckConditions(kernel.condition_checks, [&](int t) -> Result<bool> {
    uint8_t value = 0;
    TUNEFARM_RETURN_IF_ERROR(device_->Download(&value, tensor_ptrs_[size_t(t)], 1, artifact_.tensors[size_t(t)].name));
    return value != 0;
  });
}

Status CudaExecutor::Enqueue() {
  for (size_t k = 0; k < kernels_.size(); ++k) {
    TUNEFARM_RETURN_IF_ERROR(CheckConditionsOf(k));
    TUNEFARM_RETURN_IF_ERROR(device_->Launch(kernels_[k], dims_[k], kernel_args_[k]));
  }
  return Status::OK();
}

// One run on the stream: the captured graph (captured on first use), or the launches.
Status CudaExecutor::Execute() {
  if (!use_graph_ || kernels_.empty()) return Enqueue();
  if (!graph_) {
    Status captured = device_->BeginCapture();
    if (captured.ok()) {
      Status enqueued = Enqueue();
      std::unique_ptr<CudaGraph> graph;
      captured = device_->EndCapture(artifact_.model, &graph);  // ends the capture also after a failed launch
      TUNEFARM_RETURN_IF_ERROR(enqueued);
      if (captured.ok()) graph_ = std::move(graph);
    }
    if (!captured.ok()) {
      // A driver that cannot capture this stream still runs the launches; a sticky error cannot.
      if (IsStickyCudaError(captured)) return captured;
      use_graph_ = false;
      graph_fallback_ = captured.message();
      return Enqueue();
    }
  }
  return device_->LaunchGraph(*graph_, artifact_.model);
}

Status CudaExecutor::Run() {
  TUNEFARM_RETURN_IF_ERROR(device_->Bind());
  TUNEFARM_RETURN_IF_ERROR(Execute());
  TUNEFARM_RETURN_IF_ERROR(device_->Synchronize(artifact_.model));
  for (size_t o = 0; o < host_outputs_.size(); ++o) {
    const CudaDevicePtr from = tensor_ptrs_[size_t(artifact_.outputs[o])];
    const ArtifactTensor& tensor = artifact_.tensors[size_t(artifact_.outputs[o])];
    if (!tensor.edge_dtype) {
      TUNEFARM_RETURN_IF_ERROR(
          device_->Download(host_outputs_[o].data(), from, host_outputs_[o].size(), output_info_[o].name));
      continue;
    }
    TUNEFARM_RETURN_IF_ERROR(
        device_->Download(host_storage_[o].data(), from, host_storage_[o].size(), output_info_[o].name));
    ConvertFromStorage(*tensor.edge_dtype, host_storage_[o].data(), host_outputs_[o].data(), tensor.num_elements());
  }
  return Status::OK();
}

// Events around one launch would also time the host's submission (the start event fires on an
// idle stream before the launch arrives): both timings take back-to-back launches and divide.
constexpr int kTimedRepeats = 10;

Result<double> CudaExecutor::TimedRun() {
  TUNEFARM_RETURN_IF_ERROR(device_->Bind());
  TUNEFARM_RETURN_IF_ERROR(Execute());  // the graph is captured outside the timing
  TUNEFARM_ASSIGN_OR_RETURN(double ms, device_->TimeEnqueued(
                                           [this] {
                                             for (int r = 0; r < kTimedRepeats; ++r) {
                                               TUNEFARM_RETURN_IF_ERROR(Execute());
                                             }
                                             return Status::OK();
                                           },
                                           artifact_.model));
  return ms / kTimedRepeats;
}

// Each kernel is timed as kTimedRepeats launches of it back to back, replayed from a graph when the
// executor replays graphs. Plain launches would time the host, not the kernel: a few-microsecond
// kernel then waits for the next cuLaunchKernel, about 5-6 us apart on the H100 host, where every
// MobileNetV2 depthwise kernel profiled at 5.6-7 us while the whole 52-kernel model replayed in
// 0.33 ms. A graph's launches run back to back on the device, as in the model's replay and in
// cuDNN's timing (bench/gpu/cudnn_tasks.py).
Status CudaExecutor::RunProfiled(std::vector<double>* kernel_ms) {
  TUNEFARM_RETURN_IF_ERROR(device_->Bind());
  kernel_ms->resize(kernels_.size(), 0.0);
  auto launches = [&](size_t k) {
    for (int r = 0; r < kTimedRepeats; ++r) {
      TUNEFARM_RETURN_IF_ERROR(device_->Launch(kernels_[k], dims_[k], kernel_args_[k]));
    }
    return Status::OK();
  };
  if (use_graph_ && profile_graphs_.empty()) {  // captured once, outside the timing
    for (size_t k = 0; k < kernels_.size(); ++k) {
      Status captured = device_->BeginCapture();
      std::unique_ptr<CudaGraph> graph;
      if (captured.ok()) {
        Status enqueued = launches(k);
        captured = device_->EndCapture(artifact_.kernels[k].symbol, &graph);
        TUNEFARM_RETURN_IF_ERROR(enqueued);
      }
      if (!captured.ok()) {
        if (IsStickyCudaError(captured)) return captured;
        profile_graphs_.clear();  // this driver cannot capture: plain launches, as Execute falls back
        break;
      }
      profile_graphs_.push_back(std::move(graph));
    }
  }
  for (size_t k = 0; k < kernels_.size(); ++k) {
    TUNEFARM_RETURN_IF_ERROR(CheckConditionsOf(k));  // outside the timing
    TUNEFARM_ASSIGN_OR_RETURN(double ms, device_->TimeEnqueued(
                                             [&] {
                                               return profile_graphs_.empty()
                                                          ? launches(k)
                                                          : device_->LaunchGraph(*profile_graphs_[k],
                                                                                 artifact_.kernels[k].symbol);
                                             },
                                             artifact_.kernels[k].symbol));
    (*kernel_ms)[k] += ms / kTimedRepeats;
  }
  return Status::OK();
}

std::string CudaExecutor::Description() const {
  const CudaDeviceInfo& gpu = device();
  return "GPU " + std::to_string(gpu.ordinal) + " (" + gpu.name + ", " + gpu.arch() +
         (use_graph_ ? ", CUDA graph" : "") + ")";
}

}  // namespace tunefarm::runtime
