// Data movement and shape operators: Constant, Identity, Shape, Size, Reshape, Flatten, Squeeze,
// Unsqueeze, Transpose, DepthToSpace, SpaceToDepth, Concat, Split, Slice, Pad, Expand, Tile, Trilu,
// ConstantOfShape, Range (the gathers and scatters are index_ops.cc's).
//
// Each operator's arguments are parsed once (Parse* below, from the attributes or the constant
// inputs of the opset's form) and used by its inference, folding and lowering alike.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/operators/constant_eval.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/registry.h"

namespace tunefarm::operators {
namespace {

using graph::ConstantData;
using graph::DataType;
using graph::Node;
using Fold = Result<std::vector<ConstantData>>;

// Lowers a node whose output shares its input's storage.
Status LowerView(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
  const graph::Value& out = cx.V(n.outputs[0]);
  cx.Define(n.outputs[0], cx.View(x, out.shape, out.name), 0);
  return Status::OK();
}

// Folds a view: the same elements under the output's shape.
Fold FoldView(InferContext& cx) {
  ConstantData c = cx.Const(0);
  c.shape = cx.Out(0).shape;
  return std::vector<ConstantData>{std::move(c)};
}

// --- Constant -------------------------------------------------------------------------------
Status InferConstant(InferContext& cx) {
  const Node& n = cx.node();
  if (auto it = n.attrs.find("value"); it != n.attrs.end()) {
    cx.SetConstOut(0, *it->second.tensor);
  } else if (n.Has("value_float")) {
    cx.SetConstOut(0, ConstantData{DataType::kFloat32, {}, {n.GetFloat("value_float", 0)}, {}});
  } else if (n.Has("value_int")) {
    cx.SetConstOut(0, ConstantData{DataType::kInt64, {}, {}, {n.GetInt("value_int", 0)}});
  } else if (auto f = n.attrs.find("value_floats"); f != n.attrs.end()) {
    cx.SetConstOut(0, ConstantData{DataType::kFloat32, {int64_t(f->second.floats.size())}, f->second.floats, {}});
  } else if (auto i = n.attrs.find("value_ints"); i != n.attrs.end()) {
    cx.SetConstOut(0, ConstantData{DataType::kInt64, {int64_t(i->second.ints.size())}, {}, i->second.ints});
  } else {
    return cx.Fail("needs one of value, value_float, value_floats, value_int, value_ints");
  }
  return Status::OK();
}

// --- Identity -------------------------------------------------------------------------------
Status InferIdentity(InferContext& cx) {
  cx.SetOut(0, cx.In(0).dtype, cx.Shape(0));
  return Status::OK();
}

// --- Shape, Size ----------------------------------------------------------------------------
Status InferShape(InferContext& cx) {
  const auto& in = cx.Shape(0);
  const int64_t rank = int64_t(in.size());
  auto clamp = [rank](int64_t v) { return std::max<int64_t>(0, std::min(rank, v < 0 ? v + rank : v)); };
  const int64_t start = clamp(cx.node().GetInt("start", 0)), end = clamp(cx.node().GetInt("end", rank));
  std::vector<int64_t> dims(in.begin() + start, in.begin() + std::max(start, end));
  cx.SetConstOut(0, ConstantData{DataType::kInt64, {int64_t(dims.size())}, {}, dims});
  return Status::OK();
}

Status InferSize(InferContext& cx) {
  cx.SetConstOut(0, ConstantData{DataType::kInt64, {}, {}, {Product(cx.Shape(0))}});
  return Status::OK();
}

// --- Reshape, Flatten, Squeeze, Unsqueeze ---------------------------------------------------
Status InferReshape(InferContext& cx) {
  std::vector<int64_t> target;
  if (cx.opset() < 5) {
    target = cx.node().GetInts("shape");
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(target, cx.ConstInts(1, "shape"));
  }
  const auto& in = cx.Shape(0);
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !cx.node().GetInt("allowzero", 0)) {
      if (i >= in.size()) return cx.Fail("shape copies dimension " + std::to_string(i) + " the input does not have");
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (infer_at >= 0) return cx.Fail("more than one -1 in the target shape");
      infer_at = int64_t(i);
    } else if (target[i] < 0) {
      return cx.Fail("negative dimension " + std::to_string(target[i]) + " in the target shape");
    } else if (target[i] != 0 && known > kMaxTensorElements / target[i]) {
      return cx.Fail("target shape " + ShapeStr(target) + " holds more than 2^40 elements");
    } else {
      known *= target[i];
    }
  }
  const int64_t total = Product(in);
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) return cx.Fail("cannot reshape " + ShapeStr(in) + " to " + ShapeStr(target));
    target[size_t(infer_at)] = total / known;
  } else if (known != total) {
    return cx.Fail("cannot reshape " + ShapeStr(in) + " (" + std::to_string(total) + " elements) to " +
                   ShapeStr(target));
  }
  cx.SetOut(0, cx.In(0).dtype, target);
  return Status::OK();
}

Status InferFlatten(InferContext& cx) {
  const auto& in = cx.Shape(0);
  int64_t axis = cx.node().GetInt("axis", 1);
  if (axis < 0) axis += int64_t(in.size());
  if (axis < 0 || axis > int64_t(in.size())) return cx.Fail("axis out of range for rank " + std::to_string(in.size()));
  cx.SetOut(0, cx.In(0).dtype, {Product(in, 0, size_t(axis)), Product(in, size_t(axis), in.size())});
  return Status::OK();
}

// Squeeze/Unsqueeze axes: an attribute before opset 13, an optional input from 13.
Result<std::vector<int64_t>> SqueezeAxes(const NodeView& v) {
  if (v.opset() >= 13) {
    TUNEFARM_ASSIGN_OR_RETURN(auto axes, v.OptionalConstInts(1, "axes"));
    return axes ? *axes : std::vector<int64_t>();
  }
  return v.node().GetInts("axes");
}

Status InferSqueeze(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, SqueezeAxes(cx));
  const auto& in = cx.Shape(0);
  std::vector<bool> drop(in.size(), false);
  for (int64_t a : axes) {
    TUNEFARM_ASSIGN_OR_RETURN(int64_t ax, cx.Axis(a, in.size()));
    if (in[size_t(ax)] != 1)
      return cx.Fail("cannot squeeze axis " + std::to_string(ax) + " of extent " + std::to_string(in[size_t(ax)]));
    drop[size_t(ax)] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!(axes.empty() ? in[i] == 1 : drop[i])) out.push_back(in[i]);
  }
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Status InferUnsqueeze(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, SqueezeAxes(cx));
  if (axes.empty()) return cx.Fail("needs axes");
  const auto& in = cx.Shape(0);
  const size_t rank = in.size() + axes.size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    TUNEFARM_ASSIGN_OR_RETURN(int64_t ax, cx.Axis(a, rank));
    if (inserted[size_t(ax)]) return cx.Fail("axis " + std::to_string(a) + " repeats");
    inserted[size_t(ax)] = true;
  }
  std::vector<int64_t> out;
  size_t j = 0;
  for (size_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : in[j++]);
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

// --- Transpose ------------------------------------------------------------------------------
Result<std::vector<int64_t>> Perm(const NodeView& v) {
  const size_t rank = v.Shape(0).size();
  std::vector<int64_t> perm = v.node().GetInts("perm");
  if (perm.empty()) {
    for (size_t i = rank; i-- > 0;) perm.push_back(int64_t(i));
  }
  if (perm.size() != rank) return v.Fail("perm " + ShapeStr(perm) + " does not match rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(rank) || seen[size_t(p)])
      return v.Fail("perm " + ShapeStr(perm) + " is not a permutation");
    seen[size_t(p)] = true;
  }
  return perm;
}

Status InferTranspose(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(cx));
  std::vector<int64_t> out;
  out.reserve(perm.size());
  for (int64_t p : perm) out.push_back(cx.Shape(0)[size_t(p)]);
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Fold FoldTranspose(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(cx));
  const auto& in = cx.Shape(0);
  return std::vector<ConstantData>{Remap(cx.Const(0), cx.Out(0).shape, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> idx(in.size());
    for (size_t d = 0; d < perm.size(); ++d) idx[size_t(perm[d])] = o[d];
    return FlatIndex(in, idx);
  })};
}

// A permutation that moves only axes of extent 1 leaves every element where it was (PyTorch's
// batch-first attention exports transpose [1, S, D] <-> [S, 1, D] around every layer).
bool MovesOnlyUnitAxes(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm) {
  std::vector<int64_t> moved;
  for (int64_t p : perm) {
    if (shape[size_t(p)] != 1) moved.push_back(p);
  }
  return std::is_sorted(moved.begin(), moved.end());
}

Status LowerTranspose(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Perm(NodeView(cx.graph(), n)));
  if (MovesOnlyUnitAxes(cx.V(n.inputs[0]).shape, perm)) return LowerView(cx, n);  // no copy
  return cx.EmitPlain(n, {0}, [perm](const std::vector<ir::Tensor>& i) { return compute::Transpose(i[0], perm); });
}

// --- DepthToSpace, SpaceToDepth ---------------------------------------------------------------
// [N, C, H, W] <-> [N, C/b^2, H*b, W*b]. DepthToSpace reads the depth as (b, b, C/b^2) in DCR mode
// (the default) and as (C/b^2, b, b) in CRD mode (PixelShuffle); SpaceToDepth is DCR's inverse.
struct SpaceDepth {
  int64_t block = 1;
  bool crd = false;
  bool to_space = true;
};

Result<SpaceDepth> ParseSpaceDepth(const NodeView& v) {
  const Node& n = v.node();
  SpaceDepth s;
  s.to_space = n.op_type == "DepthToSpace";
  if (!n.Has("blocksize")) return v.Fail("missing required attribute 'blocksize'");
  s.block = n.GetInt("blocksize", 0);
  if (s.block < 1 || s.block > 4096) return v.Fail("blocksize must be in [1, 4096], got " + std::to_string(s.block));
  const std::string mode = n.GetString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return v.Fail("mode must be 'DCR' or 'CRD', got '" + mode + "'");
  s.crd = mode == "CRD";
  if (v.Shape(0).size() != 4)
    return v.Fail("takes a 4-D [N, C, H, W] input, got rank " + std::to_string(v.Shape(0).size()));
  return s;
}

// The input index an output index reads (I: int64_t when folding, ir::Expr when lowering).
// `channels` is the output's channel count.
template <typename I>
std::vector<I> SpaceDepthSource(const SpaceDepth& s, int64_t channels, const std::vector<I>& o) {
  const int64_t b = s.block;
  if (s.to_space) {  // out [n, c, h*b + i, w*b + j]
    const I& c = o[1];
    const I i = o[2] % I(b), j = o[3] % I(b);
    const I depth = s.crd ? c * I(b * b) + i * I(b) + j : (i * I(b) + j) * I(channels) + c;
    return {o[0], depth, o[2] / I(b), o[3] / I(b)};
  }
  // SpaceToDepth: out [n, (i*b + j)*C + c, h, w] with C the input's channels.
  const int64_t in_channels = channels / (b * b);
  const I& ch = o[1];
  const I c = ch % I(in_channels), j = (ch / I(in_channels)) % I(b), i = ch / I(in_channels * b);
  return {o[0], c, o[2] * I(b) + i, o[3] * I(b) + j};
}

Status InferSpaceDepth(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(SpaceDepth s, ParseSpaceDepth(cx));
  const auto& in = cx.Shape(0);
  const int64_t b = s.block;
  if (s.to_space) {
    if (in[1] % (b * b) != 0) {
      return cx.Fail(std::to_string(in[1]) + " channels do not divide into blocks of " + std::to_string(b) + "x" +
                     std::to_string(b));
    }
    cx.SetOut(0, cx.In(0).dtype, {in[0], in[1] / (b * b), in[2] * b, in[3] * b});
  } else {
    if (in[2] % b != 0 || in[3] % b != 0) {
      return cx.Fail("height " + std::to_string(in[2]) + " and width " + std::to_string(in[3]) +
                     " must be multiples of the blocksize " + std::to_string(b));
    }
    cx.SetOut(0, cx.In(0).dtype, {in[0], in[1] * b * b, in[2] / b, in[3] / b});
  }
  return Status::OK();
}

Fold FoldSpaceDepth(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(SpaceDepth s, ParseSpaceDepth(cx));
  const auto& in = cx.Shape(0);
  const int64_t channels = cx.Out(0).shape[1];
  return std::vector<ConstantData>{Remap(cx.Const(0), cx.Out(0).shape, [&](const std::vector<int64_t>& o) {
    return FlatIndex(in, SpaceDepthSource<int64_t>(s, channels, o));
  })};
}

Status LowerSpaceDepth(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(SpaceDepth s, ParseSpaceDepth(NodeView(cx.graph(), n)));
  const std::vector<int64_t> out_shape = cx.V(n.outputs[0]).shape;
  return cx.EmitPlain(n, {0}, [s, out_shape](const std::vector<ir::Tensor>& i) {
    const ir::Tensor& x = i[0];
    return te::Compute(x->name + (s.to_space ? ".d2s" : ".s2d"), out_shape, [&](const std::vector<ir::Expr>& o) {
      return te::Read(x, SpaceDepthSource<ir::Expr>(s, out_shape[1], o));
    });
  });
}

// --- Concat ---------------------------------------------------------------------------------
Result<int64_t> ConcatAxis(const NodeView& v) { return v.Axis(v.node().GetInt("axis", 0), v.Shape(0).size()); }

Status InferConcat(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, ConcatAxis(cx));
  const auto first = cx.Shape(0);
  std::vector<int64_t> out = first;
  out[size_t(axis)] = 0;
  for (size_t i = 0; i < cx.num_inputs(); ++i) {
    if (!cx.HasInput(i)) return cx.Fail("input " + std::to_string(i) + " is missing");
    const auto& s = cx.Shape(i);
    if (s.size() != first.size())
      return cx.Fail("inputs have different ranks: " + ShapeStr(first) + " vs " + ShapeStr(s));
    for (size_t d = 0; d < s.size(); ++d) {
      if (int64_t(d) != axis && s[d] != first[d])
        return cx.Fail("inputs differ outside the axis: " + ShapeStr(first) + " vs " + ShapeStr(s));
    }
    out[size_t(axis)] += s[size_t(axis)];
  }
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Fold FoldConcat(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, ConcatAxis(cx));
  const auto& out_shape = cx.Out(0).shape;
  const int64_t outer = Product(out_shape, 0, size_t(axis)),
                inner = Product(out_shape, size_t(axis) + 1, out_shape.size());
  ConstantData out = EmptyConstant(cx.In(0).dtype, out_shape);
  // Each outer slice: every input's rows along the axis in turn, copied element for element.
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < cx.num_inputs(); ++i) {
      const ConstantData& c = cx.Const(i);
      const int64_t rows = cx.Shape(i)[size_t(axis)];
      const size_t begin = size_t(o * rows * inner), end = begin + size_t(rows * inner);
      if (out.dtype == DataType::kFloat32) {
        out.f32.insert(out.f32.end(), c.f32.begin() + int64_t(begin), c.f32.begin() + int64_t(end));
      } else {
        out.i64.insert(out.i64.end(), c.i64.begin() + int64_t(begin), c.i64.begin() + int64_t(end));
      }
    }
  }
  return std::vector<ConstantData>{std::move(out)};
}

Status LowerConcat(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, ConcatAxis(NodeView(cx.graph(), n)));
  // Channel concatenation of blocked activations stays blocked when every input has the block.
  int64_t block = 0;
  if (axis == 1 && cx.V(n.outputs[0]).shape.size() == 4 && cx.plan_layouts()) {
    block = cx.V(n.inputs[0]).constant ? 0 : cx.Preferred(n.inputs[0]);
    for (int in : n.inputs) {
      if (cx.V(in).constant || cx.Preferred(in) != block || cx.V(in).shape[1] % std::max<int64_t>(block, 1) != 0)
        block = 0;
    }
  }
  std::vector<int> ts;
  for (int in : n.inputs) {
    TUNEFARM_ASSIGN_OR_RETURN(int t, cx.Get(in, block));
    ts.push_back(t);
  }
  int t = cx.Emit(
      "Concat", ts, [axis](const std::vector<ir::Tensor>& i) { return compute::Concat(i, axis); }, cx.OutType(n),
      cx.V(n.outputs[0]).name);
  cx.Define(n.outputs[0], t, block);
  return Status::OK();
}

// --- Split ----------------------------------------------------------------------------------
struct SplitArgs {
  int64_t axis = 0;
  std::vector<int64_t> parts;
};

Result<SplitArgs> ParseSplit(const NodeView& v) {
  const auto& in = v.Shape(0);
  SplitArgs a;
  TUNEFARM_ASSIGN_OR_RETURN(a.axis, v.Axis(v.node().GetInt("axis", 0), in.size()));
  const int64_t extent = in[size_t(a.axis)];
  const int64_t outputs = int64_t(v.num_outputs());
  if (v.opset() >= 13 && v.HasInput(1)) {
    TUNEFARM_ASSIGN_OR_RETURN(a.parts, v.ConstInts(1, "split"));
  } else if (v.node().Has("split")) {
    a.parts = v.node().GetInts("split");
  } else if (v.node().Has("num_outputs")) {
    // Opset 18: ceil-sized parts, the last one smaller.
    const int64_t k = v.node().GetInt("num_outputs", 0);
    if (k != outputs)
      return v.Fail("num_outputs " + std::to_string(k) + " but " + std::to_string(outputs) + " outputs");
    const int64_t part = (extent + k - 1) / k;
    for (int64_t i = 0; i < k; ++i) a.parts.push_back(std::max<int64_t>(0, std::min(part, extent - i * part)));
  } else {
    if (extent % outputs != 0) {
      return v.Fail("cannot split " + std::to_string(extent) + " into " + std::to_string(outputs) + " equal parts");
    }
    a.parts.assign(size_t(outputs), extent / outputs);
  }
  if (int64_t(a.parts.size()) != outputs || std::accumulate(a.parts.begin(), a.parts.end(), int64_t(0)) != extent ||
      std::any_of(a.parts.begin(), a.parts.end(), [](int64_t p) { return p < 0; })) {
    return v.Fail("split sizes " + ShapeStr(a.parts) + " do not add up to the axis extent " + std::to_string(extent));
  }
  return a;
}

Status InferSplit(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(SplitArgs a, ParseSplit(cx));
  for (size_t i = 0; i < a.parts.size(); ++i) {
    std::vector<int64_t> s = cx.Shape(0);
    s[size_t(a.axis)] = a.parts[i];
    cx.SetOut(i, cx.In(0).dtype, s);
  }
  return Status::OK();
}

// Split folds like Slice: a tf2onnx graph splits a constant shape or pads vector and concatenates
// the pieces back into a Pad's pads or a Reshape's shape, which must be constants.
Fold FoldSplit(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(SplitArgs a, ParseSplit(cx));
  const auto& in = cx.Shape(0);
  std::vector<ConstantData> out;
  int64_t offset = 0;
  for (const int64_t part : a.parts) {
    std::vector<int64_t> shape = in;
    shape[size_t(a.axis)] = part;
    out.push_back(Remap(cx.Const(0), shape, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> idx = o;
      idx[size_t(a.axis)] += offset;
      return FlatIndex(in, idx);
    }));
    offset += part;
  }
  return out;
}

Status LowerSplit(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(SplitArgs a, ParseSplit(NodeView(cx.graph(), n)));
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
  int64_t offset = 0;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const graph::Value& o = cx.V(n.outputs[k]);
    std::vector<int64_t> begin(o.shape.size(), 0), step(o.shape.size(), 1);
    begin[size_t(a.axis)] = offset;
    offset += a.parts[k];
    auto shape = o.shape;
    cx.Define(n.outputs[k],
              cx.Emit(
                  n.op_type, {x},
                  [=](const std::vector<ir::Tensor>& i) { return compute::StridedSlice(i[0], begin, step, shape); },
                  cx.OutType(n, k), o.name),
              0);
  }
  return Status::OK();
}

// --- Slice ----------------------------------------------------------------------------------
struct SliceArgs {
  std::vector<int64_t> begin, step, out_shape;
};

Result<SliceArgs> ParseSlice(const NodeView& v) {
  const auto& in = v.Shape(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (v.opset() < 10) {
    starts = v.node().GetInts("starts");
    ends = v.node().GetInts("ends");
    axes = v.node().GetInts("axes");
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(starts, v.ConstInts(1, "starts"));
    TUNEFARM_ASSIGN_OR_RETURN(ends, v.ConstInts(2, "ends"));
    TUNEFARM_ASSIGN_OR_RETURN(auto ax, v.OptionalConstInts(3, "axes"));
    TUNEFARM_ASSIGN_OR_RETURN(auto st, v.OptionalConstInts(4, "steps"));
    if (ax) axes = *ax;
    if (st) steps = *st;
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return v.Fail("starts, ends, axes and steps differ in length");
  }
  SliceArgs a{std::vector<int64_t>(in.size(), 0), std::vector<int64_t>(in.size(), 1), in};
  for (size_t i = 0; i < starts.size(); ++i) {
    TUNEFARM_ASSIGN_OR_RETURN(int64_t ax, v.Axis(axes[i], in.size()));
    const int64_t dim = in[size_t(ax)], st = steps[i];
    if (st == 0) return v.Fail("slice step 0");
    auto clamp = [](int64_t x, int64_t lo, int64_t hi) { return std::max(lo, std::min(hi, x)); };
    // Exporters write INT64_MAX / INT64_MIN for "to the end": clamp before adding dim.
    int64_t s = clamp(starts[i], -dim - 1, dim + 1), e = clamp(ends[i], -dim - 1, dim + 1);
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    // In 128 bits: steps near INT64_MAX/MIN must not overflow the count.
    const __int128 step = st;
    if (st > 0) {
      s = clamp(s, 0, dim);
      e = clamp(e, 0, dim);
      a.out_shape[size_t(ax)] = int64_t(std::max<__int128>(0, (__int128(e) - s + step - 1) / step));
    } else {
      s = clamp(s, -1, dim - 1);
      e = clamp(e, -1, dim - 1);
      a.out_shape[size_t(ax)] = int64_t(std::max<__int128>(0, (__int128(s) - e - step - 1) / -step));
    }
    a.begin[size_t(ax)] = s;
    a.step[size_t(ax)] = st;
  }
  return a;
}

Status InferSlice(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(SliceArgs a, ParseSlice(cx));
  cx.SetOut(0, cx.In(0).dtype, a.out_shape);
  return Status::OK();
}

Fold FoldSlice(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(SliceArgs a, ParseSlice(cx));
  const auto& in = cx.Shape(0);
  return std::vector<ConstantData>{Remap(cx.Const(0), a.out_shape, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> idx(o.size());
    for (size_t d = 0; d < o.size(); ++d) idx[d] = a.begin[d] + o[d] * a.step[d];
    return FlatIndex(in, idx);
  })};
}

Status LowerSlice(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(SliceArgs a, ParseSlice(NodeView(cx.graph(), n)));
  return cx.EmitPlain(n, {0}, [a](const std::vector<ir::Tensor>& i) {
    return compute::StridedSlice(i[0], a.begin, a.step, a.out_shape);
  });
}

// --- Pad ------------------------------------------------------------------------------------
struct PadArgs {
  std::vector<int64_t> begin, end;
  compute::PadMode mode = compute::PadMode::kConstant;
  float value = 0;
  bool runtime_value = false;  // the fill is a computed tensor (input 2)
};

Result<PadArgs> ParsePad(const NodeView& v) {
  const size_t rank = v.Shape(0).size();
  std::vector<int64_t> pads;
  PadArgs a;
  if (v.opset() < 11) {
    pads = v.node().GetInts("pads");
    a.value = v.node().GetFloat("value", 0.0f);
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(pads, v.ConstInts(1, "pads"));
    if (v.HasInput(2)) {
      if (v.In(2).constant) {
        TUNEFARM_ASSIGN_OR_RETURN(auto value, v.OptionalConstScalar(2, "constant_value"));
        a.value = *value;
      } else {
        a.runtime_value = true;
      }
    }
  }
  // Opset 18: pads cover only the listed axes.
  std::vector<int64_t> axes;
  if (v.opset() >= 18) {
    TUNEFARM_ASSIGN_OR_RETURN(auto ax, v.OptionalConstInts(3, "axes"));
    if (ax) {
      for (int64_t x : *ax) {
        TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, v.Axis(x, rank));
        axes.push_back(axis);
      }
    }
  }
  if (axes.empty()) {
    for (size_t i = 0; i < rank; ++i) axes.push_back(int64_t(i));
  }
  if (pads.size() != 2 * axes.size()) {
    return v.Fail("pads has " + std::to_string(pads.size()) + " values for " + std::to_string(axes.size()) + " axes");
  }
  a.begin.assign(rank, 0);
  a.end.assign(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    a.begin[size_t(axes[i])] = pads[i];
    a.end[size_t(axes[i])] = pads[i + axes.size()];
  }
  const std::string mode = v.node().GetString("mode", "constant");
  static const std::pair<const char*, compute::PadMode> kModes[] = {{"constant", compute::PadMode::kConstant},
                                                                    {"edge", compute::PadMode::kEdge},
                                                                    {"reflect", compute::PadMode::kReflect},
                                                                    {"wrap", compute::PadMode::kWrap}};
  auto it = std::find_if(std::begin(kModes), std::end(kModes), [&](const auto& m) { return mode == m.first; });
  if (it == std::end(kModes) || (it->second == compute::PadMode::kWrap && v.opset() < 19)) {
    return v.Fail("unsupported pad mode '" + mode + "' (constant, edge, reflect; wrap from opset 19)");
  }
  a.mode = it->second;
  return a;
}

Status InferPad(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(PadArgs a, ParsePad(cx));
  std::vector<int64_t> out = cx.Shape(0);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] += a.begin[i] + a.end[i];
    if (out[i] < 0) return cx.Fail("pads crop axis " + std::to_string(i) + " below zero");
    if (a.mode != compute::PadMode::kConstant && cx.Shape(0)[i] == 0 && out[i] > 0) {
      return cx.Fail("cannot pad the empty axis " + std::to_string(i) + " in " + cx.node().GetString("mode", "") +
                     " mode");
    }
  }
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Status LowerPad(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(PadArgs a, ParsePad(NodeView(cx.graph(), n)));
  for (size_t i = 0; i < a.begin.size(); ++i) {
    if (a.begin[i] < 0 || a.end[i] < 0) return cx.Fail(n, "negative pads (cropping) are not supported");
  }
  if (a.runtime_value) {
    return cx.EmitPlain(n, {0, 2}, [a](const std::vector<ir::Tensor>& i) {
      return compute::Pad(i[0], a.begin, a.end, a.mode, 0, i[1]);
    });
  }
  return cx.EmitPlain(
      n, {0}, [a](const std::vector<ir::Tensor>& i) { return compute::Pad(i[0], a.begin, a.end, a.mode, a.value); });
}

// --- Trilu ---------------------------------------------------------------------------------
// The diagonal offset k: a constant scalar input (0 when absent).
Result<int64_t> TriluOffset(const NodeView& v) {
  TUNEFARM_ASSIGN_OR_RETURN(auto k, v.OptionalConstInts(1, "k"));
  if (!k) return int64_t(0);
  if (k->size() != 1) return v.Fail("k must be a scalar");
  return (*k)[0];
}

Status InferTrilu(InferContext& cx) {
  if (cx.Shape(0).size() < 2)
    return cx.Fail("takes a tensor of rank 2 or more, got rank " + std::to_string(cx.Shape(0).size()));
  TUNEFARM_RETURN_IF_ERROR(TriluOffset(cx).status());
  cx.SetOut(0, cx.In(0).dtype, cx.Shape(0));
  return Status::OK();
}

Status LowerTrilu(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(int64_t k, TriluOffset(NodeView(cx.graph(), n)));
  const bool upper = n.GetInt("upper", 1) != 0;
  return cx.EmitPlain(n, {0}, [upper, k](const std::vector<ir::Tensor>& i) { return compute::Trilu(i[0], upper, k); });
}

// --- Expand, Tile ---------------------------------------------------------------------------
Status InferExpand(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, cx.ConstInts(1, "shape"));
  const auto& in = cx.Shape(0);
  const size_t rank = std::max(in.size(), shape.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = i + in.size() >= rank ? in[i + in.size() - rank] : 1;
    const int64_t b = i + shape.size() >= rank ? shape[i + shape.size() - rank] : 1;
    if (b < 0 || (a != b && a != 1 && b != 1))
      return cx.Fail("cannot expand " + ShapeStr(in) + " to " + ShapeStr(shape));
    out[i] = a == 1 ? b : a;
  }
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Fold FoldExpand(InferContext& cx) { return std::vector<ConstantData>{BroadcastTo(cx.Const(0), cx.Out(0).shape)}; }

Status LowerExpand(LowerApi& cx, const Node& n) {
  auto shape = cx.V(n.outputs[0]).shape;
  return cx.EmitPlain(n, {0}, [shape](const std::vector<ir::Tensor>& i) { return compute::Expand(i[0], shape); });
}

Status InferTile(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, cx.ConstInts(1, "repeats"));
  std::vector<int64_t> out = cx.Shape(0);
  if (repeats.size() != out.size())
    return cx.Fail("repeats " + ShapeStr(repeats) + " does not match rank " + std::to_string(out.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    if (repeats[i] < 0) return cx.Fail("negative repeat");
    if (repeats[i] != 0 && out[i] > kMaxTensorElements / repeats[i])
      return cx.Fail("repeats " + ShapeStr(repeats) + " make the output too large");
    out[i] *= repeats[i];
  }
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Status LowerTile(LowerApi& cx, const Node& n) {
  const auto in_shape = cx.V(n.inputs[0]).shape, out_shape = cx.V(n.outputs[0]).shape;
  return cx.EmitPlain(n, {0}, [in_shape, out_shape](const std::vector<ir::Tensor>& i) {
    return te::Compute(i[0]->name + ".tile", out_shape, [&](const std::vector<ir::Expr>& o) {
      std::vector<ir::Expr> idx;
      for (size_t d = 0; d < o.size(); ++d)
        idx.push_back(in_shape[d] == 1 ? ir::Expr(0) : o[d] % ir::Expr(in_shape[d]));
      return te::Read(i[0], idx);
    });
  });
}

// --- ConstantOfShape, Range -----------------------------------------------------------------
Status InferConstantOfShape(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, cx.ConstInts(0, "input"));
  for (int64_t d : shape) {
    if (d < 0) return cx.Fail("negative dimension in " + ShapeStr(shape));
  }
  ConstantData value{DataType::kFloat32, {}, {0.0f}, {}};
  if (auto it = cx.node().attrs.find("value"); it != cx.node().attrs.end()) {
    value = *it->second.tensor;
    if (value.num_elements() != 1) return cx.Fail("value must hold one element");
  }
  const auto n = CheckedElements(shape);
  if (!n || *n > kMaxInferenceFoldElements) {
    return cx.Fail("output " + ShapeStr(shape) + " is too large to fill at compile time (at most " +
                   std::to_string(kMaxInferenceFoldElements) + " elements)");
  }
  ConstantData out = EmptyConstant(value.dtype, shape);
  // The value's own storage, repeated: exact for every type.
  if (value.dtype == DataType::kFloat32) {
    out.f32.assign(size_t(*n), value.f32[0]);
  } else {
    out.i64.assign(size_t(*n), value.i64[0]);
  }
  cx.SetConstOut(0, std::move(out));
  return Status::OK();
}

Status InferRange(InferContext& cx) {
  for (size_t i = 0; i < 3; ++i) {
    if (!cx.HasInput(i) || !cx.In(i).constant || cx.In(i).constant->num_elements() != 1) {
      return cx.Fail("start, limit and delta must be constant scalars");
    }
    if (cx.In(i).dtype != cx.In(0).dtype) return cx.Fail("start, limit and delta must have one type");
  }
  const double start = ElementAt(cx.Const(0), 0), limit = ElementAt(cx.Const(1), 0), delta = ElementAt(cx.Const(2), 0);
  if (delta == 0) return cx.Fail("delta 0");
  const double count = std::max(0.0, std::ceil((limit - start) / delta));
  if (count > double(kMaxInferenceFoldElements))
    return cx.Fail("range of " + std::to_string(count) + " elements is too large");
  ConstantData out = EmptyConstant(cx.In(0).dtype, {int64_t(count)});
  for (int64_t i = 0; i < int64_t(count); ++i) {
    if (out.dtype == DataType::kFloat32) {
      out.f32.push_back(float(start + double(i) * delta));
    } else {
      out.i64.push_back(cx.Const(0).i64[0] + i * cx.Const(2).i64[0]);
    }
  }
  cx.SetConstOut(0, std::move(out));
  return Status::OK();
}

}  // namespace

std::vector<OperatorDef> TensorOperators() {
  return {
      {"Constant",
       "tensor",
       {{"value", kTensor},
        {"value_float", kFloat},
        {"value_floats", kFloats},
        {"value_int", kInt},
        {"value_ints", kInts}},
       InferConstant,
       nullptr,
       nullptr,
       "sparse and string values are not read"},
      {"ConstantOfShape",
       "tensor",
       {{"value", kTensor}},
       InferConstantOfShape,
       nullptr,
       nullptr,
       "the shape must be a constant; filled at compile time"},
      {"Range", "tensor", {}, InferRange, nullptr, nullptr, "constant operands; evaluated at compile time", false, 3},
      {"Identity", "tensor", {}, InferIdentity, FoldView, LowerView, "a view", true},
      {"Shape",
       "tensor",
       {{"start", kInt}, {"end", kInt}},
       InferShape,
       nullptr,
       nullptr,
       "always a constant (static shapes)"},
      {"Size", "tensor", {}, InferSize, nullptr, nullptr, "always a constant"},
      {"Reshape",
       "tensor",
       {{"shape", kInts}, {"allowzero", kInt}},
       InferReshape,
       FoldView,
       LowerView,
       "0 copies a dimension, -1 is inferred; a view",
       true},
      {"Flatten", "tensor", {{"axis", kInt}}, InferFlatten, FoldView, LowerView, "a view", true},
      {"Squeeze",
       "tensor",
       {{"axes", kInts}},
       InferSqueeze,
       FoldView,
       LowerView,
       "axes: attribute before opset 13, input from 13; a view",
       true},
      {"Unsqueeze",
       "tensor",
       {{"axes", kInts}},
       InferUnsqueeze,
       FoldView,
       LowerView,
       "axes: attribute before opset 13, input from 13; a view",
       true},
      {"Transpose", "tensor", {{"perm", kInts}}, InferTranspose, FoldTranspose, LowerTranspose, ""},
      {"DepthToSpace",
       "tensor",
       {{"blocksize", kInt, true}, {"mode", kString}},
       InferSpaceDepth,
       FoldSpaceDepth,
       LowerSpaceDepth,
       "DCR (default) and CRD (PixelShuffle) modes; 4-D"},
      {"SpaceToDepth", "tensor", {{"blocksize", kInt, true}}, InferSpaceDepth, FoldSpaceDepth, LowerSpaceDepth, "4-D"},
      {"Concat",
       "tensor",
       {{"axis", kInt, true}},
       InferConcat,
       FoldConcat,
       LowerConcat,
       "channel concatenation keeps blocked layouts"},
      {"Split",
       "tensor",
       {{"axis", kInt}, {"split", kInts}, {"num_outputs", kInt}},
       InferSplit,
       FoldSplit,
       LowerSplit,
       "split: attribute before 13, input from 13; num_outputs from 18"},
      {"Slice",
       "tensor",
       {{"starts", kInts}, {"ends", kInts}, {"axes", kInts}},
       InferSlice,
       FoldSlice,
       LowerSlice,
       "attributes before opset 10, constant inputs from 10; negative steps"},
      {"Pad",
       "tensor",
       {{"mode", kString}, {"pads", kInts}, {"value", kFloat}},
       InferPad,
       nullptr,
       LowerPad,
       "constant/edge/reflect, wrap from 19; axes input from 18; the fill may be a runtime scalar; no cropping"},
      {"Expand", "tensor", {}, InferExpand, FoldExpand, LowerExpand, "the shape must be a constant", false, 2},
      {"Trilu", "tensor", {{"upper", kInt}}, InferTrilu, nullptr, LowerTrilu, "k must be a constant"},
      {"Tile", "tensor", {}, InferTile, nullptr, LowerTile, "the repeats must be a constant", false, 2},
  };
}

}  // namespace tunefarm::operators
