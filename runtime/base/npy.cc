#include "tunefarm/runtime/npy.h"

#include <algorithm>
#include <sstream>

#include "tunefarm/runtime/atomic_file.h"
#include "tunefarm/runtime/safe_file.h"

namespace tunefarm::runtime {
namespace {

const char* Descr(ElementType t) {
  switch (t) {
    case ElementType::kFloat32:
      return "<f4";
    case ElementType::kInt64:
      return "<i8";
    case ElementType::kInt32:
      return "<i4";
    case ElementType::kInt8:
      return "|i1";
    case ElementType::kUInt8:
      return "|u1";
    case ElementType::kBool:
      return "|b1";
    case ElementType::kFloat64:
      return "<f8";
    case ElementType::kFloat16:
      return "<f2";
    case ElementType::kInt16:
      return "<i2";
    case ElementType::kUInt16:
      return "<u2";
    case ElementType::kUInt32:
      return "<u4";
    case ElementType::kUInt64:
      return "<u8";
    case ElementType::kBFloat16:
      return nullptr;  // NumPy has no bfloat16
  }
  return nullptr;
}

// The value of 'key' in the header's Python dict literal, as raw text; "" when absent. A key given
// twice is an error (NumPy would take the last; a file that says two things is refused).
Result<std::string> DictValue(const std::string& header, const std::string& key) {
  const std::string quoted = "'" + key + "'";
  const size_t k = header.find(quoted);
  if (k == std::string::npos) return std::string();
  if (header.find(quoted, k + quoted.size()) != std::string::npos) {
    return Status::InvalidArgument("not a valid .npy file: the header gives '" + key + "' twice");
  }
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) return std::string();
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) return std::string();
  size_t end = header[start] == '(' ? header.find(')', start) : header.find_first_of(",}", start);
  if (end == std::string::npos) return std::string();
  if (header[start] == '(') ++end;
  return header.substr(start, end - start);
}

// NumPy writes headers of a few hundred bytes (and reads at most 10 KB by default): a larger one is
// not a real file, and reading it first would let a file make us allocate what it likes.
constexpr size_t kMaxHeaderBytes = 64 << 10;

// What a .npy file's preamble and header say: the array's type and shape and where its data
// starts. `prefix` holds at least the preamble; *needed says how many bytes the header needs when
// prefix is too short (then the result is OK with data_offset 0).
struct NpyLayout {
  ElementType dtype = ElementType::kFloat32;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
  uint64_t data_bytes = 0;
};

Status Bad(const std::string& why) { return Status::InvalidArgument("not a valid .npy file: " + why); }

Result<NpyLayout> ParseLayout(const std::string& prefix, size_t* needed) {
  if (prefix.size() < 10 || prefix.compare(0, 6, "\x93NUMPY") != 0) return Bad("bad magic");
  const int major = uint8_t(prefix[6]);
  size_t header_len, pos;
  if (major == 1) {
    header_len = uint8_t(prefix[8]) | size_t(uint8_t(prefix[9])) << 8;
    pos = 10;
  } else if (major == 2 || major == 3) {
    if (prefix.size() < 12) return Bad("truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= size_t(uint8_t(prefix[8 + size_t(i)])) << (8 * i);
    pos = 12;
  } else {
    return Bad("unsupported format version " + std::to_string(major));
  }
  if (header_len > kMaxHeaderBytes) {
    return Bad("its header is " + std::to_string(header_len) + " bytes; NumPy writes a few hundred (at most " +
               std::to_string(kMaxHeaderBytes) + " are read)");
  }
  NpyLayout layout;
  if (header_len > prefix.size() - pos) {
    *needed = pos + header_len;
    return layout;
  }
  const std::string header = prefix.substr(pos, header_len);
  layout.data_offset = pos + header_len;
  TUNEFARM_ASSIGN_OR_RETURN(std::string descr, DictValue(header, "descr"));
  TUNEFARM_ASSIGN_OR_RETURN(const std::string fortran, DictValue(header, "fortran_order"));
  TUNEFARM_ASSIGN_OR_RETURN(const std::string shape, DictValue(header, "shape"));
  if (descr.size() < 2) return Bad("no descr");
  descr = descr.substr(1, descr.size() - 2);
  bool found = false;
  std::string known;
  for (int k = 0; k <= int(ElementType::kUInt64); ++k) {
    const ElementType t = ElementType(k);
    if (!Descr(t)) continue;
    known += std::string(known.empty() ? "" : ", ") + ElementTypeName(t);
    if (descr == Descr(t) ||
        (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(Descr(t)).substr(1))) {
      layout.dtype = t;
      found = true;
    }
  }
  if (!found) return Bad("unsupported dtype '" + descr + "' (" + known + ")");
  if (fortran != "False") return Bad("Fortran-ordered arrays are not supported");
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') return Bad("no shape");
  std::stringstream ss(shape.substr(1, shape.size() - 2));
  std::string item;
  constexpr int64_t kMaxElements = int64_t(1) << 40;
  int64_t n = 1;
  while (std::getline(ss, item, ',')) {
    const size_t first = item.find_first_not_of(' '), last = item.find_last_not_of(' ');
    if (first == std::string::npos) continue;
    std::string digits = item.substr(first, last - first + 1);
    if (digits.size() > 1 && digits.back() == 'L') digits.pop_back();  // Python 2 wrote longs as "3L"
    // A dimension is a decimal integer: "2.0" or "3.5" is not one (NumPy refuses them too).
    if (digits.size() > 13 || digits.find_first_not_of("0123456789") != std::string::npos) {
      return Bad("bad dimension '" + digits + "'");
    }
    const int64_t d = std::stoll(digits);
    if (d > kMaxElements) return Bad("bad dimension '" + digits + "'");
    layout.shape.push_back(d);
    if (d != 0 && n > kMaxElements / d) return Bad("too many elements (over 2^40)");
    n *= d;
  }
  layout.data_bytes = uint64_t(n) * uint64_t(ElementSize(layout.dtype));
  return layout;
}

}  // namespace

Result<NpyArray> ParseNpy(const std::string& bytes) {
  size_t needed = 0;
  TUNEFARM_ASSIGN_OR_RETURN(NpyLayout layout, ParseLayout(bytes, &needed));
  if (needed > 0) return Bad("truncated header");
  const uint64_t have = bytes.size() - layout.data_offset;
  if (have != layout.data_bytes) {
    return Bad("holds " + std::to_string(have) + " data bytes, its shape needs " + std::to_string(layout.data_bytes));
  }
  NpyArray a;
  a.dtype = layout.dtype;
  a.shape = std::move(layout.shape);
  a.data = bytes.substr(layout.data_offset);
  return a;
}

// Reads what the header says and no more: a device or FIFO is refused before a byte is read, the
// header is capped, and the data is read only once the file's size matches what the shape needs.
Result<NpyArray> ReadNpy(const std::string& path) {
  TUNEFARM_ASSIGN_OR_RETURN(OpenedFile file, OpenRegularFile(path, ".npy file"));
  const uint64_t size = file.size();
  std::string prefix(size_t(std::min<uint64_t>(size, 512)), '\0');
  TUNEFARM_RETURN_IF_ERROR(ReadExactly(file, 0, prefix.size(), prefix.data(), ".npy file"));
  size_t needed = 0;
  auto layout = ParseLayout(prefix, &needed);
  if (layout.ok() && needed > 0) {
    if (needed > size) return Bad("truncated header").WithContext(path);
    prefix.resize(needed);
    TUNEFARM_RETURN_IF_ERROR(ReadExactly(file, 0, needed, prefix.data(), ".npy file"));
    needed = 0;
    layout = ParseLayout(prefix, &needed);
  }
  if (!layout.ok()) return layout.status().WithContext(path);
  const uint64_t have = size - layout->data_offset;
  if (have != layout->data_bytes) {
    return Bad("holds " + std::to_string(have) + " data bytes, its shape needs " + std::to_string(layout->data_bytes))
        .WithContext(path);
  }
  NpyArray a;
  a.dtype = layout->dtype;
  a.shape = std::move(layout->shape);
  a.data.resize(size_t(layout->data_bytes));
  TUNEFARM_RETURN_IF_ERROR(ReadExactly(file, layout->data_offset, a.data.size(), a.data.data(), ".npy file"));
  return a;
}

Status WriteNpy(const std::string& path, const NpyArray& a) {
  if (!Descr(a.dtype)) {
    return Status::InvalidArgument("cannot write " + path + ": .npy has no " + ElementTypeName(a.dtype) + " type");
  }
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 || i + 1 < a.shape.size() ? "," : "");
  shape += ")";
  std::string header =
      "{'descr': '" + std::string(Descr(a.dtype)) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char((header.size() >> 8) & 0xff);
  out += header;
  out += a.data;
  return WriteFileAtomically(path, out);
}

}  // namespace tunefarm::runtime
