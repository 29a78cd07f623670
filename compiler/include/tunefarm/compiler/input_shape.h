// --input-shape NAME:DIMS: a fixed shape for a graph input, as TVMC's --input-shapes. Exporters
// with dynamic axes (torch's dynamic_axes, paddle2onnx, tf2onnx) declare inputs such as
// [-1, 3, -1, -1]; the compiler needs every dimension fixed, and this is how a user fixes them.
//
// Contract:
//  - ParseInputShape reads "NAME:D0xD1x...": NAME non-empty (it may itself hold ':'; the last one
//    splits), each D a positive integer below 2^31. Errors name the text and the part that is wrong.
//  - The shapes are applied when the model is loaded (compile, tasks, tune, the daemon's jobs): each
//    names a graph input (else the error lists the inputs), has its rank, and agrees with every
//    dimension the model fixes itself; the shape then flows through shape inference and folding
//    exactly as a static one would. A name given twice is an error.
#ifndef TUNEFARM_COMPILER_INPUT_SHAPE_H_
#define TUNEFARM_COMPILER_INPUT_SHAPE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/runtime/result.h"

namespace tunefarm::compiler {

struct InputShape {
  std::string name;
  std::vector<int64_t> dims;
  std::string ToString() const;  // "data:1x3x224x224"
};

Result<InputShape> ParseInputShape(std::string_view text);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_INPUT_SHAPE_H_
