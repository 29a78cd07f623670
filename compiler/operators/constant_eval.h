// Constant evaluation for the fold functions: element access by flat index, element-wise maps
// with numpy broadcasting, and index remapping (data movement). Float tensors are computed in
// float, integers in int64 and wrapped to their type, so a folded value is what a kernel computes.
#ifndef TUNEFARM_COMPILER_OPERATORS_CONSTANT_EVAL_H_
#define TUNEFARM_COMPILER_OPERATORS_CONSTANT_EVAL_H_

#include <functional>
#include <vector>

#include "compiler/graph/graph.h"

namespace tunefarm::operators {

// Folding stops above this many output elements: shape arithmetic is tiny, and bigger tensors
// are FoldConstants' business (opt level >= 1) or the kernels'.
constexpr int64_t kMaxInferenceFoldElements = 1 << 16;

double ElementAt(const graph::ConstantData& c, int64_t i);
graph::ConstantData EmptyConstant(graph::DataType dtype, std::vector<int64_t> shape);
// Appends v converted to c's type (integers truncate toward zero and wrap to their width).
void Append(graph::ConstantData* c, double v);

// out[i] = fn(inputs broadcast to out_shape at i).
graph::ConstantData MapBroadcast(graph::DataType dtype, const std::vector<int64_t>& out_shape,
                                 const std::vector<const graph::ConstantData*>& inputs,
                                 const std::function<double(const std::vector<double>&)>& fn);
// Integer variant: exact for every int64 value (no detour through double).
graph::ConstantData MapBroadcastInt(graph::DataType dtype, const std::vector<int64_t>& out_shape,
                                    const std::vector<const graph::ConstantData*>& inputs,
                                    const std::function<int64_t(const std::vector<int64_t>&)>& fn);
// in broadcast to out_shape (numpy rules), element for element: exact for every type.
graph::ConstantData BroadcastTo(const graph::ConstantData& in, const std::vector<int64_t>& out_shape);
// out[i] = in[source(multi-index of i in out_shape)], source returning a flat index into in.
graph::ConstantData Remap(const graph::ConstantData& in, const std::vector<int64_t>& out_shape,
                          const std::function<int64_t(const std::vector<int64_t>&)>& source);
// Row-major flat index of idx in shape.
int64_t FlatIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& idx);

}  // namespace tunefarm::operators

#endif  // TUNEFARM_COMPILER_OPERATORS_CONSTANT_EVAL_H_
