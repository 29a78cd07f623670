#include "compiler/operators/constant_eval.h"

#include <cmath>

namespace tunefarm::operators {
namespace {

int64_t Wrap(graph::DataType t, int64_t v) {
  switch (t) {
    case graph::DataType::kInt32:
      return int32_t(uint32_t(uint64_t(v)));
    case graph::DataType::kInt8:
      return int8_t(uint8_t(uint64_t(v)));
    case graph::DataType::kUInt8:
      return uint8_t(uint64_t(v));
    case graph::DataType::kBool:
      return v != 0;
    default:
      return v;
  }
}

// Multi-index of flat index i in shape; calls fn for each element in row-major order.
void ForEachIndex(const std::vector<int64_t>& shape, const std::function<void(const std::vector<int64_t>&)>& fn) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

int64_t BroadcastFlat(const std::vector<int64_t>& in, const std::vector<int64_t>& out_idx) {
  int64_t flat = 0;
  const size_t offset = out_idx.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) flat = flat * in[d] + (in[d] == 1 ? 0 : out_idx[offset + d]);
  return flat;
}

}  // namespace

double ElementAt(const graph::ConstantData& c, int64_t i) {
  return c.dtype == graph::DataType::kFloat32 ? double(c.f32[size_t(i)]) : double(c.i64[size_t(i)]);
}

graph::ConstantData EmptyConstant(graph::DataType dtype, std::vector<int64_t> shape) {
  graph::ConstantData c;
  c.dtype = dtype;
  c.shape = std::move(shape);
  return c;
}

void Append(graph::ConstantData* c, double v) {
  if (c->dtype == graph::DataType::kFloat32) {
    c->f32.push_back(float(v));
  } else if (c->dtype == graph::DataType::kBool) {
    c->i64.push_back(v != 0 || std::isnan(v));  // as the kernel's x != 0
  } else {
    // NaN and out-of-range values have no integer: 0, as the cast kernel's saturating convert.
    const bool finite = std::isfinite(v) && std::fabs(v) < 9.2e18;
    c->i64.push_back(Wrap(c->dtype, finite ? int64_t(v) : 0));
  }
}

int64_t FlatIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& idx) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + idx[d];
  return flat;
}

graph::ConstantData MapBroadcast(graph::DataType dtype, const std::vector<int64_t>& out_shape,
                                 const std::vector<const graph::ConstantData*>& inputs,
                                 const std::function<double(const std::vector<double>&)>& fn) {
  graph::ConstantData out = EmptyConstant(dtype, out_shape);
  std::vector<double> args(inputs.size());
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& idx) {
    for (size_t k = 0; k < inputs.size(); ++k) args[k] = ElementAt(*inputs[k], BroadcastFlat(inputs[k]->shape, idx));
    Append(&out, fn(args));
  });
  return out;
}

graph::ConstantData MapBroadcastInt(graph::DataType dtype, const std::vector<int64_t>& out_shape,
                                    const std::vector<const graph::ConstantData*>& inputs,
                                    const std::function<int64_t(const std::vector<int64_t>&)>& fn) {
  graph::ConstantData out = EmptyConstant(dtype, out_shape);
  std::vector<int64_t> args(inputs.size());
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& idx) {
    for (size_t k = 0; k < inputs.size(); ++k) args[k] = inputs[k]->i64[size_t(BroadcastFlat(inputs[k]->shape, idx))];
    out.i64.push_back(Wrap(dtype, fn(args)));
  });
  return out;
}

graph::ConstantData BroadcastTo(const graph::ConstantData& in, const std::vector<int64_t>& out_shape) {
  return Remap(in, out_shape, [&](const std::vector<int64_t>& idx) { return BroadcastFlat(in.shape, idx); });
}

graph::ConstantData Remap(const graph::ConstantData& in, const std::vector<int64_t>& out_shape,
                          const std::function<int64_t(const std::vector<int64_t>&)>& source) {
  graph::ConstantData out = EmptyConstant(in.dtype, out_shape);
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& idx) {
    const int64_t from = source(idx);
    if (in.dtype == graph::DataType::kFloat32) {
      out.f32.push_back(in.f32[size_t(from)]);
    } else {
      out.i64.push_back(in.i64[size_t(from)]);
    }
  });
  return out;
}

}  // namespace tunefarm::operators
