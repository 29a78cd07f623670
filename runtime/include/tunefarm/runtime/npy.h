// NumPy .npy files (format 1.0-3.0, little-endian, C order): how `tunefarm run` takes inputs and
// writes outputs, as tvmc does. Errors name the file and what is wrong with it.
#ifndef TUNEFARM_RUNTIME_NPY_H_
#define TUNEFARM_RUNTIME_NPY_H_

#include <string>
#include <vector>

#include "tunefarm/runtime/artifact.h"

namespace tunefarm::runtime {

struct NpyArray {
  ElementType dtype = ElementType::kFloat32;
  std::vector<int64_t> shape;
  std::string data;  // raw little-endian elements
};

Result<NpyArray> ReadNpy(const std::string& path);
Result<NpyArray> ParseNpy(const std::string& bytes);
Status WriteNpy(const std::string& path, const NpyArray& array);

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_NPY_H_
