#include "tunefarm/testing/kernel_cases.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "tunefarm/runtime/atomic_file.h"

namespace tunefarm::runtime {
namespace {
constexpr char kMagic[4] = {'T', 'F', 'K', 'C'};
constexpr uint32_t kVersion = 1;
// Bounds that a well-formed file never exceeds; a larger value means a corrupt file.
constexpr uint64_t kMaxElements = uint64_t(1) << 31;
constexpr uint32_t kMaxCount = 1u << 20;

template <typename T>
void Put(std::ofstream& out, T v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof(v));
}
}  // namespace

Status WriteKernelCases(const std::string& path, const std::vector<KernelCase>& cases) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IOError("cannot write kernel cases to " + path);
  out.write(kMagic, 4);
  Put<uint32_t>(out, kVersion);
  Put<uint32_t>(out, uint32_t(cases.size()));
  for (const auto& c : cases) {
    Put<uint32_t>(out, uint32_t(c.kernel_name.size()));
    out.write(c.kernel_name.data(), std::streamsize(c.kernel_name.size()));
    Put<uint32_t>(out, uint32_t(c.buffers.size()));
    for (const auto& b : c.buffers) {
      Put<uint8_t>(out, b.is_output ? 1 : 0);
      Put<uint64_t>(out, b.data.size());
      out.write(reinterpret_cast<const char*>(b.data.data()), std::streamsize(b.data.size() * sizeof(float)));
    }
  }
  if (!out) return Status::IOError("short write to " + path);
  return Status::OK();
}

namespace {
// Reads little-endian fields from a byte string, never past its end.
class Cursor {
 public:
  explicit Cursor(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  bool Get(T* v) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Read(void* dst, size_t n) {
    if (n == 0) return true;  // dst may be null (an empty vector's data()), which memcpy forbids
    if (remaining() < n) return false;
    std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  size_t remaining() const { return bytes_.size() - pos_; }

 private:
  const std::string& bytes_;
  size_t pos_ = 0;
};
}  // namespace

Result<std::vector<KernelCase>> ParseKernelCases(const std::string& bytes, const std::string& what) {
  Cursor in(bytes);
  char magic[4];
  uint32_t version = 0, count = 0;
  if (!in.Read(magic, 4) || std::memcmp(magic, kMagic, 4) != 0) {
    return Status::Corruption(what + ": not a kernel case file (bad magic)");
  }
  if (!in.Get(&version) || version != kVersion) {
    return Status::Corruption(what + ": unsupported kernel case version " + std::to_string(version));
  }
  // Every case needs at least 8 bytes: a count larger than that is a corrupt header.
  if (!in.Get(&count) || count > kMaxCount || count > in.remaining() / 8) {
    return Status::Corruption(what + ": bad case count");
  }
  std::vector<KernelCase> cases(count);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t name_len = 0, nbuf = 0;
    if (!in.Get(&name_len) || name_len > 4096) {
      return Status::Corruption(what + ": bad name length in case " + std::to_string(i));
    }
    cases[i].kernel_name.resize(name_len);
    if (!in.Read(cases[i].kernel_name.data(), name_len) || !in.Get(&nbuf) || nbuf > 64) {
      return Status::Corruption(what + ": truncated case " + std::to_string(i));
    }
    cases[i].buffers.resize(nbuf);
    for (auto& b : cases[i].buffers) {
      uint8_t is_out = 0;
      uint64_t n = 0;
      if (!in.Get(&is_out) || !in.Get(&n) || n > kMaxElements) {
        return Status::Corruption(what + ": bad buffer header in case " + std::to_string(i));
      }
      // Check the size against the bytes left before allocating: a hostile count must not
      // trigger a multi-gigabyte allocation.
      if (n * sizeof(float) > in.remaining()) {
        return Status::Corruption(what + ": truncated buffer in case " + std::to_string(i));
      }
      b.is_output = is_out != 0;
      b.data.resize(n);
      in.Read(b.data.data(), n * sizeof(float));
    }
  }
  return cases;
}

Result<std::vector<KernelCase>> ReadKernelCases(const std::string& path) {
  auto bytes = ReadFile(path);
  if (!bytes.ok()) return Status::NotFound("cannot open kernel cases " + path);
  return ParseKernelCases(*bytes, path);
}

double MaxRelativeError(const std::vector<float>& actual, const std::vector<float>& expected) {
  if (actual.size() != expected.size()) return INFINITY;
  double max_ref = 1e-6, max_diff = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    max_ref = std::max(max_ref, double(std::fabs(expected[i])));
    double d = std::fabs(double(actual[i]) - double(expected[i]));
    if (std::isnan(d)) return INFINITY;
    max_diff = std::max(max_diff, d);
  }
  return max_diff / max_ref;
}

}  // namespace tunefarm::runtime
