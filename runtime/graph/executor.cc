#include "tunefarm/runtime/executor.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "runtime/graph/memory_plan.h"
#include "tunefarm/runtime/cpu_features.h"
#include "tunefarm/runtime/element_convert.h"
#include "tunefarm/runtime/thread_pool.h"

namespace tunefarm::runtime {
namespace {

constexpr size_t kAlign = 64;
size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

uint8_t* AllocAligned(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, kAlign, std::max<size_t>(AlignUp(bytes), kAlign)) != 0) return nullptr;
  return static_cast<uint8_t*>(p);
}

// The library travels inside the artifact; dlopen needs a file. An anonymous memory file keeps
// it off the disk; where memfd_create is missing, a temporary file is unlinked right after loading.
class LibraryFile {
 public:
  ~LibraryFile() {
    if (fd_ >= 0) close(fd_);
  }
  Status Create(const std::string& bytes) {
    fd_ = int(memfd_create("tunefarm-kernels", MFD_CLOEXEC));
    if (fd_ >= 0) {
      path_ = "/proc/self/fd/" + std::to_string(fd_);
    } else {
      const char* dir = std::getenv("TMPDIR");
      std::string templ = std::string(dir ? dir : "/tmp") + "/tunefarm-kernels-XXXXXX";
      fd_ = mkstemp(templ.data());
      if (fd_ < 0)
        return Status::IOError(std::string("cannot create a file for the kernel library: ") + std::strerror(errno));
      path_ = templ;
      unlink_after_load_ = true;
    }
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
      if (n <= 0) return Status::IOError(std::string("cannot write the kernel library: ") + std::strerror(errno));
      done += size_t(n);
    }
    return Status::OK();
  }
  const std::string& path() const { return path_; }
  void Loaded() {
    if (unlink_after_load_) unlink(path_.c_str());
  }

 private:
  int fd_ = -1;
  std::string path_;
  bool unlink_after_load_ = false;
};

}  // namespace

int64_t TensorInfo::bytes() const {
  int64_t n = ElementSize(dtype);
  for (int64_t d : shape) n *= d;
  return n;
}

void Executor::AlignedFree::operator()(void* p) const { std::free(p); }

Executor::~Executor() = default;

void Executor::SetNumThreads(int n) { ThreadPool::SetGlobalThreads(n); }

std::string Executor::Description() const {
  const int n = ThreadPool::Global().num_threads();
  return std::to_string(n) + (n == 1 ? " thread" : " threads");
}

Result<std::unique_ptr<Executor>> Executor::LoadFile(const std::string& path) {
  TUNEFARM_ASSIGN_OR_RETURN(Artifact a, Artifact::ReadFile(path));
  auto e = Load(std::move(a));
  if (!e.ok()) return e.status().WithContext(path);
  return e;
}

Result<std::unique_ptr<Executor>> Executor::Load(Artifact artifact) {
  TUNEFARM_RETURN_IF_ERROR(artifact.Validate());
  if (artifact.device_kind() != Device::Kind::kCpu) {
    return Status::FailedPrecondition(
        "the artifact holds CUDA kernels (PTX, target " + artifact.target +
        "): the CPU executor cannot run them; run it on a GPU host with --device cuda (runtime::CudaExecutor)");
  }
  // Every compiled CPU artifact names its triple (container version 1, which did not, is refused
  // by the reader); one assembled in memory without kernels or a triple has nothing to check.
  if (!artifact.kernels.empty() && !artifact.triple.empty()) {
    TUNEFARM_RETURN_IF_ERROR(CheckRunsOnHost(artifact.triple, artifact.cpu, artifact.cpu_features));
  }
  std::unique_ptr<Executor> e(new Executor());
  e->artifact_ = std::move(artifact);
  const Artifact& a = e->artifact_;
  if (!a.kernels.empty()) {
    // The memory file must stay open while the library is loaded: dlopen matches libraries by
    // path first, and a reused descriptor number would otherwise alias another artifact's kernels.
    auto file = std::make_shared<LibraryFile>();
    TUNEFARM_RETURN_IF_ERROR(file->Create(a.library));
    auto lib = KernelLibrary::Open(file->path());
    file->Loaded();
    if (!lib.ok()) {
      return Status::InvalidArgument("the artifact's kernel library (target " + a.target +
                                     ") does not load on this machine: " + lib.status().message());
    }
    e->library_ = std::move(*lib);
    e->library_file_ = file;
    for (const auto& k : a.kernels) {
      TUNEFARM_ASSIGN_OR_RETURN(TunefarmKernelFn fn, e->library_->Lookup(k.symbol));
      e->fns_.push_back(fn);
    }
  }
  TUNEFARM_RETURN_IF_ERROR(e->Plan());
  // Both now live elsewhere (the aligned parameter copy, the loaded library): keep one copy.
  e->param_bytes_ = int64_t(e->artifact_.params.size());
  std::string().swap(e->artifact_.params);
  std::string().swap(e->artifact_.library);
  return e;
}

Status Executor::Plan() {
  const Artifact& a = artifact_;
  const size_t nt = a.tensors.size();
  auto base = [&](size_t t) { return a.tensors[t].view_of >= 0 ? size_t(a.tensors[t].view_of) : t; };

  params_.reset(AllocAligned(a.params.size()));
  if (!params_) return Status::Internal("out of memory for parameters");
  std::memcpy(params_.get(), a.params.data(), a.params.size());

  const ArenaPlan plan = PlanArena(a, kAlign);
  arena_size_ = plan.size;
  const std::vector<size_t>& offset = plan.offset;
  arena_.reset(AllocAligned(arena_size_));
  if (!arena_)
    return Status::Internal("out of memory for the activation arena (" + std::to_string(arena_size_) + " bytes)");

  tensor_ptrs_.assign(nt, nullptr);
  peak_bytes_ = int64_t(arena_size_);
  for (size_t t = 0; t < nt; ++t) {
    const ArtifactTensor& tensor = a.tensors[t];
    if (tensor.view_of >= 0) continue;
    switch (tensor.kind) {
      case ArtifactTensor::kParam:
        tensor_ptrs_[t] = params_.get() + tensor.param_offset;
        break;
      case ArtifactTensor::kIntermediate:
        tensor_ptrs_[t] = arena_.get() + offset[t];
        break;
      case ArtifactTensor::kInput:
      case ArtifactTensor::kOutput: {
        io_buffers_.emplace_back(AllocAligned(size_t(tensor.bytes())));
        if (!io_buffers_.back()) return Status::Internal("out of memory for tensor '" + tensor.name + "'");
        std::memset(io_buffers_.back().get(), 0, size_t(tensor.bytes()));
        tensor_ptrs_[t] = io_buffers_.back().get();
        peak_bytes_ += int64_t(AlignUp(size_t(tensor.bytes())));
        break;
      }
    }
  }
  for (size_t t = 0; t < nt; ++t) {
    if (a.tensors[t].view_of >= 0) tensor_ptrs_[t] = tensor_ptrs_[base(t)];
  }
  if (a.symbolic_dim) {
    // Its own storage, never shared in the arena: it is written before the first kernel runs.
    size_buffer_.reset(AllocAligned(sizeof(int64_t)));
    if (!size_buffer_) return Status::Internal("out of memory");
    size_ = a.symbolic_dim->max;
    std::memcpy(size_buffer_.get(), &size_, sizeof(size_));
    tensor_ptrs_[size_t(a.symbolic_dim->tensor)] = size_buffer_.get();
  }
  for (const auto& k : a.kernels) {
    std::vector<void*> args;
    for (int arg : k.args) args.push_back(tensor_ptrs_[size_t(arg)]);
    kernel_args_.push_back(std::move(args));
  }
  for (int i : a.inputs) {
    const ArtifactTensor& tensor = a.tensors[size_t(i)];
    input_info_.push_back({tensor.name, tensor.caller_dtype(), tensor.shape, tensor.leading_scale});
    input_sizes_.push_back(size_);
  }
  for (int o : a.outputs) {
    const ArtifactTensor& tensor = a.tensors[size_t(o)];
    output_info_.push_back({tensor.name, tensor.caller_dtype(), tensor.shape, tensor.leading_scale});
    // An output with an edge type is converted after each run into a buffer of its own.
    edge_outputs_.emplace_back(tensor.edge_dtype ? AllocAligned(size_t(output_info_.back().bytes())) : nullptr);
    if (tensor.edge_dtype && !edge_outputs_.back())
      return Status::Internal("out of memory for output '" + tensor.name + "'");
  }
  return Status::OK();
}

Result<size_t> FindInput(const std::vector<TensorInfo>& inputs, const std::string& name) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].name == name) return i;
  }
  std::string known;
  for (const auto& in : inputs) known += (known.empty() ? "" : ", ") + in.name;
  return Status::InvalidArgument("the model has no input '" + name + "' (inputs: " + known + ")");
}

Status Executor::SetInput(const std::string& name, const void* data, size_t bytes) {
  TUNEFARM_ASSIGN_OR_RETURN(size_t index, FindInput(input_info_, name));
  return SetInput(index, data, bytes);
}

Status Executor::SetInput(size_t index, const void* data, size_t bytes) {
  if (index >= input_info_.size())
    return Status::InvalidArgument("input index " + std::to_string(index) + " out of range");
  const TensorInfo& info = input_info_[index];
  const ArtifactTensor& tensor = artifact_.tensors[size_t(artifact_.inputs[index])];
  int64_t elements = tensor.num_elements();
  if (tensor.leading_scale > 0) {
    // Any size in the range: the byte count says which, in units of the rows one step of the size adds.
    const SymbolicDim& dim = *artifact_.symbolic_dim;
    const int64_t unit = info.bytes() / dim.max;
    const std::string range = "[" + std::to_string(dim.min) + ", " + std::to_string(dim.max) + "]";
    if (unit == 0 || int64_t(bytes) % unit != 0) {
      return Status::InvalidArgument("input '" + info.name + "' takes " + std::to_string(unit) +
                                     " bytes for each unit of '" + dim.name + "' (its dimension 0 is " +
                                     std::to_string(tensor.leading_scale) + " x '" + dim.name + "', in " + range +
                                     "), got " + std::to_string(bytes));
    }
    const int64_t size = int64_t(bytes) / unit;
    if (size < dim.min || size > dim.max) {
      return Status::InvalidArgument("input '" + info.name + "': '" + dim.name + "' (its dimension 0" +
                                     (tensor.leading_scale > 1 ? " / " + std::to_string(tensor.leading_scale) : "") +
                                     ") is " + std::to_string(size) + ", outside the artifact's range " + range);
    }
    input_sizes_[index] = size;
    elements = elements / dim.max * size;
  } else if (int64_t(bytes) != info.bytes()) {
    return Status::InvalidArgument("input '" + info.name + "' takes " + std::to_string(info.bytes()) + " bytes, got " +
                                   std::to_string(bytes));
  }
  void* storage = tensor_ptrs_[size_t(artifact_.inputs[index])];
  if (tensor.edge_dtype)
    return ConvertToStorage(*tensor.edge_dtype, data, storage, elements, "input '" + info.name + "'");
  std::memcpy(storage, data, bytes);
  return Status::OK();
}

Status Executor::BeginRun() {
  if (!artifact_.symbolic_dim) return Status::OK();
  const SymbolicDim& dim = *artifact_.symbolic_dim;
  int64_t size = -1;
  size_t first = 0;
  for (size_t i = 0; i < input_info_.size(); ++i) {
    if (input_info_[i].leading_scale == 0) continue;
    if (size < 0) {
      size = input_sizes_[i];
      first = i;
    } else if (input_sizes_[i] != size) {
      return Status::InvalidArgument("inputs '" + input_info_[first].name + "' and '" + input_info_[i].name +
                                     "' disagree on '" + dim.name + "': " + std::to_string(size) + " and " +
                                     std::to_string(input_sizes_[i]));
    }
  }
  size_ = size;
  std::memcpy(size_buffer_.get(), &size_, sizeof(size_));
  for (TensorInfo& out : output_info_) {
    if (out.leading_scale > 0) out.shape[0] = out.leading_scale * size_;
  }
  return Status::OK();
}

int64_t Executor::RunElements(const ArtifactTensor& tensor) const {
  if (tensor.leading_scale == 0) return tensor.num_elements();
  return tensor.num_elements() / artifact_.symbolic_dim->max * size_;
}

void Executor::ConvertOutputs() {
  for (size_t o = 0; o < edge_outputs_.size(); ++o) {
    if (!edge_outputs_[o]) continue;
    const ArtifactTensor& tensor = artifact_.tensors[size_t(artifact_.outputs[o])];
    ConvertFromStorage(*tensor.edge_dtype, tensor_ptrs_[size_t(artifact_.outputs[o])], edge_outputs_[o].get(),
                       RunElements(tensor));
  }
}

// Whether kernel k runs: an If branch's kernels only when their conditions hold.
bool Executor::Runs(size_t k) const {
  for (const auto& [t, value] : artifact_.kernels[k].run_if) {
    if ((*static_cast<const uint8_t*>(tensor_ptrs_[size_t(t)]) != 0) != value) return false;
  }
  return true;
}

// The kernel's runtime indices, checked before it reads through them (IndexCheck), and the
// conditions under which the run cannot go on (ConditionCheck).
Status Executor::CheckBeforeRunning(size_t k) const {
  const ArtifactKernel& kernel = artifact_.kernels[k];
  for (const auto& check : kernel.index_checks) {
    const ArtifactTensor& t = artifact_.tensors[size_t(check.tensor)];
    TUNEFARM_RETURN_IF_ERROR(CheckIndices(check, t.dtype, tensor_ptrs_[size_t(check.tensor)], RunElements(t)));
  }
  if (kernel.condition_checks.empty()) return Status::OK();
  return CheckConditions(kernel.condition_checks, [this](int t) -> Result<bool> {
    return *static_cast<const uint8_t*>(tensor_ptrs_[size_t(t)]) != 0;
  });
}

Status Executor::Run() {
  TUNEFARM_RETURN_IF_ERROR(BeginRun());
  for (size_t k = 0; k < fns_.size(); ++k) {
    if (!Runs(k)) continue;
    TUNEFARM_RETURN_IF_ERROR(CheckBeforeRunning(k));
    int32_t rc = fns_[k](kernel_args_[k].data());
    if (rc != 0) {
      return Status::Internal("kernel " + artifact_.kernels[k].symbol + " (" + artifact_.kernels[k].op +
                              ") failed with code " + std::to_string(rc));
    }
  }
  ConvertOutputs();
  return Status::OK();
}

Status Executor::RunProfiled(std::vector<double>* kernel_ms) {
  kernel_ms->resize(fns_.size(), 0.0);
  TUNEFARM_RETURN_IF_ERROR(BeginRun());
  for (size_t k = 0; k < fns_.size(); ++k) {
    if (!Runs(k)) continue;
    TUNEFARM_RETURN_IF_ERROR(CheckBeforeRunning(k));
    auto t0 = std::chrono::steady_clock::now();
    int32_t rc = fns_[k](kernel_args_[k].data());
    (*kernel_ms)[k] += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (rc != 0)
      return Status::Internal("kernel " + artifact_.kernels[k].symbol + " failed with code " + std::to_string(rc));
  }
  ConvertOutputs();
  return Status::OK();
}

const void* Executor::Output(size_t index) const {
  if (edge_outputs_[index]) return edge_outputs_[index].get();
  return tensor_ptrs_[size_t(artifact_.outputs[index])];
}

}  // namespace tunefarm::runtime
