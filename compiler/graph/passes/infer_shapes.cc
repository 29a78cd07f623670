#include "compiler/graph/passes/infer_shapes.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <unordered_map>

namespace tunefarm::graph {
namespace {

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

// Shape inference for one node; `Fail` builds an error that names the node.
class NodeInference {
 public:
  NodeInference(Graph* g, Node& n) : g_(*g), n_(n) {}

  Status Run();

 private:
  Status Fail(const std::string& why) const { return Status::InvalidArgument(g_.Describe(n_) + ": " + why); }
  bool HasInput(size_t i) const { return i < n_.inputs.size() && n_.inputs[i] >= 0; }
  Value& In(size_t i) { return g_.values[size_t(n_.inputs[i])]; }
  Value& Out(size_t i) { return g_.values[size_t(n_.outputs[i])]; }
  void SetOut(size_t i, DataType t, std::vector<int64_t> shape) {
    if (i >= n_.outputs.size()) return;
    Value& v = Out(i);
    v.dtype = t;
    v.shape = std::move(shape);
    v.shape_known = true;
  }
  void SetConstOut(size_t i, ConstantData c) {
    SetOut(i, c.dtype, c.shape);
    Out(i).constant = std::make_shared<const ConstantData>(std::move(c));
  }
  // The int64 values of a constant input (Reshape's shape, Slice's starts, ...).
  Result<std::vector<int64_t>> ConstInts(size_t i, const char* role) {
    if (!HasInput(i)) return Fail(std::string("missing input '") + role + "'");
    const Value& v = In(i);
    if (!v.constant) return Fail(std::string("input '") + role + "' (" + v.name + ") must be a constant; dynamic shapes are not supported");
    if (v.constant->dtype == DataType::kFloat32) return Fail(std::string("input '") + role + "' must be an integer tensor");
    return v.constant->i64;
  }
  Result<int64_t> Axis(int64_t axis, size_t rank) {
    int64_t r = int64_t(rank);
    if (axis < -r || axis >= r) return Fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
    return axis < 0 ? axis + r : axis;
  }
  Status NeedRank(size_t i, size_t rank, const char* what) {
    if (In(i).shape.size() != rank) {
      return Fail(std::string(what) + " needs a " + std::to_string(rank) + "-D input, got " + ShapeStr(In(i).shape));
    }
    return Status::OK();
  }

  // Records the resolved window attributes on the node (auto_pad becomes explicit pads), so later
  // passes read one form.
  // Records a value the lowering needs in canonical form (negative indices resolved, defaults
  // filled in) as an ints attribute; names starting with '_' are tunefarm's own.
  void SetInts(const char* name, const std::vector<int64_t>& v) {
    Attribute a;
    a.kind = Attribute::kInts;
    a.ints = v;
    n_.attrs[name] = a;
  }
  void Canonicalize(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                    const std::vector<int64_t>& dil, const std::vector<int64_t>& pads) {
    auto set = [&](const char* name, const std::vector<int64_t>& v) {
      Attribute a;
      a.kind = Attribute::kInts;
      a.ints = v;
      n_.attrs[name] = a;
    };
    set("kernel_shape", kernel);
    set("strides", strides);
    set("dilations", dil);
    set("pads", pads);
    n_.attrs.erase("auto_pad");
  }

  Status Conv();
  Status Pool(bool is_max);
  Status Gemm();
  Status MatMul();
  Status Binary();
  Status Reshape();
  Status Concat();
  Status Split();
  Status Slice();
  Status Transpose();
  Status Pad();
  Status Gather();
  Status Unsqueeze(bool squeeze);
  Status ReduceMean();

  Graph& g_;
  Node& n_;
};

// Output extent of a windowed op along one spatial axis (conv, pooling).
Result<int64_t> WindowOut(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pad_begin, int64_t pad_end,
                          bool ceil_mode) {
  int64_t eff = dil * (k - 1) + 1;
  int64_t span = in + pad_begin + pad_end - eff;
  if (span < 0 || stride < 1) return Status::InvalidArgument("window larger than the padded input");
  return (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
}

// Resolves ONNX auto_pad into explicit pads [begin..., end...] for `spatial` axes.
Status ResolvePads(const Node& n, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dil, std::vector<int64_t>* pads) {
  size_t sp = kernel.size();
  std::string auto_pad = n.GetString("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    *pads = n.GetInts("pads", std::vector<int64_t>(2 * sp, 0));
    if (pads->size() != 2 * sp) return Status::InvalidArgument("pads must have " + std::to_string(2 * sp) + " values");
    return Status::OK();
  }
  pads->assign(2 * sp, 0);
  if (auto_pad == "VALID") return Status::OK();
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") return Status::InvalidArgument("unsupported auto_pad '" + auto_pad + "'");
  for (size_t i = 0; i < sp; ++i) {
    int64_t out = (in[i] + strides[i] - 1) / strides[i];
    int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1 - in[i]);
    int64_t small = total / 2, big = total - small;
    (*pads)[i] = auto_pad == "SAME_UPPER" ? small : big;
    (*pads)[i + sp] = auto_pad == "SAME_UPPER" ? big : small;
  }
  return Status::OK();
}

Status NodeInference::Conv() {
  const auto& x = In(0).shape;
  const auto& w = In(1).shape;
  if (x.size() < 3 || x.size() > 5) return Fail("Conv needs an input of rank 3 to 5 (N, C, spatial...), got " + ShapeStr(x));
  if (w.size() != x.size()) return Fail("Conv weight " + ShapeStr(w) + " does not match the input rank " + std::to_string(x.size()));
  const size_t sp = x.size() - 2;
  int64_t group = n_.GetInt("group", 1);
  if (group < 1 || x[1] != w[1] * group || w[0] % group != 0) {
    return Fail("input channels " + std::to_string(x[1]) + " do not match weight " + ShapeStr(w) + " with group " + std::to_string(group));
  }
  std::vector<int64_t> kernel = n_.GetInts("kernel_shape", std::vector<int64_t>(w.begin() + 2, w.end()));
  std::vector<int64_t> strides = n_.GetInts("strides", std::vector<int64_t>(sp, 1)),
                       dil = n_.GetInts("dilations", std::vector<int64_t>(sp, 1));
  if (kernel.size() != sp || strides.size() != sp || dil.size() != sp) {
    return Fail("kernel_shape, strides and dilations must have " + std::to_string(sp) + " values");
  }
  if (!std::equal(kernel.begin(), kernel.end(), w.begin() + 2)) return Fail("kernel_shape " + ShapeStr(kernel) + " differs from the weight " + ShapeStr(w));
  std::vector<int64_t> pads;
  Status s = ResolvePads(n_, std::vector<int64_t>(x.begin() + 2, x.end()), kernel, strides, dil, &pads);
  if (!s.ok()) return Fail(s.message());
  Canonicalize(kernel, strides, dil, pads);
  std::vector<int64_t> out = {x[0], w[0]};
  for (size_t i = 0; i < sp; ++i) {
    auto o = WindowOut(x[2 + i], kernel[i], strides[i], dil[i], pads[i], pads[sp + i], false);
    if (!o.ok()) return Fail(o.status().message());
    out.push_back(*o);
  }
  SetOut(0, DataType::kFloat32, out);
  return Status::OK();
}

Status NodeInference::Pool(bool is_max) {
  const auto& x = In(0).shape;
  if (x.size() < 3) return Fail(n_.op_type + " needs an input of rank >= 3 (N, C, spatial...), got " + ShapeStr(x));
  const size_t sp = x.size() - 2;
  std::vector<int64_t> kernel = n_.GetInts("kernel_shape");
  if (kernel.size() != sp) return Fail("kernel_shape must have " + std::to_string(sp) + " values");
  std::vector<int64_t> strides = n_.GetInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> dil = is_max ? n_.GetInts("dilations", std::vector<int64_t>(sp, 1)) : std::vector<int64_t>(sp, 1);
  std::vector<int64_t> pads;
  Status s = ResolvePads(n_, std::vector<int64_t>(x.begin() + 2, x.end()), kernel, strides, dil, &pads);
  if (!s.ok()) return Fail(s.message());
  Canonicalize(kernel, strides, dil, pads);
  bool ceil_mode = n_.GetInt("ceil_mode", 0) != 0;
  std::vector<int64_t> out = {x[0], x[1]};
  for (size_t i = 0; i < sp; ++i) {
    auto o = WindowOut(x[2 + i], kernel[i], strides[i], dil[i], pads[i], pads[sp + i], ceil_mode);
    if (!o.ok()) return Fail(o.status().message());
    out.push_back(*o);
  }
  SetOut(0, In(0).dtype, out);
  if (is_max && n_.outputs.size() > 1) SetOut(1, DataType::kInt64, out);  // the argmax indices
  return Status::OK();
}

Status NodeInference::Gemm() {
  TUNEFARM_RETURN_IF_ERROR(NeedRank(0, 2, "Gemm"));
  TUNEFARM_RETURN_IF_ERROR(NeedRank(1, 2, "Gemm B"));
  auto a = In(0).shape, b = In(1).shape;
  if (n_.GetInt("transA", 0)) std::swap(a[0], a[1]);
  if (n_.GetInt("transB", 0)) std::swap(b[0], b[1]);
  if (a[1] != b[0]) return Fail("inner dimensions differ: " + ShapeStr(a) + " x " + ShapeStr(b));
  SetOut(0, DataType::kFloat32, {a[0], b[1]});
  return Status::OK();
}

Status NodeInference::MatMul() {
  auto a = In(0).shape, b = In(1).shape;
  if (a.empty() || b.empty()) return Fail("MatMul of a scalar");
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  if (a.back() != b[b.size() - 2]) return Fail("inner dimensions differ: " + ShapeStr(In(0).shape) + " x " + ShapeStr(In(1).shape));
  std::vector<int64_t> ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  auto batch = BroadcastShapes(ba, bb);
  if (!batch.ok()) return Fail(batch.status().message());
  std::vector<int64_t> out = *batch;
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  SetOut(0, DataType::kFloat32, out);
  return Status::OK();
}

Status NodeInference::Binary() {
  auto s = BroadcastShapes(In(0).shape, In(1).shape);
  if (!s.ok()) return Fail(s.status().message());
  SetOut(0, In(0).dtype, *s);
  return Status::OK();
}

Status NodeInference::Reshape() {
  std::vector<int64_t> target;
  if (g_.opset < 5) {
    target = n_.GetInts("shape");
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(target, ConstInts(1, "shape"));
  }
  const auto& in = In(0).shape;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !n_.GetInt("allowzero", 0)) {
      if (i >= in.size()) return Fail("shape copies dimension " + std::to_string(i) + " the input does not have");
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (infer_at >= 0) return Fail("more than one -1 in the target shape");
      infer_at = int64_t(i);
    } else {
      known *= target[i];
    }
  }
  int64_t total = Product(in, 0, in.size());
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) return Fail("cannot reshape " + ShapeStr(in) + " to " + ShapeStr(target));
    target[size_t(infer_at)] = total / known;
  } else if (known != total) {
    return Fail("cannot reshape " + ShapeStr(in) + " (" + std::to_string(total) + " elements) to " + ShapeStr(target));
  }
  if (In(0).constant) {
    ConstantData c = *In(0).constant;
    c.shape = target;
    SetConstOut(0, std::move(c));
  } else {
    SetOut(0, In(0).dtype, target);
  }
  return Status::OK();
}

Status NodeInference::Concat() {
  if (!n_.Has("axis")) return Fail("missing attribute 'axis'");
  const auto& first = In(0).shape;
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, Axis(n_.GetInt("axis", 0), first.size()));
  SetInts("_axis", {axis});
  std::vector<int64_t> out = first;
  out[size_t(axis)] = 0;
  bool all_const = true;
  for (size_t i = 0; i < n_.inputs.size(); ++i) {
    const auto& s = In(i).shape;
    if (s.size() != first.size()) return Fail("inputs have different ranks: " + ShapeStr(first) + " vs " + ShapeStr(s));
    for (size_t d = 0; d < s.size(); ++d) {
      if (int64_t(d) != axis && s[d] != first[d]) return Fail("inputs differ outside the axis: " + ShapeStr(first) + " vs " + ShapeStr(s));
    }
    out[size_t(axis)] += s[size_t(axis)];
    all_const = all_const && In(i).constant && In(i).dtype != DataType::kFloat32;
  }
  if (all_const && first.size() == 1) {
    ConstantData c{In(0).dtype, out, {}, {}};
    for (size_t i = 0; i < n_.inputs.size(); ++i) c.i64.insert(c.i64.end(), In(i).constant->i64.begin(), In(i).constant->i64.end());
    SetConstOut(0, std::move(c));
  } else {
    SetOut(0, In(0).dtype, out);
  }
  return Status::OK();
}

Status NodeInference::Split() {
  const auto& in = In(0).shape;
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, Axis(n_.GetInt("axis", 0), in.size()));
  std::vector<int64_t> parts;
  if (g_.opset >= 13 && HasInput(1)) {
    TUNEFARM_ASSIGN_OR_RETURN(parts, ConstInts(1, "split"));
  } else if (n_.Has("split")) {
    parts = n_.GetInts("split");
  } else {
    int64_t k = int64_t(n_.outputs.size());
    if (in[size_t(axis)] % k != 0) return Fail("cannot split " + std::to_string(in[size_t(axis)]) + " into " + std::to_string(k) + " equal parts");
    parts.assign(size_t(k), in[size_t(axis)] / k);
  }
  if (parts.size() != n_.outputs.size() || std::accumulate(parts.begin(), parts.end(), int64_t(0)) != in[size_t(axis)]) {
    return Fail("split sizes do not add up to the axis extent " + std::to_string(in[size_t(axis)]));
  }
  SetInts("_split", parts);
  SetInts("_axis", {axis});
  for (size_t i = 0; i < parts.size(); ++i) {
    std::vector<int64_t> s = in;
    s[size_t(axis)] = parts[i];
    SetOut(i, In(0).dtype, s);
  }
  return Status::OK();
}

Status NodeInference::Slice() {
  const auto& in = In(0).shape;
  std::vector<int64_t> starts, ends, axes, steps;
  if (g_.opset < 10) {
    starts = n_.GetInts("starts");
    ends = n_.GetInts("ends");
    axes = n_.GetInts("axes");
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(starts, ConstInts(1, "starts"));
    TUNEFARM_ASSIGN_OR_RETURN(ends, ConstInts(2, "ends"));
    if (HasInput(3)) {
      TUNEFARM_ASSIGN_OR_RETURN(axes, ConstInts(3, "axes"));
    }
    if (HasInput(4)) {
      TUNEFARM_ASSIGN_OR_RETURN(steps, ConstInts(4, "steps"));
    }
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return Fail("starts, ends, axes and steps differ in length");
  }
  std::vector<int64_t> out = in, begin(in.size(), 0), step(in.size(), 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    TUNEFARM_ASSIGN_OR_RETURN(int64_t ax, Axis(axes[i], in.size()));
    int64_t dim = in[size_t(ax)], st = steps[i];
    if (st == 0) return Fail("slice step 0");
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(hi, v)); };
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (st > 0) {
      s = clamp(s, 0, dim);
      e = clamp(e, 0, dim);
      out[size_t(ax)] = std::max<int64_t>(0, (e - s + st - 1) / st);
    } else {
      s = clamp(s, -1, dim - 1);
      e = clamp(e, -1, dim - 1);
      out[size_t(ax)] = std::max<int64_t>(0, (s - e - st - 1) / -st);
    }
    begin[size_t(ax)] = s;
    step[size_t(ax)] = st;
  }
  SetInts("_begin", begin);
  SetInts("_step", step);
  if (In(0).constant && in.size() == 1 && In(0).dtype != DataType::kFloat32) {
    ConstantData c{In(0).dtype, out, {}, {}};
    for (int64_t i = 0; i < out[0]; ++i) c.i64.push_back(In(0).constant->i64[size_t(begin[0] + i * step[0])]);
    SetConstOut(0, std::move(c));
  } else {
    SetOut(0, In(0).dtype, out);
  }
  return Status::OK();
}

Status NodeInference::Transpose() {
  const auto& in = In(0).shape;
  std::vector<int64_t> perm = n_.GetInts("perm");
  if (perm.empty()) {
    for (size_t i = in.size(); i-- > 0;) perm.push_back(int64_t(i));
  }
  if (perm.size() != in.size()) return Fail("perm " + ShapeStr(perm) + " does not match rank " + std::to_string(in.size()));
  std::vector<int64_t> out;
  std::vector<bool> seen(in.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(in.size()) || seen[size_t(p)]) return Fail("perm " + ShapeStr(perm) + " is not a permutation");
    seen[size_t(p)] = true;
    out.push_back(in[size_t(p)]);
  }
  SetOut(0, In(0).dtype, out);
  return Status::OK();
}

Status NodeInference::Pad() {
  const auto& in = In(0).shape;
  std::vector<int64_t> pads;
  if (g_.opset < 11) {
    pads = n_.GetInts("pads");
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(pads, ConstInts(1, "pads"));
  }
  if (pads.size() != 2 * in.size()) return Fail("pads has " + std::to_string(pads.size()) + " values for rank " + std::to_string(in.size()));
  std::string mode = n_.GetString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") return Fail("unsupported pad mode '" + mode + "'");
  SetInts("_pads", pads);
  std::vector<int64_t> out = in;
  for (size_t i = 0; i < in.size(); ++i) out[i] += pads[i] + pads[i + in.size()];
  SetOut(0, In(0).dtype, out);
  return Status::OK();
}

Status NodeInference::Gather() {
  const auto& data = In(0).shape;
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, Axis(n_.GetInt("axis", 0), data.size()));
  SetInts("_axis", {axis});
  const auto& idx = In(1).shape;
  std::vector<int64_t> out(data.begin(), data.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  if (In(0).constant && In(1).constant && In(0).dtype != DataType::kFloat32 && data.size() == 1) {
    ConstantData c{In(0).dtype, out, {}, {}};
    for (int64_t i : In(1).constant->i64) {
      int64_t j = i < 0 ? i + data[0] : i;
      if (j < 0 || j >= data[0]) return Fail("index " + std::to_string(i) + " out of range");
      c.i64.push_back(In(0).constant->i64[size_t(j)]);
    }
    SetConstOut(0, std::move(c));
  } else {
    SetOut(0, In(0).dtype, out);
  }
  return Status::OK();
}

Status NodeInference::Unsqueeze(bool squeeze) {
  std::vector<int64_t> axes;
  if (g_.opset >= 13 && HasInput(1)) {
    TUNEFARM_ASSIGN_OR_RETURN(axes, ConstInts(1, "axes"));
  } else {
    axes = n_.GetInts("axes");
  }
  const auto& in = In(0).shape;
  std::vector<int64_t> out;
  if (squeeze) {
    std::vector<int64_t> norm;
    for (int64_t a : axes) {
      TUNEFARM_ASSIGN_OR_RETURN(int64_t ax, Axis(a, in.size()));
      norm.push_back(ax);
    }
    for (size_t i = 0; i < in.size(); ++i) {
      bool drop = norm.empty() ? in[i] == 1 : std::count(norm.begin(), norm.end(), int64_t(i)) > 0;
      if (drop && in[i] != 1) return Fail("cannot squeeze axis " + std::to_string(i) + " of extent " + std::to_string(in[i]));
      if (!drop) out.push_back(in[i]);
    }
  } else {
    size_t rank = in.size() + axes.size();
    std::vector<bool> inserted(rank, false);
    for (int64_t a : axes) {
      TUNEFARM_ASSIGN_OR_RETURN(int64_t ax, Axis(a, rank));
      inserted[size_t(ax)] = true;
    }
    size_t j = 0;
    for (size_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : in[j++]);
  }
  if (In(0).constant) {
    ConstantData c = *In(0).constant;
    c.shape = out;
    SetConstOut(0, std::move(c));
  } else {
    SetOut(0, In(0).dtype, out);
  }
  return Status::OK();
}

Status NodeInference::ReduceMean() {
  const auto& in = In(0).shape;
  std::vector<int64_t> axes = n_.GetInts("axes");
  if (g_.opset >= 18 && HasInput(1)) {
    TUNEFARM_ASSIGN_OR_RETURN(axes, ConstInts(1, "axes"));
  }
  bool keep = n_.GetInt("keepdims", 1) != 0;
  std::vector<bool> reduce(in.size(), axes.empty());
  for (int64_t a : axes) {
    TUNEFARM_ASSIGN_OR_RETURN(int64_t ax, Axis(a, in.size()));
    reduce[size_t(ax)] = true;
  }
  std::vector<int64_t> reduced_axes;
  for (size_t i = 0; i < in.size(); ++i) {
    if (reduce[i]) reduced_axes.push_back(int64_t(i));
  }
  SetInts("_axes", reduced_axes);
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!reduce[i]) out.push_back(in[i]);
    else if (keep) out.push_back(1);
  }
  SetOut(0, DataType::kFloat32, out);
  return Status::OK();
}

Status NodeInference::Run() {
  const std::string& op = n_.op_type;
  if (op == "Constant") {
    auto it = n_.attrs.find("value");
    if (it == n_.attrs.end() || it->second.kind != Attribute::kTensor) return Fail("only the 'value' tensor form is supported");
    SetConstOut(0, *it->second.tensor);
    return Status::OK();
  }
  for (size_t i = 0; i < n_.inputs.size(); ++i) {
    if (HasInput(i) && !In(i).shape_known) return Fail("input '" + In(i).name + "' has an unknown shape");
  }
  if (n_.inputs.empty() || !HasInput(0)) return Fail("missing its first input");
  if (op == "Conv") return Conv();
  if (op == "MaxPool") return Pool(true);
  if (op == "AveragePool") return Pool(false);
  if (op == "Gemm") return Gemm();
  if (op == "MatMul") return MatMul();
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return Binary();
  if (op == "Reshape") return Reshape();
  if (op == "Concat") return Concat();
  if (op == "Split") return Split();
  if (op == "Slice") return Slice();
  if (op == "Transpose") return Transpose();
  if (op == "Pad") return Pad();
  if (op == "Gather") return Gather();
  if (op == "Unsqueeze") return Unsqueeze(false);
  if (op == "Squeeze") return Unsqueeze(true);
  if (op == "ReduceMean") return ReduceMean();
  if (op == "GlobalAveragePool") {
    TUNEFARM_RETURN_IF_ERROR(NeedRank(0, 4, "GlobalAveragePool"));
    SetOut(0, DataType::kFloat32, {In(0).shape[0], In(0).shape[1], 1, 1});
    return Status::OK();
  }
  if (op == "Flatten") {
    const auto& in = In(0).shape;
    int64_t axis = n_.GetInt("axis", 1);
    if (axis < 0) axis += int64_t(in.size());
    if (axis < 0 || axis > int64_t(in.size())) return Fail("axis out of range for rank " + std::to_string(in.size()));
    SetOut(0, In(0).dtype, {Product(in, 0, size_t(axis)), Product(in, size_t(axis), in.size())});
    return Status::OK();
  }
  if (op == "Shape") {
    const auto& in = In(0).shape;
    const int64_t rank = int64_t(in.size());
    auto clamp = [rank](int64_t v) { return std::max<int64_t>(0, std::min(rank, v < 0 ? v + rank : v)); };
    int64_t start = clamp(n_.GetInt("start", 0)), end = clamp(n_.GetInt("end", rank));
    std::vector<int64_t> dims(in.begin() + start, in.begin() + std::max(start, end));
    ConstantData c{DataType::kInt64, {int64_t(dims.size())}, {}, dims};
    SetConstOut(0, std::move(c));
    return Status::OK();
  }
  // Element-wise ops keep their input's shape (Dropout's optional mask too).
  static const char* kSameShape[] = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "HardSwish", "Clip",
                                     "Identity", "Softmax", "BatchNormalization", "Dropout"};
  if (std::find(std::begin(kSameShape), std::end(kSameShape), op) != std::end(kSameShape)) {
    if (op == "Identity" && In(0).constant) {
      SetConstOut(0, *In(0).constant);
      return Status::OK();
    }
    SetOut(0, In(0).dtype, In(0).shape);
    if (op == "Dropout" && n_.outputs.size() > 1) SetOut(1, DataType::kBool, In(0).shape);
    // Training-mode BatchNormalization also returns the running mean and variance, shaped [C].
    if (op == "BatchNormalization" && HasInput(1)) {
      for (size_t i = 1; i < n_.outputs.size(); ++i) SetOut(i, DataType::kFloat32, In(1).shape);
    }
    return Status::OK();
  }
  return Fail("no shape rule for this operator");
}

}  // namespace

Result<std::vector<int64_t>> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) {
      return Status::InvalidArgument("shapes " + ShapeStr(a) + " and " + ShapeStr(b) + " do not broadcast");
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Status InferShapes(Graph* g) {
  for (int idx : g->inputs) {
    const Value& v = g->values[size_t(idx)];
    if (!v.shape_known) {
      return Status::InvalidArgument("graph input '" + v.name + "' has a symbolic or missing shape " + ShapeStr(v.shape) +
                                     "; give it a fixed shape");
    }
  }
  for (Node& n : g->nodes) TUNEFARM_RETURN_IF_ERROR(NodeInference(g, n).Run());
  return Status::OK();
}

}  // namespace tunefarm::graph
