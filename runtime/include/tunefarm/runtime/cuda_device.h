// CudaDevice: one GPU as a process uses it, through the driver loaded at run time
// (cuda_driver.h): its primary context, one stream, device memory, PTX modules, kernel launches
// and event timing. Needs no CUDA header and no toolkit; without a driver every entry point
// returns the driver's FailedPrecondition.
//
// Contract:
//  - Open(ordinal) retains the device's primary context and makes it current on the calling
//    thread; a thread that uses the device later calls Bind() first. The destructor releases it.
//  - Every CUDA error is a Status naming the call and its object: "cuLaunchKernel(conv_3):
//    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701): too many resources requested for launch".
//    Sticky errors (an illegal address, a trap) poison the context: IsStickyError says so, and the
//    caller must throw the process away (rpc_server measures in a child it can restart).
//  - LoadPtx JIT-compiles PTX in the driver; the error carries the JIT log.
//  - CudaKernel::Check verifies a launch against the loaded function before it runs: threads
//    per block against CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (which accounts for registers),
//    registers x threads against the register file -- so an unlaunchable kernel is an
//    instantiation error, not a launch failure.
// Thread safety: one CudaDevice per thread of work; the driver itself is thread-safe.
#ifndef TUNEFARM_RUNTIME_CUDA_DEVICE_H_
#define TUNEFARM_RUNTIME_CUDA_DEVICE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/runtime/cuda_driver.h"

namespace tunefarm {

// Device memory, freed when destroyed.
class CudaBuffer {
 public:
  CudaBuffer() = default;
  CudaBuffer(const CudaDriver* d, CudaDevicePtr p, size_t bytes) : driver_(d), ptr_(p), bytes_(bytes) {}
  CudaBuffer(CudaBuffer&& o) noexcept { *this = std::move(o); }
  CudaBuffer& operator=(CudaBuffer&& o) noexcept;
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  ~CudaBuffer();
  CudaDevicePtr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  const CudaDriver* driver_ = nullptr;
  CudaDevicePtr ptr_ = 0;
  size_t bytes_ = 0;
};

struct CudaLaunchDims {
  std::array<unsigned, 3> grid = {1, 1, 1};
  std::array<unsigned, 3> block = {1, 1, 1};
  unsigned shared_bytes = 0;  // dynamic shared memory (tunefarm kernels use static: 0)
  int64_t threads() const { return int64_t(block[0]) * block[1] * block[2]; }
};

struct CudaKernel {
  void* function = nullptr;  // CUfunction
  std::string name;
  int registers = 0;  // CU_FUNC_ATTRIBUTE_NUM_REGS
  int max_threads_per_block = 0;
  int static_shared_bytes = 0;
  int local_bytes = 0;  // per thread (spills)
};

class CudaModule;

// An instantiated CUDA graph (captured launches), destroyed with its executable.
class CudaGraph {
 public:
  CudaGraph(const CudaDriver* d, void* graph, void* exec) : driver_(d), graph_(graph), exec_(exec) {}
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  void* exec() const { return exec_; }

 private:
  const CudaDriver* driver_;
  void* graph_;
  void* exec_;
};

class CudaDevice {
 public:
  static Result<std::unique_ptr<CudaDevice>> Open(int ordinal);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const CudaDeviceInfo& info() const { return info_; }
  const CudaDriver& driver() const { return *driver_; }
  Status Bind() const;

  Result<CudaBuffer> Alloc(size_t bytes);
  // Copies in the stream's order (the stream never waits for the legacy default stream).
  Status Upload(const CudaBuffer& to, const void* from, size_t bytes);
  Status Download(void* to, const CudaBuffer& from, size_t bytes);
  Status Upload(CudaDevicePtr to, const void* from, size_t bytes, const std::string& what);
  Status Download(void* to, CudaDevicePtr from, size_t bytes, const std::string& what);
  // Overwrites `scratch` on the stream (an L2 flush: a scratch larger than the L2 cache evicts
  // whatever a kernel left there).
  Status Fill(const CudaBuffer& scratch, unsigned char value);

  Result<std::unique_ptr<CudaModule>> LoadPtx(const std::string& ptx, const std::string& what);

  // Checks the launch against the kernel's resources (see the contract); InvalidArgument naming
  // the limit.
  Status CheckLaunch(const CudaKernel& kernel, const CudaLaunchDims& dims) const;
  // Enqueues one launch with these device pointers as the kernel's parameters.
  Status Launch(const CudaKernel& kernel, const CudaLaunchDims& dims, const std::vector<CudaDevicePtr>& args);
  Status Synchronize(const std::string& what);
  // CUDA graphs: the launches enqueued between BeginCapture and EndCapture are recorded, not run,
  // and become one graph that LaunchGraph replays with a single launch. FailedPrecondition when
  // the driver lacks graphs (SupportsGraphs).
  bool SupportsGraphs() const { return driver_->has_graphs(); }
  Status BeginCapture();
  Status EndCapture(const std::string& what, std::unique_ptr<CudaGraph>* graph);
  Status LaunchGraph(const CudaGraph& graph, const std::string& what);
  // Milliseconds between two events around what `enqueue` puts on the stream (waits for it).
  Result<double> TimeEnqueued(const std::function<Status()>& enqueue, const std::string& what);
  // Milliseconds of `number` back-to-back launches between two events, per launch; with
  // flush_scratch, each launch is timed alone after a flush (the flush outside the events).
  Result<double> TimeLaunches(const CudaKernel& kernel, const CudaLaunchDims& dims,
                              const std::vector<CudaDevicePtr>& args, int number, const CudaBuffer* flush_scratch);

 private:
  CudaDevice() = default;
  const CudaDriver* driver_ = nullptr;
  CudaDeviceInfo info_;
  int device_ = 0;
  void* context_ = nullptr;
  void* stream_ = nullptr;
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

class CudaModule {
 public:
  CudaModule(const CudaDriver* d, void* module) : driver_(d), module_(module) {}
  ~CudaModule();
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;
  // NotFound naming the kernel when the module has no such entry.
  Result<CudaKernel> Kernel(const std::string& name) const;

 private:
  const CudaDriver* driver_;
  void* module_;
};

// True for the errors after which the context cannot be used again (illegal address, trap,
// misaligned address, launch failure): the process must be restarted.
bool IsStickyCudaError(const Status& s);

}  // namespace tunefarm

#endif  // TUNEFARM_RUNTIME_CUDA_DEVICE_H_
