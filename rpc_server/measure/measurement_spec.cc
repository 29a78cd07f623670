// MeasureSpec validation, the library's architecture check, and the parent/child file formats.
#include <elf.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>

#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/runtime/utf8.h"

namespace tunefarm::rpc_server {
namespace {

bool IsIdentifier(const std::string& s) {
  if (s.empty() || s.size() > 256 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

int64_t ArgSpec::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool IsArgDtype(const std::string& dtype) {
  return dtype == "float32" || dtype == "int32" || dtype == "uint8" || dtype == "int8";
}

bool IsArgRole(const std::string& role) {
  static const char* const kRoles[] = {"input", "weight",     "bias",         "residual", "slope",
                                       "scale", "zero_point", "compensation", "output"};
  return std::find(std::begin(kRoles), std::end(kRoles), role) != std::end(kRoles);
}

Status ValidateSpec(const MeasureSpec& spec, size_t library_bytes, int64_t memory_limit_bytes) {
  if (library_bytes == 0) return Status::InvalidArgument("the kernel library is empty");
  if (library_bytes > kMaxLibraryBytes) return Status::InvalidArgument("the kernel library is larger than 64 MiB");
  if (!IsIdentifier(spec.symbol))
    return Status::InvalidArgument("symbol '" + spec.symbol.substr(0, 64) + "' is not a C identifier");
  if (spec.args.empty() || spec.args.size() > size_t(kMaxArgs))
    return Status::InvalidArgument("a kernel takes 1 to 16 arguments");
  const TimingParams& t = spec.timing;
  if (t.number < 1 || t.number > 10000)
    return Status::InvalidArgument("timing.number must be in [1, 10000], got " + std::to_string(t.number));
  if (t.repeat < 1 || t.repeat > 1000)
    return Status::InvalidArgument("timing.repeat must be in [1, 1000], got " + std::to_string(t.repeat));
  if (t.min_repeat_ms < 0 || t.min_repeat_ms > 10000)
    return Status::InvalidArgument("timing.min_repeat_ms must be in [0, 10000]");
  if (t.cooldown_ms < 0 || t.cooldown_ms > 10000)
    return Status::InvalidArgument("timing.cooldown_ms must be in [0, 10000]");
  if (t.timeout_ms < 1 || t.timeout_ms > 600000)
    return Status::InvalidArgument("timing.timeout_ms must be in [1, 600000]");
  if (t.memory_limit_bytes < 0) return Status::InvalidArgument("timing.memory_limit_bytes must be >= 0");
  int64_t total = 0, outputs = 0;
  for (size_t i = 0; i < spec.args.size(); ++i) {
    const ArgSpec& a = spec.args[i];
    const std::string which = "argument " + std::to_string(i);
    if (!IsArgDtype(a.dtype)) {
      return Status::InvalidArgument(which + " has dtype '" + a.dtype.substr(0, 32) +
                                     "'; supported: float32, int32, uint8, int8");
    }
    if (a.role == "output" && a.dtype != "float32" && !spec.expected_outputs.empty())
      return Status::InvalidArgument(which + " is a " + a.dtype + " output; only float32 outputs can be checked");
    if (!IsArgRole(a.role)) {
      return Status::InvalidArgument(which + " has unknown role '" + a.role.substr(0, 32) + "'");
    }
    if (a.shape.empty() || a.shape.size() > 8) return Status::InvalidArgument(which + " must have 1 to 8 dimensions");
    int64_t n = 1;
    for (int64_t d : a.shape) {
      if (d < 1 || d > (int64_t(1) << 31) || n > (int64_t(1) << 31) / d)
        return Status::InvalidArgument(which + " has more than 2^31 elements or a dimension < 1");
      n *= d;
    }
    total += n * 4;
    if (a.role == "output") outputs += n;
  }
  if (total > (int64_t(8) << 30)) return Status::InvalidArgument("the arguments need more than 8 GiB");
  if (memory_limit_bytes > 0 && total > memory_limit_bytes) {
    return Status::InvalidArgument("the arguments need " + std::to_string(total >> 20) +
                                   " MiB, above the memory limit of " + std::to_string(memory_limit_bytes >> 20) +
                                   " MiB");
  }
  if (!spec.expected_outputs.empty() && int64_t(spec.expected_outputs.size()) != outputs) {
    return Status::InvalidArgument("expected_outputs holds " + std::to_string(spec.expected_outputs.size()) +
                                   " values, the outputs have " + std::to_string(outputs));
  }
  if (!(spec.tolerance >= 0)) return Status::InvalidArgument("tolerance must be >= 0");
  if (spec.gpu.enabled) {
    int64_t threads = 1;
    for (int d = 0; d < 3; ++d) {
      if (spec.gpu.grid[d] < 1 || spec.gpu.grid[d] > (int64_t(1) << 31) - 1)
        return Status::InvalidArgument("launch.grid needs 3 sizes in [1, 2^31-1]");
      if (spec.gpu.block[d] < 1 || spec.gpu.block[d] > 1024)
        return Status::InvalidArgument("launch.block needs 3 sizes in [1, 1024]");
      threads *= spec.gpu.block[d];
    }
    if (threads > 1024) {
      return Status::InvalidArgument("launch.block has " + std::to_string(threads) +
                                     " threads; a block holds at most 1024");
    }
  }
  return Status::OK();
}

Status CheckPtx(const std::string& bytes, const std::string& symbol) {
  if (bytes.size() >= SELFMAG && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0) {
    // A cubin (ptxas's machine code, KernelToMeasure.cubin): the driver checks its arch on loading.
    constexpr uint16_t kElfMachineCuda = 190;  // EM_CUDA
    if (bytes.size() < sizeof(Elf64_Ehdr)) {
      return Status::InvalidArgument("the kernel is a truncated ELF file (" + std::to_string(bytes.size()) +
                                     " bytes), not a cubin");
    }
    uint16_t machine = 0;
    std::memcpy(&machine, bytes.data() + 18, 2);
    if (machine != kElfMachineCuda) {
      return Status::InvalidArgument("the kernel is an ELF file for machine " + std::to_string(machine) +
                                     ", not a cubin (EM_CUDA, 190)");
    }
    if (bytes.find(symbol + '\0') == std::string::npos)
      return Status::InvalidArgument("the cubin has no symbol '" + symbol + "'");
    return Status::OK();
  }
  if (bytes.find(".version") == std::string::npos || bytes.find(".target") == std::string::npos) {
    return Status::InvalidArgument(
        "the kernel is neither PTX text (no .version/.target directives) nor a cubin: a CUDA server measures "
        "PTX or a cubin");
  }
  if (bytes.find(".entry " + symbol + "(") == std::string::npos) {
    return Status::InvalidArgument("the PTX has no entry '" + symbol + "'");
  }
  return Status::OK();
}

Status CheckLibraryArchitecture(const std::string& bytes) {
  if (bytes.size() < sizeof(Elf32_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    return Status::InvalidArgument("the kernel library is not an ELF file (truncated or garbage)");
  }
  uint16_t machine = 0, type = 0;
  std::memcpy(&type, bytes.data() + 16, 2);
  std::memcpy(&machine, bytes.data() + 18, 2);
  if (type != ET_DYN) return Status::InvalidArgument("the kernel library is not a shared object");
#if defined(__x86_64__)
  const uint16_t host = EM_X86_64;
  const char* host_name = "x86_64";
#elif defined(__aarch64__)
  const uint16_t host = EM_AARCH64;
  const char* host_name = "aarch64";
#elif defined(__arm__)
  const uint16_t host = EM_ARM;
  const char* host_name = "armv7";
#else
  const uint16_t host = machine;
  const char* host_name = "this";
#endif
  // Segments and section headers must lie inside the file: the loader maps them, and a mapping
  // past the end of the file faults (SIGBUS) instead of failing cleanly.
  const bool is64 = uint8_t(bytes[EI_CLASS]) == ELFCLASS64;
  if (is64 && bytes.size() >= sizeof(Elf64_Ehdr)) {
    Elf64_Ehdr eh;
    std::memcpy(&eh, bytes.data(), sizeof(eh));
    const uint64_t size = bytes.size();
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size ||
        uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr) > size - eh.e_phoff) {
      return Status::InvalidArgument("the kernel library is truncated or corrupt (program headers outside the file)");
    }
    for (int i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      std::memcpy(&ph, bytes.data() + eh.e_phoff + uint64_t(i) * sizeof(ph), sizeof(ph));
      if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
        return Status::InvalidArgument("the kernel library is truncated (a segment runs past the end of the file)");
      }
    }
    if (eh.e_shoff > size || uint64_t(eh.e_shnum) * eh.e_shentsize > size - eh.e_shoff) {
      return Status::InvalidArgument("the kernel library is truncated (section headers outside the file)");
    }
  } else if (!is64 && bytes.size() >= sizeof(Elf32_Ehdr)) {
    Elf32_Ehdr eh;
    std::memcpy(&eh, bytes.data(), sizeof(eh));
    const uint64_t size = bytes.size();
    if (eh.e_phentsize != sizeof(Elf32_Phdr) || eh.e_phoff > size ||
        uint64_t(eh.e_phnum) * sizeof(Elf32_Phdr) > size - eh.e_phoff) {
      return Status::InvalidArgument("the kernel library is truncated or corrupt (program headers outside the file)");
    }
    for (int i = 0; i < eh.e_phnum; ++i) {
      Elf32_Phdr ph;
      std::memcpy(&ph, bytes.data() + eh.e_phoff + uint64_t(i) * sizeof(ph), sizeof(ph));
      if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
        return Status::InvalidArgument("the kernel library is truncated (a segment runs past the end of the file)");
      }
    }
  }
  if (machine != host) {
    const char* lib = machine == EM_X86_64    ? "x86_64"
                      : machine == EM_AARCH64 ? "aarch64"
                      : machine == EM_ARM     ? "armv7"
                                              : "another";
    return Status::InvalidArgument(std::string("the kernel library is built for ") + lib + ", this server runs " +
                                   host_name);
  }
  return Status::OK();
}

MeasureSpec FromProto(const v1::KernelToMeasure& k, const v1::TimingParams& t) {
  MeasureSpec spec;
  spec.symbol = k.symbol();
  for (const auto& a : k.args())
    spec.args.push_back(ArgSpec{{a.shape().begin(), a.shape().end()}, a.dtype(), a.role()});
  spec.timing.number = t.number();
  spec.timing.repeat = t.repeat();
  spec.timing.min_repeat_ms = t.min_repeat_ms();
  spec.timing.cooldown_ms = t.cooldown_ms();
  spec.timing.flush_cache = t.flush_cache();
  spec.timing.timeout_ms = t.timeout_ms();
  spec.timing.memory_limit_bytes = t.memory_limit_bytes();
  spec.seed = k.seed();
  spec.tolerance = k.tolerance();
  if (k.has_launch()) {
    spec.gpu.enabled = true;
    for (int d = 0; d < 3; ++d) {
      spec.gpu.grid[d] = d < k.launch().grid_size() ? k.launch().grid(d) : 0;
      spec.gpu.block[d] = d < k.launch().block_size() ? k.launch().block(d) : 0;
    }
  }
  const std::string& expected = k.expected_outputs();
  spec.expected_outputs.resize(expected.size() / 4);
  if (!spec.expected_outputs.empty())
    std::memcpy(spec.expected_outputs.data(), expected.data(), spec.expected_outputs.size() * 4);
  return spec;
}

void ToProto(const MeasureSpec& s, v1::KernelToMeasure* k) {
  k->set_symbol(s.symbol);
  for (const ArgSpec& a : s.args) {
    v1::ArgSpec* arg = k->add_args();
    for (int64_t d : a.shape) arg->add_shape(d);
    arg->set_dtype(a.dtype);
    arg->set_role(a.role);
  }
  k->set_seed(s.seed);
  k->set_expected_outputs(
      std::string(reinterpret_cast<const char*>(s.expected_outputs.data()), s.expected_outputs.size() * 4));
  k->set_tolerance(s.tolerance);
  if (s.gpu.enabled) {
    v1::GpuLaunch* launch = k->mutable_launch();
    for (int d = 0; d < 3; ++d) {
      launch->add_grid(s.gpu.grid[d]);
      launch->add_block(s.gpu.block[d]);
    }
  }
}

void ToProto(const TimingParams& t, v1::TimingParams* out) {
  out->set_number(t.number);
  out->set_repeat(t.repeat);
  out->set_min_repeat_ms(t.min_repeat_ms);
  out->set_cooldown_ms(t.cooldown_ms);
  out->set_flush_cache(t.flush_cache);
  out->set_timeout_ms(t.timeout_ms);
  out->set_memory_limit_bytes(t.memory_limit_bytes);
}

std::string SerializeSpec(const MeasureSpec& s) {
  v1::ChildSpec child;
  ToProto(s, child.mutable_kernel());
  ToProto(s.timing, child.mutable_timing());
  if (s.gpu.enabled) child.set_gpu_ordinal(s.gpu.ordinal);
  child.set_threads(s.threads);
  return child.SerializeAsString();
}

Result<MeasureSpec> ParseSpec(const std::string& bytes) {
  v1::ChildSpec child;
  if (!child.ParseFromString(bytes))
    return Status::InvalidArgument("malformed measurement spec: not a ChildSpec message");
  if (child.kernel().expected_outputs().size() % 4) {
    return Status::InvalidArgument(
        "malformed measurement spec: expected_outputs is not a whole number of float32 values");
  }
  MeasureSpec s = FromProto(child.kernel(), child.timing());
  s.threads = child.threads();
  s.gpu.ordinal = child.gpu_ordinal();
  return s;
}

v1::MeasureError::Kind OutcomeKindToProto(OutcomeKind k) {
  switch (k) {
    case OutcomeKind::kOk:
      return v1::MeasureError::KIND_UNSPECIFIED;
    case OutcomeKind::kInstantiation:
      return v1::MeasureError::INSTANTIATION;
    case OutcomeKind::kCompile:
      return v1::MeasureError::COMPILE;
    case OutcomeKind::kRuntimeCrash:
      return v1::MeasureError::RUNTIME_CRASH;
    case OutcomeKind::kTimeout:
      return v1::MeasureError::TIMEOUT;
    case OutcomeKind::kWrongAnswer:
      return v1::MeasureError::WRONG_ANSWER;
    case OutcomeKind::kBadRequest:
      return v1::MeasureError::BAD_REQUEST;
  }
  return v1::MeasureError::RUNTIME_CRASH;
}

void OutcomeToResult(const MeasureOutcome& o, v1::MeasureResult* r) {
  for (double c : o.costs_ms) r->add_costs_ms(c);
  if (o.kind != OutcomeKind::kOk) {
    r->mutable_error()->set_kind(OutcomeKindToProto(o.kind));
    // proto3 strings must be UTF-8 (a parser refuses anything else): a kernel's or a loader's bytes
    // that are not become '?'.
    std::string message = o.message;
    if (!IsValidUtf8(message)) {
      for (char& c : message) {
        if (uint8_t(c) >= 0x80) c = '?';
      }
    }
    r->mutable_error()->set_message(message);
    r->mutable_error()->set_signal(o.signal);
  }
  r->set_number(o.number);
  r->set_threads(o.threads);
  r->set_run_ms(o.run_ms);
  r->set_device_warmup_ms(o.device_warmup_ms);
  r->set_load_ms(o.load_ms);
}

std::string SerializeOutcome(const MeasureOutcome& o) {
  v1::MeasureResult r;
  OutcomeToResult(o, &r);
  return r.SerializeAsString();
}

Result<MeasureOutcome> OutcomeFromResult(const v1::MeasureResult& r) {
  MeasureOutcome o;
  if (r.has_error()) {
    switch (r.error().kind()) {
      case v1::MeasureError::INSTANTIATION:
        o.kind = OutcomeKind::kInstantiation;
        break;
      case v1::MeasureError::COMPILE:
        o.kind = OutcomeKind::kCompile;
        break;
      case v1::MeasureError::RUNTIME_CRASH:
        o.kind = OutcomeKind::kRuntimeCrash;
        break;
      case v1::MeasureError::TIMEOUT:
        o.kind = OutcomeKind::kTimeout;
        break;
      case v1::MeasureError::WRONG_ANSWER:
        o.kind = OutcomeKind::kWrongAnswer;
        break;
      case v1::MeasureError::BAD_REQUEST:
        o.kind = OutcomeKind::kBadRequest;
        break;
      default:
        return Status::InvalidArgument("malformed measurement outcome: unknown error kind " +
                                       std::to_string(int(r.error().kind())));
    }
    o.message = r.error().message();
    o.signal = r.error().signal();
  } else if (r.costs_ms_size() == 0) {
    // A successful measurement has a cost per round; nothing at all is a child that wrote nothing.
    return Status::InvalidArgument("the measurement produced no outcome");
  }
  // A NaN, infinite or negative time would become a trial's mean and poison the best configs
  // and the cost model (found by libFuzzer): refused, naming the round.
  for (int i = 0; i < r.costs_ms_size(); ++i) {
    const double c = r.costs_ms(i);
    if (!std::isfinite(c) || c < 0) {
      return Status::InvalidArgument("malformed measurement outcome: round " + std::to_string(i) + " took " +
                                     std::to_string(c) + " ms (a time is finite and not negative)");
    }
  }
  if (!std::isfinite(r.run_ms()) || r.run_ms() < 0 || r.number() < 0 || r.threads() < 0 ||
      !std::isfinite(r.device_warmup_ms()) || r.device_warmup_ms() < 0 || !std::isfinite(r.load_ms()) ||
      r.load_ms() < 0) {
    return Status::InvalidArgument("malformed measurement outcome: run_ms " + std::to_string(r.run_ms()) + ", number " +
                                   std::to_string(r.number()) + ", threads " + std::to_string(r.threads()) +
                                   ", device_warmup_ms " + std::to_string(r.device_warmup_ms()) + ", load_ms " +
                                   std::to_string(r.load_ms()) + " (each is finite and not negative)");
  }
  o.costs_ms.assign(r.costs_ms().begin(), r.costs_ms().end());
  o.number = r.number();
  o.threads = r.threads();
  o.run_ms = r.run_ms();
  o.device_warmup_ms = r.device_warmup_ms();
  o.load_ms = r.load_ms();
  return o;
}

Result<MeasureOutcome> ParseOutcome(const std::string& bytes) {
  v1::MeasureResult r;
  if (!r.ParseFromString(bytes))
    return Status::InvalidArgument("malformed measurement outcome: not a MeasureResult message");
  return OutcomeFromResult(r);
}

}  // namespace tunefarm::rpc_server
