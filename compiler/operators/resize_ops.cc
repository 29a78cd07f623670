// Resize (opsets 10-19) and Upsample (7-9): nearest, linear and cubic interpolation over any
// axes, with ONNX's coordinate transformation modes (half_pixel, half_pixel_symmetric,
// pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize), its
// nearest rounding modes, cubic_coeff_a, exclude_outside, extrapolation_value, and opset 18's axes
// and keep_aspect_ratio_policy. antialias=1 is refused by name.
//
// Shapes are static, so every resized axis gets a table at compile time: for each output position,
// the input positions it reads (edge-clamped, as ONNX's reference pads with edge values) and their
// weights, computed in double precision. The kernel sums the weight products over the taps of each
// resized axis (1 for nearest, 2 linear, 4 cubic) and reads the input through the tables: the same
// kernel on CPU and GPU, and no coordinate arithmetic per element.
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "compiler/ir/ir_operators.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/registry.h"
#include "compiler/te/tensor.h"

namespace tunefarm::operators {
namespace {

using graph::DataType;
using graph::Node;

enum class Interp { kNearest, kLinear, kCubic };

struct ResizeSpec {
  Interp mode = Interp::kNearest;
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";  // "simple": before opset 11 and Upsample
  double cubic_a = -0.75;
  bool exclude_outside = false;
  float extrapolation = 0;
  std::vector<double> scales;  // per axis of X (1 for axes not resized)
  std::vector<int64_t> out_shape;
  std::vector<double> roi_start, roi_end;  // per axis (tf_crop_and_resize)
};

// The float values of a constant input; nullopt when the input is absent or empty (ONNX's way of
// leaving scales out when sizes are given).
Result<std::optional<std::vector<double>>> OptionalConstDoubles(const NodeView& v, size_t i, const char* role) {
  if (!v.HasInput(i)) return std::optional<std::vector<double>>();
  const graph::Value& in = v.In(i);
  if (!in.constant) return v.Fail(std::string("input '") + role + "' (" + in.name + ") must be a constant");
  if (in.constant->num_elements() == 0) return std::optional<std::vector<double>>();
  if (in.constant->dtype != DataType::kFloat32) return v.Fail(std::string("input '") + role + "' must be float32");
  return std::optional<std::vector<double>>(std::vector<double>(in.constant->f32.begin(), in.constant->f32.end()));
}

Result<ResizeSpec> ParseResize(const NodeView& v) {
  const Node& n = v.node();
  const bool upsample = n.op_type == "Upsample";
  const bool legacy = upsample || v.opset() < 11;
  ResizeSpec s;
  const std::string mode = n.GetString("mode", "nearest");
  if (mode == "nearest") {
    s.mode = Interp::kNearest;
  } else if (mode == "linear" || mode == "bilinear") {
    s.mode = Interp::kLinear;
  } else if (mode == "cubic" && !upsample) {
    s.mode = Interp::kCubic;
  } else {
    return v.Fail("mode '" + mode + "' is not one of nearest, linear" + (upsample ? "" : ", cubic"));
  }
  // Before opset 11 (and Upsample) coordinates are asymmetric and nearest is ONNX Runtime's
  // "simple" rounding; the attributes below came with opset 11.
  s.coord = legacy ? "asymmetric" : n.GetString("coordinate_transformation_mode", "half_pixel");
  static const std::set<std::string> kCoord = {"half_pixel",        "half_pixel_symmetric", "pytorch_half_pixel",
                                               "align_corners",     "asymmetric",           "tf_half_pixel_for_nn",
                                               "tf_crop_and_resize"};
  if (!kCoord.count(s.coord)) {
    return v.Fail("coordinate_transformation_mode '" + s.coord +
                  "' is not one of half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, "
                  "tf_half_pixel_for_nn, tf_crop_and_resize");
  }
  s.nearest = legacy ? "simple" : n.GetString("nearest_mode", "round_prefer_floor");
  static const std::set<std::string> kNearestModes = {"simple", "round_prefer_floor", "round_prefer_ceil", "floor",
                                                      "ceil"};
  if (!kNearestModes.count(s.nearest) || (!legacy && s.nearest == "simple")) {
    return v.Fail("nearest_mode '" + s.nearest + "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil");
  }
  s.cubic_a = n.GetFloat("cubic_coeff_a", -0.75f);
  s.exclude_outside = n.GetInt("exclude_outside", 0) != 0;
  s.extrapolation = n.GetFloat("extrapolation_value", 0.0f);
  if (n.GetInt("antialias", 0) != 0) {
    return v.Fail(
        "antialias=1 (an antialiasing filter when downscaling) is not supported; export with antialias=False");
  }
  const std::string policy = n.GetString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return v.Fail("keep_aspect_ratio_policy '" + policy + "' is not one of stretch, not_larger, not_smaller");
  }
  if (s.mode != Interp::kNearest && v.In(0).dtype != DataType::kFloat32) {
    return v.Fail(std::string(s.mode == Interp::kLinear ? "linear" : "cubic") +
                  " interpolation takes float32 tensors, got " + graph::DataTypeName(v.In(0).dtype));
  }

  const std::vector<int64_t>& in = v.Shape(0);
  const size_t rank = in.size();
  std::vector<int64_t> axes;
  if (n.Has("axes")) {
    for (int64_t a : n.GetInts("axes")) {
      TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, v.Axis(a, rank));
      if (std::find(axes.begin(), axes.end(), axis) != axes.end())
        return v.Fail("axes name axis " + std::to_string(axis) + " twice");
      axes.push_back(axis);
    }
  } else {
    for (size_t a = 0; a < rank; ++a) axes.push_back(int64_t(a));
  }

  // Where scales, sizes and roi come from, by opset.
  std::optional<std::vector<double>> scales, roi;
  std::optional<std::vector<int64_t>> sizes;
  if (upsample && n.Has("scales")) {  // opset 7: an attribute
    const auto& attr = n.attrs.at("scales").floats;
    scales = std::vector<double>(attr.begin(), attr.end());
  } else if (upsample || v.opset() < 11) {
    TUNEFARM_ASSIGN_OR_RETURN(scales, OptionalConstDoubles(v, 1, "scales"));
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(roi, OptionalConstDoubles(v, 1, "roi"));
    TUNEFARM_ASSIGN_OR_RETURN(scales, OptionalConstDoubles(v, 2, "scales"));
    TUNEFARM_ASSIGN_OR_RETURN(sizes, v.OptionalConstInts(3, "sizes"));
    if (sizes && sizes->empty()) sizes.reset();
  }
  if (scales.has_value() == sizes.has_value()) return v.Fail("give exactly one of scales and sizes");
  const size_t given = scales ? scales->size() : sizes->size();
  if (given != axes.size()) {
    return v.Fail(std::string(scales ? "scales" : "sizes") + " has " + std::to_string(given) + " values for " +
                  std::to_string(axes.size()) + " axes");
  }

  s.scales.assign(rank, 1.0);
  s.roi_start.assign(rank, 0.0);
  s.roi_end.assign(rank, 1.0);
  if (s.coord == "tf_crop_and_resize") {
    if (!roi || roi->size() != 2 * axes.size()) {
      return v.Fail("tf_crop_and_resize needs a constant roi of " + std::to_string(2 * axes.size()) +
                    " values (starts, then ends)");
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      s.roi_start[size_t(axes[k])] = (*roi)[k];
      s.roi_end[size_t(axes[k])] = (*roi)[axes.size() + k];
    }
  }
  s.out_shape = in;
  if (scales) {
    for (size_t k = 0; k < axes.size(); ++k) {
      const size_t a = size_t(axes[k]);
      const double scale = (*scales)[k];
      if (!(scale > 0) || !std::isfinite(scale))
        return v.Fail("scale " + std::to_string(scale) + " must be positive and finite");
      s.scales[a] = scale;
      const double extent = s.coord == "tf_crop_and_resize" ? s.roi_end[a] - s.roi_start[a] : 1.0;
      s.out_shape[a] = int64_t(std::floor(double(in[a]) * extent * scale));
    }
  } else if (policy == "stretch") {
    for (size_t k = 0; k < axes.size(); ++k) {
      const size_t a = size_t(axes[k]);
      s.out_shape[a] = (*sizes)[k];
      s.scales[a] = double((*sizes)[k]) / double(in[a]);
    }
  } else {  // one scale for every axis, the largest that fits (not_larger) or covers (not_smaller)
    double scale = policy == "not_larger" ? INFINITY : 0;
    for (size_t k = 0; k < axes.size(); ++k) {
      const double r = double((*sizes)[k]) / double(in[size_t(axes[k])]);
      scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
    }
    for (int64_t a : axes) {
      s.out_shape[size_t(a)] = int64_t(std::round(scale * double(in[size_t(a)])));
      s.scales[size_t(a)] = scale;
    }
  }
  for (size_t a = 0; a < rank; ++a) {
    if (s.out_shape[a] <= 0 || s.out_shape[a] > (int64_t(1) << 31)) {
      return v.Fail("output dimension " + std::to_string(a) + " would be " + std::to_string(s.out_shape[a]));
    }
  }
  if (!CheckedElements(s.out_shape)) return v.Fail("the output " + ShapeStr(s.out_shape) + " is too large");
  return s;
}

// The input coordinate an output position maps to (ONNX's coordinate_transformation_mode). The
// resized length in these formulas is scale * in, unrounded, as ONNX's reference has it (with scales
// of 0.6 on 4 pixels, align_corners divides by 1.4, not by the 2 pixels written out).
double Original(const ResizeSpec& s, size_t axis, int64_t x, int64_t out, int64_t in) {
  const double scale = s.scales[axis], xo = double(x);
  const double resized = scale * double(in);
  if (s.coord == "half_pixel") return (xo + 0.5) / scale - 0.5;
  if (s.coord == "half_pixel_symmetric") {
    const double adjustment = double(out) / resized;
    const double center = double(in) / 2;
    return center * (1 - adjustment) + (xo + 0.5) / scale - 0.5;
  }
  if (s.coord == "pytorch_half_pixel") return resized > 1 ? (xo + 0.5) / scale - 0.5 : 0.0;
  if (s.coord == "align_corners") return resized == 1 ? 0.0 : xo * double(in - 1) / (resized - 1);
  if (s.coord == "asymmetric") return xo / scale;
  if (s.coord == "tf_half_pixel_for_nn") return (xo + 0.5) / scale;
  const double a = s.roi_start[axis], b = s.roi_end[axis];  // tf_crop_and_resize
  return out > 1 ? a * double(in - 1) + xo * (b - a) * double(in - 1) / double(out - 1)
                 : 0.5 * (a + b) * double(in - 1);
}

int64_t NearestIndex(const std::string& mode, double x, bool downsampling) {
  const double fl = std::floor(x);
  if (mode == "round_prefer_floor") return int64_t(x == fl + 0.5 ? fl : std::round(x));
  if (mode == "round_prefer_ceil") return int64_t(x == fl + 0.5 ? fl + 1 : std::round(x));
  if (mode == "floor") return int64_t(fl);
  if (mode == "ceil") return int64_t(std::ceil(x));
  return int64_t(downsampling ? std::ceil(x) : fl);  // simple
}

// Cubic convolution weights for the taps at x0-1, x0, x0+1, x0+2 of a point r past x0 (Keys' kernel
// with parameter a, as ONNX's reference).
std::vector<double> CubicWeights(double r, double a) {
  auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };       // |d| <= 1
  auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

struct AxisTable {
  size_t axis = 0;
  int taps = 1;
  std::vector<int32_t> index;  // [out, taps]
  std::vector<float> weight;   // [out, taps]
  std::vector<float> inside;   // [out]: 0 where the coordinate leaves the input (tf_crop_and_resize)
  bool any_outside = false;
};

AxisTable BuildTable(const ResizeSpec& s, size_t axis, int64_t in, int64_t out) {
  AxisTable t;
  t.axis = axis;
  t.taps = s.mode == Interp::kNearest ? 1 : s.mode == Interp::kLinear ? 2 : 4;
  const bool crop = s.coord == "tf_crop_and_resize";
  for (int64_t x = 0; x < out; ++x) {
    const double xo = Original(s, axis, x, out, in);
    const bool outside = crop && (xo < 0 || xo > double(in - 1));
    t.inside.push_back(outside ? 0.0f : 1.0f);
    t.any_outside = t.any_outside || outside;
    auto clamp = [in](int64_t i) { return int32_t(std::min<int64_t>(std::max<int64_t>(i, 0), in - 1)); };
    if (s.mode == Interp::kNearest) {
      t.index.push_back(clamp(NearestIndex(s.nearest, xo, s.scales[axis] < 1.0)));
      t.weight.push_back(1.0f);
      continue;
    }
    const double x0 = std::floor(xo), r = xo - x0;
    std::vector<double> w = s.mode == Interp::kLinear ? std::vector<double>{1 - r, r} : CubicWeights(r, s.cubic_a);
    const int64_t first = int64_t(x0) - (s.mode == Interp::kLinear ? 0 : 1);
    if (s.exclude_outside) {
      double sum = 0;
      for (int k = 0; k < t.taps; ++k) {
        const int64_t i = first + k;
        if (i < 0 || i >= in) w[size_t(k)] = 0;
        sum += w[size_t(k)];
      }
      for (double& wk : w) wk = sum != 0 ? wk / sum : 0;
    }
    for (int k = 0; k < t.taps; ++k) {
      t.index.push_back(clamp(first + k));
      t.weight.push_back(float(w[size_t(k)]));
    }
  }
  return t;
}

// An axis left as it is: same extent, scale 1, and a mode that maps x to x.
bool Identity(const ResizeSpec& s, size_t axis, int64_t in) {
  return s.out_shape[axis] == in && s.scales[axis] == 1.0 && s.coord != "tf_crop_and_resize" &&
         s.coord != "tf_half_pixel_for_nn";
}

Status InferResize(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(ResizeSpec s, ParseResize(cx));
  cx.SetOut(0, cx.In(0).dtype, s.out_shape);
  return Status::OK();
}

Status LowerResize(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(ResizeSpec s, ParseResize(NodeView(cx.graph(), n)));
  const std::vector<int64_t>& in = cx.V(n.inputs[0]).shape;
  std::vector<AxisTable> tables;
  int64_t terms = 1;
  for (size_t a = 0; a < in.size(); ++a) {
    if (Identity(s, a, in[a])) continue;
    tables.push_back(BuildTable(s, a, in[a], s.out_shape[a]));
    terms *= tables.back().taps;
  }
  if (terms > 256)
    return cx.Fail(n, "interpolates " + std::to_string(tables.size()) + " axes at once (over 256 taps per element)");
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
  std::vector<int> inputs = {x};
  bool crop = false;
  for (const AxisTable& t : tables) {
    const int64_t out = s.out_shape[t.axis];
    const std::string base = cx.V(n.outputs[0]).name + ".axis" + std::to_string(t.axis);
    inputs.push_back(
        cx.AddParam(base + ".index", ElementType::kInt32, {out, t.taps}, t.index.data(), t.index.size() * 4));
    inputs.push_back(cx.ParamFloats(base + ".weight", {out, t.taps}, t.weight));
    crop = crop || t.any_outside;
  }
  if (crop) {
    for (const AxisTable& t : tables) {
      inputs.push_back(cx.ParamFloats(cx.V(n.outputs[0]).name + ".axis" + std::to_string(t.axis) + ".inside",
                                      {s.out_shape[t.axis]}, t.inside));
    }
  }
  std::vector<size_t> axes;
  std::vector<int> taps;
  for (const AxisTable& t : tables) {
    axes.push_back(t.axis);
    taps.push_back(t.taps);
  }
  const bool nearest = s.mode == Interp::kNearest;
  const float extrapolation = s.extrapolation;
  const std::vector<int64_t> out_shape = s.out_shape;
  const int t = cx.Emit(
      n.op_type, inputs,
      [axes, taps, nearest, crop, extrapolation, out_shape](const std::vector<ir::Tensor>& ts) {
        const ir::Tensor& data = ts[0];
        return te::Compute(data->name + ".resize", out_shape, [&](const std::vector<ir::Expr>& o) {
          // Every combination of one tap per resized axis: its input index and weight product.
          ir::Expr sum;
          std::vector<int> tap(axes.size(), 0);
          while (true) {
            std::vector<ir::Expr> idx = o;
            ir::Expr w;
            for (size_t k = 0; k < axes.size(); ++k) {
              const ir::Tensor& index = ts[1 + 2 * k];
              const ir::Tensor& weight = ts[2 + 2 * k];
              idx[axes[k]] = ir::cast(ir::Type::Int(64), te::Read(index, {o[axes[k]], ir::Expr(int64_t(tap[k]))}));
              if (!nearest) {
                const ir::Expr wk = te::Read(weight, {o[axes[k]], ir::Expr(int64_t(tap[k]))});
                w = w.defined() ? w * wk : wk;
              }
            }
            const ir::Expr term = nearest || !w.defined() ? te::Read(data, idx) : w * te::Read(data, idx);
            sum = sum.defined() ? sum + term : term;
            size_t k = 0;
            while (k < axes.size() && ++tap[k] == taps[k]) tap[k++] = 0;
            if (k == axes.size()) break;
          }
          if (crop) {
            ir::Expr inside;
            for (size_t k = 0; k < axes.size(); ++k) {
              const ir::Expr in_k = te::Read(ts[1 + 2 * axes.size() + k], {o[axes[k]]}) > ir::Expr(0.5f);
              inside = inside.defined() ? (inside && in_k) : in_k;
            }
            sum = ir::select(inside, sum, ir::Expr(extrapolation));
          }
          return sum;
        });
      },
      cx.OutType(n), cx.V(n.outputs[0]).name);
  cx.Define(n.outputs[0], t, 0);
  return Status::OK();
}

}  // namespace

std::vector<OperatorDef> ResizeOperators() {
  return {
      {"Resize",
       "resize",
       {{"mode", kString},
        {"coordinate_transformation_mode", kString},
        {"nearest_mode", kString},
        {"cubic_coeff_a", kFloat},
        {"exclude_outside", kInt},
        {"extrapolation_value", kFloat},
        {"antialias", kInt},
        {"axes", kInts},
        {"keep_aspect_ratio_policy", kString}},
       InferResize,
       nullptr,
       LowerResize,
       "nearest (every nearest_mode), linear, cubic; every coordinate mode; scales or sizes, constant; axes and "
       "keep_aspect_ratio_policy (18); antialias=1 refused",
       false,
       1},
      {"Upsample",
       "resize",
       {{"mode", kString}, {"scales", kFloats}},
       InferResize,
       nullptr,
       LowerResize,
       "opsets 7-9: nearest or (bi)linear, asymmetric coordinates; constant scales",
       false,
       1},
  };
}

}  // namespace tunefarm::operators
