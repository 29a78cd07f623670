// MeasureSpec validation, the library's architecture check, and the parent/child file formats.
#include <elf.h>
#include <sys/utsname.h>

#include <cstring>
#include <sstream>

#include "tunefarm/rpc_server/measurement.h"

namespace tunefarm::rpc_server {
namespace {

bool IsIdentifier(const std::string& s) {
  if (s.empty() || s.size() > 256 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string Hex(const void* data, size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

bool Unhex(const std::string& s, std::string* out) {
  if (s.size() % 2) return false;
  out->clear();
  for (size_t i = 0; i < s.size(); i += 2) {
    auto nib = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
    int hi = nib(s[i]), lo = nib(s[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(char(hi * 16 + lo));
  }
  return true;
}

// Each line "name value..."; returns false on a malformed number.
bool ParseInts(std::istringstream& in, std::vector<int64_t>* out) {
  std::string tok;
  while (in >> tok) {
    char* end = nullptr;
    long long v = std::strtoll(tok.c_str(), &end, 10);
    if (*end) return false;
    out->push_back(v);
  }
  return true;
}

}  // namespace

int64_t ArgSpec::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const char* OutcomeKindName(OutcomeKind k) {
  switch (k) {
    case OutcomeKind::kOk: return "ok";
    case OutcomeKind::kInstantiation: return "instantiation_error";
    case OutcomeKind::kCompile: return "compile_error";
    case OutcomeKind::kRuntimeCrash: return "runtime_error";
    case OutcomeKind::kTimeout: return "timeout";
    case OutcomeKind::kWrongAnswer: return "wrong_answer";
    case OutcomeKind::kBadRequest: return "bad_request";
  }
  return "runtime_error";
}

std::string ValidateSpec(const MeasureSpec& spec, size_t library_bytes, int64_t memory_limit_bytes) {
  if (library_bytes == 0) return "the kernel library is empty";
  if (library_bytes > kMaxLibraryBytes) return "the kernel library is larger than 64 MiB";
  if (!IsIdentifier(spec.symbol)) return "symbol '" + spec.symbol.substr(0, 64) + "' is not a C identifier";
  if (spec.args.empty() || spec.args.size() > size_t(kMaxArgs)) return "a kernel takes 1 to 16 arguments";
  const TimingParams& t = spec.timing;
  if (t.number < 1 || t.number > 10000) return "timing.number must be in [1, 10000], got " + std::to_string(t.number);
  if (t.repeat < 1 || t.repeat > 1000) return "timing.repeat must be in [1, 1000], got " + std::to_string(t.repeat);
  if (t.min_repeat_ms < 0 || t.min_repeat_ms > 10000) return "timing.min_repeat_ms must be in [0, 10000]";
  if (t.cooldown_ms < 0 || t.cooldown_ms > 10000) return "timing.cooldown_ms must be in [0, 10000]";
  if (t.timeout_ms < 1 || t.timeout_ms > 600000) return "timing.timeout_ms must be in [1, 600000]";
  if (t.memory_limit_bytes < 0) return "timing.memory_limit_bytes must be >= 0";
  int64_t total = 0, outputs = 0;
  for (size_t i = 0; i < spec.args.size(); ++i) {
    const ArgSpec& a = spec.args[i];
    const std::string which = "argument " + std::to_string(i);
    if (a.dtype != "float32") return which + " has dtype '" + a.dtype.substr(0, 32) + "'; only float32 is supported";
    if (a.role != "input" && a.role != "weight" && a.role != "bias" && a.role != "residual" && a.role != "output") {
      return which + " has unknown role '" + a.role.substr(0, 32) + "'";
    }
    if (a.shape.empty() || a.shape.size() > 8) return which + " must have 1 to 8 dimensions";
    int64_t n = 1;
    for (int64_t d : a.shape) {
      if (d < 1 || d > (int64_t(1) << 31) || n > (int64_t(1) << 31) / d) return which + " has more than 2^31 elements or a dimension < 1";
      n *= d;
    }
    total += n * 4;
    if (a.role == "output") outputs += n;
  }
  if (total > (int64_t(8) << 30)) return "the arguments need more than 8 GiB";
  if (memory_limit_bytes > 0 && total > memory_limit_bytes) {
    return "the arguments need " + std::to_string(total >> 20) + " MiB, above the memory limit of " +
           std::to_string(memory_limit_bytes >> 20) + " MiB";
  }
  if (!spec.expected_outputs.empty() && int64_t(spec.expected_outputs.size()) != outputs) {
    return "expected_outputs holds " + std::to_string(spec.expected_outputs.size()) + " values, the outputs have " +
           std::to_string(outputs);
  }
  if (!(spec.tolerance >= 0)) return "tolerance must be >= 0";
  if (spec.gpu.enabled) {
    int64_t threads = 1;
    for (int d = 0; d < 3; ++d) {
      if (spec.gpu.grid[d] < 1 || spec.gpu.grid[d] > (int64_t(1) << 31) - 1) return "launch.grid needs 3 sizes in [1, 2^31-1]";
      if (spec.gpu.block[d] < 1 || spec.gpu.block[d] > 1024) return "launch.block needs 3 sizes in [1, 1024]";
      threads *= spec.gpu.block[d];
    }
    if (threads > 1024) return "launch.block has " + std::to_string(threads) + " threads; a block holds at most 1024";
  }
  return "";
}

std::string CheckPtx(const std::string& bytes, const std::string& symbol) {
  if (bytes.find(".version") == std::string::npos || bytes.find(".target") == std::string::npos) {
    return "the kernel is not PTX text (no .version/.target directives): a CUDA server measures PTX";
  }
  if (bytes.find(".entry " + symbol + "(") == std::string::npos) {
    return "the PTX has no entry '" + symbol + "'";
  }
  return "";
}

std::string CheckLibraryArchitecture(const std::string& bytes) {
  if (bytes.size() < sizeof(Elf32_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    return "the kernel library is not an ELF file (truncated or garbage)";
  }
  uint16_t machine = 0, type = 0;
  std::memcpy(&type, bytes.data() + 16, 2);
  std::memcpy(&machine, bytes.data() + 18, 2);
  if (type != ET_DYN) return "the kernel library is not a shared object";
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
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size || uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr) > size - eh.e_phoff) {
      return "the kernel library is truncated or corrupt (program headers outside the file)";
    }
    for (int i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      std::memcpy(&ph, bytes.data() + eh.e_phoff + uint64_t(i) * sizeof(ph), sizeof(ph));
      if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
        return "the kernel library is truncated (a segment runs past the end of the file)";
      }
    }
    if (eh.e_shoff > size || uint64_t(eh.e_shnum) * eh.e_shentsize > size - eh.e_shoff) {
      return "the kernel library is truncated (section headers outside the file)";
    }
  } else if (!is64 && bytes.size() >= sizeof(Elf32_Ehdr)) {
    Elf32_Ehdr eh;
    std::memcpy(&eh, bytes.data(), sizeof(eh));
    const uint64_t size = bytes.size();
    if (eh.e_phentsize != sizeof(Elf32_Phdr) || eh.e_phoff > size || uint64_t(eh.e_phnum) * sizeof(Elf32_Phdr) > size - eh.e_phoff) {
      return "the kernel library is truncated or corrupt (program headers outside the file)";
    }
    for (int i = 0; i < eh.e_phnum; ++i) {
      Elf32_Phdr ph;
      std::memcpy(&ph, bytes.data() + eh.e_phoff + uint64_t(i) * sizeof(ph), sizeof(ph));
      if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
        return "the kernel library is truncated (a segment runs past the end of the file)";
      }
    }
  }
  if (machine != host) {
    const char* lib = machine == EM_X86_64 ? "x86_64" : machine == EM_AARCH64 ? "aarch64" : machine == EM_ARM ? "armv7" : "another";
    return std::string("the kernel library is built for ") + lib + ", this server runs " + host_name;
  }
  return "";
}

std::string SerializeSpec(const MeasureSpec& s) {
  std::ostringstream out;
  out << "symbol " << s.symbol << "\n";
  for (const auto& a : s.args) {
    out << "arg " << a.dtype << " " << a.role;
    for (int64_t d : a.shape) out << " " << d;
    out << "\n";
  }
  const TimingParams& t = s.timing;
  out << "timing " << t.number << " " << t.repeat << " " << t.min_repeat_ms << " " << t.cooldown_ms << " "
      << (t.flush_cache ? 1 : 0) << " " << t.timeout_ms << " " << t.memory_limit_bytes << "\n";
  out << "seed " << s.seed << "\nthreads " << s.threads << "\n";
  if (s.gpu.enabled) {
    out << "gpu " << s.gpu.ordinal;
    for (int d = 0; d < 3; ++d) out << " " << s.gpu.grid[d];
    for (int d = 0; d < 3; ++d) out << " " << s.gpu.block[d];
    out << "\n";
  }
  out << "tolerance " << Hex(&s.tolerance, 4) << "\n";
  out << "expected " << Hex(s.expected_outputs.data(), s.expected_outputs.size() * 4) << "\n";
  return out.str();
}

Result<MeasureSpec> ParseSpec(const std::string& text) {
  MeasureSpec s;
  std::istringstream lines(text);
  std::string line;
  auto bad = [](const std::string& why) { return Status::InvalidArgument("malformed measurement spec: " + why); };
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "symbol") {
      in >> s.symbol;
    } else if (key == "arg") {
      ArgSpec a;
      in >> a.dtype >> a.role;
      if (!ParseInts(in, &a.shape)) return bad("arg shape");
      s.args.push_back(a);
    } else if (key == "timing") {
      std::vector<int64_t> v;
      if (!ParseInts(in, &v) || v.size() != 7) return bad("timing");
      TimingParams& t = s.timing;
      t.number = int(v[0]), t.repeat = int(v[1]), t.min_repeat_ms = int(v[2]), t.cooldown_ms = int(v[3]);
      t.flush_cache = v[4] != 0, t.timeout_ms = int(v[5]), t.memory_limit_bytes = v[6];
    } else if (key == "seed") {
      in >> s.seed;
    } else if (key == "threads") {
      in >> s.threads;
    } else if (key == "gpu") {
      std::vector<int64_t> v;
      if (!ParseInts(in, &v) || v.size() != 7) return bad("gpu");
      s.gpu.enabled = true;
      s.gpu.ordinal = int(v[0]);
      for (int d = 0; d < 3; ++d) {
        s.gpu.grid[d] = v[size_t(1 + d)];
        s.gpu.block[d] = v[size_t(4 + d)];
      }
    } else if (key == "tolerance" || key == "expected") {
      std::string hex, raw;
      in >> hex;
      if (!Unhex(hex, &raw) || raw.size() % 4) return bad(key);
      if (key == "tolerance" && raw.size() == 4) std::memcpy(&s.tolerance, raw.data(), 4);
      if (key == "expected") {
        s.expected_outputs.resize(raw.size() / 4);
        if (!raw.empty()) std::memcpy(s.expected_outputs.data(), raw.data(), raw.size());
      }
    } else if (!key.empty()) {
      return bad("unknown line '" + key + "'");
    }
  }
  return s;
}

std::string SerializeOutcome(const MeasureOutcome& o) {
  std::ostringstream out;
  out.precision(17);
  out << "kind " << int(o.kind) << "\nsignal " << o.signal << "\nnumber " << o.number << "\nrun_ms " << o.run_ms
      << "\nthreads " << o.threads << "\ncosts";
  for (double c : o.costs_ms) out << " " << c;
  out << "\nmessage " << Hex(o.message.data(), o.message.size()) << "\n";
  return out.str();
}

Result<MeasureOutcome> ParseOutcome(const std::string& text) {
  MeasureOutcome o;
  std::istringstream lines(text);
  std::string line;
  bool have_kind = false;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "kind") {
      int k = -1;
      in >> k;
      if (k < 0 || k > int(OutcomeKind::kBadRequest)) return Status::InvalidArgument("bad outcome kind");
      o.kind = OutcomeKind(k);
      have_kind = true;
    } else if (key == "signal") {
      in >> o.signal;
    } else if (key == "number") {
      in >> o.number;
    } else if (key == "run_ms") {
      in >> o.run_ms;
    } else if (key == "threads") {
      in >> o.threads;
    } else if (key == "costs") {
      double c;
      while (in >> c) o.costs_ms.push_back(c);
    } else if (key == "message") {
      std::string hex;
      in >> hex;
      if (!Unhex(hex, &o.message)) return Status::InvalidArgument("bad outcome message");
    }
  }
  if (!have_kind) return Status::InvalidArgument("the measurement produced no outcome");
  return o;
}

}  // namespace tunefarm::rpc_server
