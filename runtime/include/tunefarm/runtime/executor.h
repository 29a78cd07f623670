// Executor: runs a compiled model (an Artifact) -- the graph executor deployed on boards.
//
// Load plans storage once: graph inputs and outputs get their own buffers, parameters are used in
// place from the artifact, and every intermediate tensor gets an offset in one arena where tensors
// whose lifetimes do not overlap share bytes (greedy by size, like TFLite's planner). Run is then a
// plain loop over the kernels. peak_bytes() is the arena plus the input and output buffers.
//
// Thread safety: one Run at a time per Executor; kernels use the process-wide thread pool
// (SetNumThreads).
#ifndef TUNEFARM_RUNTIME_EXECUTOR_H_
#define TUNEFARM_RUNTIME_EXECUTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "tunefarm/runtime/artifact.h"
#include "tunefarm/runtime/graph_executor.h"
#include "tunefarm/runtime/kernel_library.h"

namespace tunefarm::runtime {

class Executor final : public GraphExecutor {
 public:
  static Result<std::unique_ptr<Executor>> Load(Artifact artifact);
  static Result<std::unique_ptr<Executor>> LoadFile(const std::string& path);
  ~Executor() override;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const std::vector<TensorInfo>& inputs() const override { return input_info_; }
  const std::vector<TensorInfo>& outputs() const override { return output_info_; }
  // The artifact's metadata (its parameter and library sections are released after loading).
  const Artifact& artifact() const override { return artifact_; }

  // Copies data (of the input's dtype in inputs(), converted when that is an edge type) into
  // input `name`; InvalidArgument naming the input when the name is unknown, the byte count does
  // not match its shape or a value does not fit its storage type.
  Status SetInput(const std::string& name, const void* data, size_t bytes) override;
  Status SetInput(size_t index, const void* data, size_t bytes) override;
  Status Run() override;
  // Run, adding each kernel's wall time in milliseconds to (*kernel_ms)[k] (resized as needed).
  Status RunProfiled(std::vector<double>* kernel_ms) override;
  // The output's bytes (of its dtype in outputs()), valid until the next Run.
  const void* Output(size_t index) const override;

  int64_t peak_bytes() const override { return peak_bytes_; }
  int64_t arena_bytes() const override { return int64_t(arena_size_); }
  int64_t param_bytes() const override { return param_bytes_; }
  std::string Description() const override;

  static void SetNumThreads(int n);

 private:
  Executor() = default;
  Status Plan();
  void ConvertOutputs();
  bool Runs(size_t kernel) const;
  Status CheckBeforeRunning(size_t kernel) const;
  // The symbolic dimension's size in this run (the inputs that follow it must agree), written where
  // the kernels read it, and the outputs' shapes at that size. OK and nothing to do without one.
  Status BeginRun();
  // Elements of `tensor` in this run: its leading rows at the run's size.
  int64_t RunElements(const ArtifactTensor& tensor) const;

  Artifact artifact_;
  std::shared_ptr<void> library_file_;  // keeps the library's file open while it is loaded
  std::unique_ptr<KernelLibrary> library_;
  std::vector<TunefarmKernelFn> fns_;
  std::vector<void*> tensor_ptrs_;               // per tensor, after planning
  std::vector<std::vector<void*>> kernel_args_;  // per kernel
  struct AlignedFree {
    void operator()(void* p) const;
  };
  std::unique_ptr<uint8_t, AlignedFree> arena_;
  size_t arena_size_ = 0;
  std::vector<std::unique_ptr<uint8_t, AlignedFree>> io_buffers_;
  std::vector<std::unique_ptr<uint8_t, AlignedFree>> edge_outputs_;  // per output; null: no edge type
  std::unique_ptr<uint8_t, AlignedFree> params_;
  std::vector<TensorInfo> input_info_, output_info_;
  int64_t peak_bytes_ = 0;
  int64_t param_bytes_ = 0;
  // The symbolic dimension: the size each input was last given at (the maximum until then), the
  // size of the run, and the int64 the kernels read it from.
  std::vector<int64_t> input_sizes_;
  int64_t size_ = 0;
  std::unique_ptr<uint8_t, AlignedFree> size_buffer_;
};

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_EXECUTOR_H_
