// Fuzz target: .npy files, as `tunefarm run --input` and tunefarm-run read them: parsed from
// memory and read from a file (the streaming reader: preamble, capped header, exactly the bytes the
// shape needs). Each gives an array or a Status; neither allocates what the header merely claims.
#include <unistd.h>

#include <fstream>

#include "fuzz/fuzz_target.h"
#include "tunefarm/runtime/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto parsed = tunefarm::runtime::ParseNpy(bytes);
  static const std::string path = "/tmp/tunefarm_npy_fuzz_" + std::to_string(getpid()) + ".npy";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  auto read = tunefarm::runtime::ReadNpy(path);
  // The two readers agree on what is a valid file.
  if (parsed.ok() != read.ok()) __builtin_trap();
  return 0;
}

namespace tunefarm::fuzz {

std::vector<std::string> Seeds() {
  auto npy = [](const std::string& header, const std::string& data) {
    std::string h = header;
    while ((10 + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    std::string out = "\x93NUMPY\x01";
    out += '\0';
    out += char(h.size() & 0xff);
    out += char(h.size() >> 8);
    return out + h + data;
  };
  return {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", std::string(24, '\0')),
          npy("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", std::string(24, '\1')),
          npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2.0, 3.5), }", std::string(24, '\0')),
          npy("{'descr': '<f4', 'shape': (1,), 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')),
          npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }", ""),
          std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12),  // a 4 GiB header length
          ""};
}

}  // namespace tunefarm::fuzz
