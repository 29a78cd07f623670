#include "tunefarm/runtime/npy.h"

#include <sstream>

#include "tunefarm/runtime/atomic_file.h"

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

// The value of 'key' in the header's Python dict literal, as raw text.
std::string DictValue(const std::string& header, const std::string& key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) return "";
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) return "";
  size_t end = header[start] == '(' ? header.find(')', start) + 1 : header.find_first_of(",}", start);
  if (end == std::string::npos || end < start) return "";
  return header.substr(start, end - start);
}

}  // namespace

Result<NpyArray> ParseNpy(const std::string& bytes) {
  auto bad = [](const std::string& why) { return Status::InvalidArgument("not a valid .npy file: " + why); };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return bad("bad magic");
  const int major = uint8_t(bytes[6]);
  size_t header_len, pos;
  if (major == 1) {
    header_len = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
    pos = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= size_t(uint8_t(bytes[8 + size_t(i)])) << (8 * i);
    pos = 12;
  } else {
    return bad("unsupported format version " + std::to_string(major));
  }
  if (header_len > bytes.size() - pos) return bad("truncated header");
  std::string header = bytes.substr(pos, header_len);
  pos += header_len;
  std::string descr = DictValue(header, "descr"), fortran = DictValue(header, "fortran_order"),
              shape = DictValue(header, "shape");
  if (descr.size() < 2) return bad("no descr");
  descr = descr.substr(1, descr.size() - 2);
  NpyArray a;
  bool found = false;
  std::string known;
  for (int k = 0; k <= int(ElementType::kUInt64); ++k) {
    const ElementType t = ElementType(k);
    if (!Descr(t)) continue;
    known += std::string(known.empty() ? "" : ", ") + ElementTypeName(t);
    if (descr == Descr(t) ||
        (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(Descr(t)).substr(1))) {
      a.dtype = t;
      found = true;
    }
  }
  if (!found) return bad("unsupported dtype '" + descr + "' (" + known + ")");
  if (fortran != "False") return bad("Fortran-ordered arrays are not supported");
  if (shape.size() < 2 || shape.front() != '(') return bad("no shape");
  std::stringstream ss(shape.substr(1, shape.size() - 2));
  std::string item;
  int64_t n = 1;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(' ') == std::string::npos) continue;
    char* end = nullptr;
    const int64_t d = std::strtoll(item.c_str(), &end, 10);
    if (d < 0 || d > (1LL << 40)) return bad("bad dimension '" + item + "'");
    a.shape.push_back(d);
    n *= d;
    if (n > (int64_t(1) << 40)) return bad("too many elements");
  }
  size_t want = size_t(n) * size_t(ElementSize(a.dtype));
  if (bytes.size() - pos != want) {
    return bad("holds " + std::to_string(bytes.size() - pos) + " data bytes, its shape needs " + std::to_string(want));
  }
  a.data = bytes.substr(pos);
  return a;
}

Result<NpyArray> ReadNpy(const std::string& path) {
  auto bytes = ReadFile(path);
  if (!bytes.ok()) return Status::NotFound("cannot open " + path);
  auto a = ParseNpy(*bytes);
  if (!a.ok()) return a.status().WithContext(path);
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
