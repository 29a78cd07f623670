// CudaExecutor: runs a device "cuda" artifact (docs/formats/artifact.md) on one NVIDIA GPU -- the
// graph executor for GPU hosts. It needs only the driver: the driver JIT-compiles the PTX, and
// without a driver Load fails with the driver's FailedPrecondition (the runtime builds and its CPU
// executor runs without CUDA).
//
// Load: opens the GPU (CudaDevice), refuses a GPU older than the PTX's architecture, loads the PTX
// module, checks every kernel's launch against its resources (threads allowed by its registers,
// shared memory), and plans device memory once: parameters uploaded once, graph inputs and outputs
// in their own buffers, every intermediate in one arena where tensors whose lifetimes do not
// overlap share bytes (PlanArena, as on CPUs); peak_bytes() reports the total.
// Run: the kernels in order on the device's stream. By default (use_graph) the first Run captures
// them in a CUDA graph and every later Run replays it with one launch -- batch-1 inference is
// launch-bound; then the outputs are copied to host buffers (Output). RunProfiled times each
// kernel alone with events, over back-to-back launches of it replayed from a graph of their own
// (plain launches when the executor does not replay graphs).
// Errors: every CUDA error names the call and the kernel; after a sticky one (IsStickyCudaError:
// an illegal address) the context is unusable and the process must be restarted.
// Thread safety: one thread at a time; every call makes the GPU's context current on its thread.
#ifndef TUNEFARM_RUNTIME_CUDA_EXECUTOR_H_
#define TUNEFARM_RUNTIME_CUDA_EXECUTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "tunefarm/runtime/artifact.h"
#include "tunefarm/runtime/cuda_device.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm::runtime {

struct CudaExecutorOptions {
  int ordinal = 0;        // which GPU
  bool use_graph = true;  // capture the run in a CUDA graph and replay it
};

class CudaExecutor final : public GraphExecutor {
 public:
  static Result<std::unique_ptr<CudaExecutor>> Load(Artifact artifact, const CudaExecutorOptions& options = {});
  static Result<std::unique_ptr<CudaExecutor>> LoadFile(const std::string& path,
                                                        const CudaExecutorOptions& options = {});
  ~CudaExecutor() override;
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  const std::vector<TensorInfo>& inputs() const override { return input_info_; }
  const std::vector<TensorInfo>& outputs() const override { return output_info_; }
  const Artifact& artifact() const override { return artifact_; }
  const CudaDeviceInfo& device() const { return device_->info(); }
  bool uses_graph() const { return use_graph_; }
  // Why Run fell back from graph replay to plain launches (capture failed, or the driver has no
  // graphs); empty while replay holds or was never asked for.
  const std::string& graph_fallback() const { return graph_fallback_; }

  // Copies data to input `index` on the GPU; InvalidArgument when the byte count does not match.
  Status SetInput(size_t index, const void* data, size_t bytes) override;
  Status SetInput(const std::string& name, const void* data, size_t bytes) override;
  Status Run() override;
  // Runs kernel by kernel (10 back-to-back launches each, between events), adding each one's GPU
  // time in milliseconds to (*kernel_ms)[k].
  Status RunProfiled(std::vector<double>* kernel_ms) override;
  // Milliseconds the GPU spends on one run: events around 10 back-to-back replays (or launch
  // sequences), divided, so the host's submission latency is not counted.
  Result<double> TimedRun();
  Result<double> DeviceTimedRun() override { return TimedRun(); }
  Replay replay() const override { return Replay{true, use_graph_, graph_fallback_}; }
  std::string Description() const override;
  // Output `index` on the host, as of the last Run.
  const void* Output(size_t index) const override { return host_outputs_[index].data(); }

  int64_t peak_bytes() const override { return peak_bytes_; }
  int64_t arena_bytes() const override { return arena_bytes_; }
  int64_t param_bytes() const override { return param_bytes_; }

 private:
  Status CheckInputIndices(int tensor, const void* storage) const;
  CudaExecutor() = default;
  Status Plan();
  Status Enqueue();
  // Kernel k's ConditionChecks, reading each condition back from the device.
  Status CheckConditionsOf(size_t k);
  Status Execute();

  Artifact artifact_;
  std::unique_ptr<CudaDevice> device_;
  std::unique_ptr<CudaModule> module_;
  std::vector<CudaKernel> kernels_;
  std::vector<CudaLaunchDims> dims_;
  std::vector<std::vector<CudaDevicePtr>> kernel_args_;
  std::vector<CudaBuffer> buffers_;         // params, arena, inputs, outputs
  std::vector<CudaDevicePtr> tensor_ptrs_;  // per tensor
  std::vector<std::string> host_outputs_;   // per output, as callers see it
  std::vector<std::string> host_storage_;   // per output with an edge type: as stored
  std::unique_ptr<CudaGraph> graph_;
  // RunProfiled's: each kernel's timed launches captured as one graph (empty: plain launches).
  std::vector<std::unique_ptr<CudaGraph>> profile_graphs_;
  bool use_graph_ = true;
  std::string graph_fallback_;
  std::vector<TensorInfo> input_info_, output_info_;
  int64_t peak_bytes_ = 0, arena_bytes_ = 0, param_bytes_ = 0;
};

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_CUDA_EXECUTOR_H_
