// GraphExecutor: what every executor of a compiled model does, whatever device runs it -- the
// surface the C API and `tunefarm run` use through LoadExecutor, without knowing the device.
// Executor (CPUs, executor.h) and CudaExecutor (NVIDIA GPUs, cuda_executor.h) implement it; a new
// device's executor implements it and gets a Device::Kind (device.h), and nothing above changes.
//
// Thread safety: one call at a time per executor.
#ifndef TUNEFARM_RUNTIME_GRAPH_EXECUTOR_H_
#define TUNEFARM_RUNTIME_GRAPH_EXECUTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "tunefarm/runtime/artifact.h"
#include "tunefarm/runtime/device.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::runtime {

struct TensorInfo {
  std::string name;
  ElementType dtype;
  // inputs(): the largest shape the artifact takes; outputs(): the last run's shape.
  std::vector<int64_t> shape;
  // > 0: dimension 0 is leading_scale x the artifact's symbolic dimension (Artifact::symbolic_dim), so
  // an input takes leading_scale x S rows for any size S in the dimension's range.
  int64_t leading_scale = 0;
  int64_t bytes() const;
};

// The index of input `name`; InvalidArgument listing the inputs when there is none.
Result<size_t> FindInput(const std::vector<TensorInfo>& inputs, const std::string& name);

class GraphExecutor {
 public:
  virtual ~GraphExecutor() = default;

  virtual const std::vector<TensorInfo>& inputs() const = 0;
  virtual const std::vector<TensorInfo>& outputs() const = 0;
  // The artifact's metadata (its parameter and library sections are released after loading).
  virtual const Artifact& artifact() const = 0;

  // Copies data (of the input's dtype in inputs()) into an input; InvalidArgument naming the
  // input when the name is unknown or the byte count does not match its shape. An input that
  // follows the symbolic dimension takes the bytes of any size in its range (the size is read off
  // the byte count); Run fails naming the inputs when two of them were given different sizes.
  virtual Status SetInput(size_t index, const void* data, size_t bytes) = 0;
  virtual Status SetInput(const std::string& name, const void* data, size_t bytes) = 0;
  virtual Status Run() = 0;
  // Runs kernel by kernel, adding each kernel's time in milliseconds to (*kernel_ms)[k].
  virtual Status RunProfiled(std::vector<double>* kernel_ms) = 0;
  // The output's bytes on the host (of its dtype in outputs()), valid until the next Run.
  virtual const void* Output(size_t index) const = 0;

  // Bytes planned for the run: all of it (arena, inputs, outputs), the arena of intermediates
  // alone, and the parameters.
  virtual int64_t peak_bytes() const = 0;
  virtual int64_t arena_bytes() const = 0;
  virtual int64_t param_bytes() const = 0;

  // What runs the model, for people: "2 threads", "GPU 0 (NVIDIA H100 80GB HBM3, sm_90, CUDA graph)".
  virtual std::string Description() const = 0;
  // A device with a clock of its own (a GPU's events) times one run without the host's submission
  // latency; Unimplemented where the host's wall time is the run's time (CPUs).
  virtual Result<double> DeviceTimedRun() {
    return Status::Unimplemented("this device times runs on the host's clock");
  }
  // Devices that replay a captured run (CUDA graphs): whether they do, and why a replay fell back
  // to plain launches (empty while it holds).
  struct Replay {
    bool supported = false, holds = false;
    std::string fallback;
  };
  virtual Replay replay() const { return {}; }
};

// Loads an artifact onto a device: the executor for the device's kind, or the executor's error
// (an artifact compiled for another device says which device it needs).
Result<std::unique_ptr<GraphExecutor>> LoadExecutor(Artifact artifact, const Device& device);
Result<std::unique_ptr<GraphExecutor>> LoadExecutorFile(const std::string& path, const Device& device);

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_GRAPH_EXECUTOR_H_
