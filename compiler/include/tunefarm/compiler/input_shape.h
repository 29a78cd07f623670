// --input-shape NAME:DIMS: a shape for a graph input, as TVMC's --input-shapes. Exporters with
// dynamic axes (torch's dynamic_axes, paddle2onnx, tf2onnx) declare inputs such as [-1, 3, -1, -1];
// this is how a user fixes them, or keeps one within a range (docs/dynamic_shapes.md).
//
// Contract:
//  - ParseInputShape reads "NAME:D0xD1x...": NAME non-empty (it may itself hold ':'; the last one
//    splits), each D a positive integer below 2^31 or a range "LO..HI" of them with LO < HI. Errors
//    name the text and the part that is wrong.
//  - The shapes are applied when the model is loaded (compile, tasks, tune, the daemon's jobs): each
//    names a graph input (else the error lists the inputs), has its rank, and agrees with every
//    dimension the model fixes itself; the shape then flows through shape inference and folding
//    exactly as a static one would. A name given twice is an error.
//  - A range keeps the dimension symbolic: the graph is built at HI (what memory is planned for) and
//    the artifact runs any size in [LO, HI]. Today the range must be on dimension 0, and every input
//    given a range shares one symbolic dimension (so their ranges must be the same).
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
  std::vector<int64_t> dims;      // each dimension's size; a range's largest
  std::vector<int64_t> min_dims;  // empty when every dimension is fixed; else each one's smallest
  bool is_range(size_t d) const { return d < min_dims.size() && min_dims[d] < dims[d]; }
  std::string ToString() const;  // "data:1x3x224x224", "data:1..8x3x224x224"
};

Result<InputShape> ParseInputShape(std::string_view text);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_INPUT_SHAPE_H_
