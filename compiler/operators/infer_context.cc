#include "compiler/operators/infer_context.h"

#include <algorithm>

namespace tunefarm::operators {

std::string ShapeStr(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

int64_t Product(const std::vector<int64_t>& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

std::optional<int64_t> CheckedElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > kMaxTensorElements / d) return std::nullopt;
    n *= d;
  }
  return n;
}

void InferContext::SetOut(size_t i, graph::DataType t, std::vector<int64_t> shape) {
  if (i >= mn_.outputs.size() || mn_.outputs[i] < 0) return;
  graph::Value& v = Out(i);
  v.dtype = t;
  v.shape = std::move(shape);
  v.shape_known = true;
}

void InferContext::SetConstOut(size_t i, graph::ConstantData c) {
  if (i >= mn_.outputs.size() || mn_.outputs[i] < 0) return;
  SetOut(i, c.dtype, c.shape);
  Out(i).constant = std::make_shared<const graph::ConstantData>(std::move(c));
}

Result<std::vector<int64_t>> NodeView::ConstInts(size_t i, const char* role) const {
  if (!HasInput(i)) return Fail(std::string("missing input '") + role + "'");
  const graph::Value& v = In(i);
  if (!v.constant) {
    return Fail(std::string("input '") + role + "' (" + v.name +
                ") must be a constant after folding; tunefarm compiles static shapes");
  }
  if (v.constant->dtype == graph::DataType::kFloat32)
    return Fail(std::string("input '") + role + "' must be an integer tensor");
  return v.constant->i64;
}

Result<std::optional<std::vector<int64_t>>> NodeView::OptionalConstInts(size_t i, const char* role) const {
  if (!HasInput(i)) return std::optional<std::vector<int64_t>>();
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> v, ConstInts(i, role));
  return std::optional<std::vector<int64_t>>(std::move(v));
}

Result<std::optional<float>> NodeView::OptionalConstScalar(size_t i, const char* role) const {
  if (!HasInput(i)) return std::optional<float>();
  const graph::Value& v = In(i);
  if (!v.constant) return Fail(std::string("input '") + role + "' (" + v.name + ") must be a constant");
  if (v.constant->num_elements() != 1) return Fail(std::string("input '") + role + "' must be a scalar");
  return std::optional<float>(v.constant->dtype == graph::DataType::kFloat32 ? v.constant->f32[0]
                                                                             : float(v.constant->i64[0]));
}

Result<int64_t> NodeView::Axis(int64_t axis, size_t rank) const {
  const int64_t r = int64_t(rank);
  if (axis < -r || axis >= r)
    return Fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

Status NodeView::NeedRank(size_t i, size_t rank, const char* what) const {
  if (In(i).shape.size() != rank) {
    return Fail(std::string(what) + " needs a " + std::to_string(rank) + "-D input, got " + ShapeStr(In(i).shape));
  }
  return Status::OK();
}

Result<std::vector<int64_t>> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) {
      return Status::InvalidArgument("shapes " + ShapeStr(a) + " and " + ShapeStr(b) + " do not broadcast");
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

}  // namespace tunefarm::operators
