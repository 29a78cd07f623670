#include "tunefarm/runtime/cuda_device.h"

#include <algorithm>

namespace tunefarm {
namespace {

// CUfunction_attribute numbers (cuda.h).
constexpr int kFuncMaxThreadsPerBlock = 0;
constexpr int kFuncSharedSizeBytes = 1;
constexpr int kFuncLocalSizeBytes = 3;
constexpr int kFuncNumRegs = 4;
// CUjit_option numbers.
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;
// A non-blocking stream (CU_STREAM_NON_BLOCKING): nothing on the legacy default stream joins it,
// so a graph capture on it cannot be invalidated by another copy or library call. Every copy is
// therefore enqueued on this stream itself (Upload/Download), ordered with the launches.
constexpr unsigned kStreamNonBlocking = 1;

}  // namespace

CudaBuffer& CudaBuffer::operator=(CudaBuffer&& o) noexcept {
  if (this != &o) {
    if (driver_ && ptr_) driver_->cuMemFree(ptr_);
    driver_ = o.driver_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = 0;
    o.bytes_ = 0;
  }
  return *this;
}

CudaBuffer::~CudaBuffer() {
  if (driver_ && ptr_) driver_->cuMemFree(ptr_);
}

Result<std::unique_ptr<CudaDevice>> CudaDevice::Open(int ordinal) {
  TUNEFARM_ASSIGN_OR_RETURN(const CudaDriver* d, CudaDriver::Load());
  TUNEFARM_ASSIGN_OR_RETURN(CudaDeviceInfo info, d->Describe(ordinal));
  std::unique_ptr<CudaDevice> dev(new CudaDevice());
  dev->driver_ = d;
  dev->info_ = info;
  TUNEFARM_RETURN_IF_ERROR(d->Check(d->cuDeviceGet(&dev->device_, ordinal), "cuDeviceGet"));
  TUNEFARM_RETURN_IF_ERROR(d->Check(d->cuDevicePrimaryCtxRetain(&dev->context_, dev->device_),
                                    "cuDevicePrimaryCtxRetain(device " + std::to_string(ordinal) + ")"));
  TUNEFARM_RETURN_IF_ERROR(dev->Bind());
  TUNEFARM_RETURN_IF_ERROR(d->Check(d->cuStreamCreate(&dev->stream_, kStreamNonBlocking), "cuStreamCreate"));
  TUNEFARM_RETURN_IF_ERROR(d->Check(d->cuEventCreate(&dev->start_, 0), "cuEventCreate"));
  TUNEFARM_RETURN_IF_ERROR(d->Check(d->cuEventCreate(&dev->stop_, 0), "cuEventCreate"));
  return dev;
}

CudaDevice::~CudaDevice() {
  if (!driver_) return;
  if (start_) driver_->cuEventDestroy(start_);
  if (stop_) driver_->cuEventDestroy(stop_);
  if (stream_) driver_->cuStreamDestroy(stream_);
  if (context_) driver_->cuDevicePrimaryCtxRelease(device_);
}

Status CudaDevice::Bind() const { return driver_->Check(driver_->cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

Result<CudaBuffer> CudaDevice::Alloc(size_t bytes) {
  CudaDevicePtr p = 0;
  TUNEFARM_RETURN_IF_ERROR(driver_->Check(driver_->cuMemAlloc(&p, std::max<size_t>(bytes, 4)),
                                          "cuMemAlloc(" + std::to_string(bytes) + " bytes)"));
  return CudaBuffer(driver_, p, bytes);
}

Status CudaDevice::Upload(const CudaBuffer& to, const void* from, size_t bytes) {
  return Upload(to.ptr(), from, bytes, std::to_string(bytes) + " bytes");
}

Status CudaDevice::Download(void* to, const CudaBuffer& from, size_t bytes) {
  return Download(to, from.ptr(), bytes, std::to_string(bytes) + " bytes");
}

// From pageable memory the driver stages the bytes before returning, so `from` may be reused at
// once; the copy itself runs in stream order, before any later launch or capture.
Status CudaDevice::Upload(CudaDevicePtr to, const void* from, size_t bytes, const std::string& what) {
  return driver_->Check(driver_->cuMemcpyHtoDAsync(to, from, bytes, stream_), "cuMemcpyHtoDAsync(" + what + ")");
}

// After everything enqueued before it; `to` holds the bytes when this returns.
Status CudaDevice::Download(void* to, CudaDevicePtr from, size_t bytes, const std::string& what) {
  TUNEFARM_RETURN_IF_ERROR(
      driver_->Check(driver_->cuMemcpyDtoHAsync(to, from, bytes, stream_), "cuMemcpyDtoHAsync(" + what + ")"));
  return Synchronize(what);
}

Status CudaDevice::Fill(const CudaBuffer& scratch, unsigned char value) {
  return driver_->Check(driver_->cuMemsetD8Async(scratch.ptr(), value, scratch.bytes(), stream_), "cuMemsetD8Async");
}

Result<std::unique_ptr<CudaModule>> CudaDevice::LoadPtx(const std::string& ptx, const std::string& what) {
  std::string log(8192, '\0');
  int options[2] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
  // The driver reads an integer option's value from the pointer itself.
  // NOLINTNEXTLINE(performance-no-int-to-ptr): cuModuleLoadDataEx's ABI for integer options
  void* values[2] = {log.data(), reinterpret_cast<void*>(uintptr_t(log.size()))};
  void* module = nullptr;
  Status s = driver_->Check(driver_->cuModuleLoadDataEx(&module, ptx.c_str(), 2, options, values),
                            "cuModuleLoadDataEx(" + what + ")");
  if (!s.ok()) {
    // The driver NUL-terminates the log unless it filled the whole buffer.
    log.resize(std::min(log.find('\0'), log.size()));
    return Status(s.code(), s.message() + (log.empty() ? "" : "; JIT log: " + log));
  }
  return std::make_unique<CudaModule>(driver_, module);
}

CudaModule::~CudaModule() {
  if (module_) driver_->cuModuleUnload(module_);
}

Result<CudaKernel> CudaModule::Kernel(const std::string& name) const {
  CudaKernel k;
  k.name = name;
  int rc = driver_->cuModuleGetFunction(&k.function, module_, name.c_str());
  if (rc != 0) {
    Status s = driver_->Check(rc, "cuModuleGetFunction(" + name + ")");
    return Status::NotFound("the module has no kernel '" + name + "' (" + s.message() + ")");
  }
  const std::pair<int, int*> attributes[] = {{kFuncNumRegs, &k.registers},
                                             {kFuncMaxThreadsPerBlock, &k.max_threads_per_block},
                                             {kFuncSharedSizeBytes, &k.static_shared_bytes},
                                             {kFuncLocalSizeBytes, &k.local_bytes}};
  for (const auto& [attribute, out] : attributes) {
    TUNEFARM_RETURN_IF_ERROR(driver_->Check(driver_->cuFuncGetAttribute(out, attribute, k.function),
                                            "cuFuncGetAttribute(" + name + ", " + std::to_string(attribute) + ")"));
  }
  return k;
}

Status CudaDevice::CheckLaunch(const CudaKernel& k, const CudaLaunchDims& dims) const {
  const int64_t threads = dims.threads();
  if (threads > k.max_threads_per_block) {
    return Status::InvalidArgument(
        "kernel " + k.name + " launches " + std::to_string(threads) + " threads per block, but with its " +
        std::to_string(k.registers) + " registers per thread the device allows " +
        std::to_string(k.max_threads_per_block) + " (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES avoided)");
  }
  // Registers are allocated per warp in units of 256 (8 per thread).
  const int64_t warps = (threads + info_.warp_size - 1) / std::max(1, info_.warp_size);
  if (warps * info_.warp_size * ((k.registers + 7) / 8 * 8) > info_.max_registers_per_block) {
    return Status::InvalidArgument("kernel " + k.name + " needs " + std::to_string(k.registers) + " registers x " +
                                   std::to_string(threads) + " threads, more than the register file of " +
                                   std::to_string(info_.max_registers_per_block));
  }
  if (int64_t(k.static_shared_bytes) + dims.shared_bytes > info_.max_shared_memory_per_block) {
    return Status::InvalidArgument("kernel " + k.name + " needs " +
                                   std::to_string(k.static_shared_bytes + int(dims.shared_bytes)) +
                                   " bytes of shared memory, more than the " +
                                   std::to_string(info_.max_shared_memory_per_block) + " a block may have");
  }
  return Status::OK();
}

Status CudaDevice::Launch(const CudaKernel& k, const CudaLaunchDims& dims, const std::vector<CudaDevicePtr>& args) {
  std::vector<CudaDevicePtr> values = args;  // cuLaunchKernel reads each parameter through a pointer
  std::vector<void*> params;
  params.reserve(values.size());
  for (auto& v : values) params.push_back(&v);
  return driver_->Check(
      driver_->cuLaunchKernel(k.function, dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0], dims.block[1],
                              dims.block[2], dims.shared_bytes, stream_, params.data(), nullptr),
      "cuLaunchKernel(" + k.name + ")");
}

Status CudaDevice::Synchronize(const std::string& what) {
  return driver_->Check(driver_->cuStreamSynchronize(stream_), "cuStreamSynchronize(" + what + ")");
}

CudaGraph::~CudaGraph() {
  if (exec_) driver_->cuGraphExecDestroy(exec_);
  if (graph_) driver_->cuGraphDestroy(graph_);
}

Status CudaDevice::BeginCapture() {
  if (!SupportsGraphs())
    return Status::FailedPrecondition("this CUDA driver has no graph entry points (cuStreamBeginCapture...)");
  constexpr int kCaptureModeThreadLocal = 1;  // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
  return driver_->Check(driver_->cuStreamBeginCapture(stream_, kCaptureModeThreadLocal), "cuStreamBeginCapture");
}

Status CudaDevice::EndCapture(const std::string& what, std::unique_ptr<CudaGraph>* out) {
  void* graph = nullptr;
  TUNEFARM_RETURN_IF_ERROR(
      driver_->Check(driver_->cuStreamEndCapture(stream_, &graph), "cuStreamEndCapture(" + what + ")"));
  void* exec = nullptr;
  Status s = driver_->Check(driver_->cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiate(" + what + ")");
  if (!s.ok()) {
    driver_->cuGraphDestroy(graph);
    return s;
  }
  *out = std::make_unique<CudaGraph>(driver_, graph, exec);
  return Status::OK();
}

Status CudaDevice::LaunchGraph(const CudaGraph& graph, const std::string& what) {
  return driver_->Check(driver_->cuGraphLaunch(graph.exec(), stream_), "cuGraphLaunch(" + what + ")");
}

Result<double> CudaDevice::TimeEnqueued(const std::function<Status()>& enqueue, const std::string& what) {
  TUNEFARM_RETURN_IF_ERROR(driver_->Check(driver_->cuEventRecord(start_, stream_), "cuEventRecord"));
  TUNEFARM_RETURN_IF_ERROR(enqueue());
  TUNEFARM_RETURN_IF_ERROR(driver_->Check(driver_->cuEventRecord(stop_, stream_), "cuEventRecord"));
  TUNEFARM_RETURN_IF_ERROR(driver_->Check(driver_->cuEventSynchronize(stop_), "cuEventSynchronize(" + what + ")"));
  float ms = 0;
  TUNEFARM_RETURN_IF_ERROR(driver_->Check(driver_->cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime"));
  return double(ms);
}

Result<double> CudaDevice::TimeLaunches(const CudaKernel& k, const CudaLaunchDims& dims,
                                        const std::vector<CudaDevicePtr>& args, int number,
                                        const CudaBuffer* flush_scratch) {
  double total_ms = 0;
  const int rounds = flush_scratch ? number : 1;
  const int per_round = flush_scratch ? 1 : number;
  for (int r = 0; r < rounds; ++r) {
    if (flush_scratch) TUNEFARM_RETURN_IF_ERROR(Fill(*flush_scratch, static_cast<unsigned char>(r)));
    TUNEFARM_RETURN_IF_ERROR(driver_->Check(driver_->cuEventRecord(start_, stream_), "cuEventRecord"));
    for (int i = 0; i < per_round; ++i) TUNEFARM_RETURN_IF_ERROR(Launch(k, dims, args));
    TUNEFARM_RETURN_IF_ERROR(driver_->Check(driver_->cuEventRecord(stop_, stream_), "cuEventRecord"));
    TUNEFARM_RETURN_IF_ERROR(driver_->Check(driver_->cuEventSynchronize(stop_), "cuEventSynchronize(" + k.name + ")"));
    float ms = 0;
    TUNEFARM_RETURN_IF_ERROR(driver_->Check(driver_->cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime"));
    total_ms += ms;
  }
  return total_ms / number;
}

bool IsStickyCudaError(const Status& s) {
  static const char* const kSticky[] = {"CUDA_ERROR_ILLEGAL_ADDRESS",       "CUDA_ERROR_LAUNCH_FAILED",
                                        "CUDA_ERROR_MISALIGNED_ADDRESS",    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
                                        "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC",
                                        "CUDA_ERROR_HARDWARE_STACK_ERROR",  "CUDA_ERROR_ASSERT",
                                        "CUDA_ERROR_LAUNCH_TIMEOUT"};
  for (const char* name : kSticky) {
    if (s.message().find(name) != std::string::npos) return true;
  }
  return false;
}

}  // namespace tunefarm
