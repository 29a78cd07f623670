// Element-wise operators: activations and math (unary), broadcasting arithmetic, comparisons and
// logic (binary), Where, Cast. Unary operators and per-channel binary operators keep the blocked
// NCHW[x]c layout of their input, so a chain of them between convolutions costs no conversion.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <type_traits>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/operators/constant_eval.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/registry.h"
#include "tunefarm/runtime/element_convert.h"

namespace tunefarm::operators {
namespace {

using graph::ConstantData;
using graph::DataType;
using graph::Node;
using Fold = Result<std::vector<ConstantData>>;

// --- unary ----------------------------------------------------------------------------------
struct UnaryEntry {
  const char* op;
  compute::UnaryKind kind;
  bool float_only;
};
constexpr UnaryEntry kUnary[] = {
    {"Relu", compute::UnaryKind::kRelu, false},
    {"LeakyRelu", compute::UnaryKind::kLeakyRelu, true},
    {"Sigmoid", compute::UnaryKind::kSigmoid, true},
    {"HardSigmoid", compute::UnaryKind::kHardSigmoid, true},
    {"HardSwish", compute::UnaryKind::kHardSwish, true},
    {"Tanh", compute::UnaryKind::kTanh, true},
    {"Clip", compute::UnaryKind::kClip, false},
    {"Exp", compute::UnaryKind::kExp, true},
    {"Log", compute::UnaryKind::kLog, true},
    {"Sqrt", compute::UnaryKind::kSqrt, true},
    {"Reciprocal", compute::UnaryKind::kReciprocal, true},
    {"Neg", compute::UnaryKind::kNeg, false},
    {"Abs", compute::UnaryKind::kAbs, false},
    {"Floor", compute::UnaryKind::kFloor, true},
    {"Erf", compute::UnaryKind::kErf, true},
    {"Gelu", compute::UnaryKind::kGelu, true},
    {"Not", compute::UnaryKind::kNot, false},
    {"Ceil", compute::UnaryKind::kCeil, true},
    {"Round", compute::UnaryKind::kRound, true},
    {"Sign", compute::UnaryKind::kSign, true},
    {"Softplus", compute::UnaryKind::kSoftplus, true},
    {"Softsign", compute::UnaryKind::kSoftsign, true},
    {"Elu", compute::UnaryKind::kElu, true},
    {"Selu", compute::UnaryKind::kSelu, true},
    {"Celu", compute::UnaryKind::kCelu, true},
    {"ThresholdedRelu", compute::UnaryKind::kThresholdedRelu, true},
    {"Mish", compute::UnaryKind::kMish, true},
    {"Sinh", compute::UnaryKind::kSinh, true},
    {"Cosh", compute::UnaryKind::kCosh, true},
    {"Asinh", compute::UnaryKind::kAsinh, true},
    {"Acosh", compute::UnaryKind::kAcosh, true},
    {"Atanh", compute::UnaryKind::kAtanh, true},
    {"IsNaN", compute::UnaryKind::kIsNaN, true},
    {"IsInf", compute::UnaryKind::kIsInf, true},
    {"Shrink", compute::UnaryKind::kShrink, true},
    {"Sin", compute::UnaryKind::kSin, true},
    {"Cos", compute::UnaryKind::kCos, true},
    {"Tan", compute::UnaryKind::kTan, true},
    {"Asin", compute::UnaryKind::kAsin, true},
    {"Acos", compute::UnaryKind::kAcos, true},
    {"Atan", compute::UnaryKind::kAtan, true},
};

const UnaryEntry& UnaryFor(const std::string& op) {
  return *std::find_if(std::begin(kUnary), std::end(kUnary), [&](const UnaryEntry& e) { return op == e.op; });
}

Result<compute::UnaryParams> ParseUnary(const NodeView& v) {
  const Node& n = v.node();
  compute::UnaryParams p;
  p.kind = UnaryFor(n.op_type).kind;
  if (n.op_type == "LeakyRelu") p.alpha = n.GetFloat("alpha", 0.01f);
  if (n.op_type == "Elu" || n.op_type == "Celu" || n.op_type == "ThresholdedRelu") p.alpha = n.GetFloat("alpha", 1.0f);
  if (n.op_type == "Celu" && p.alpha == 0.0f) return v.Fail("alpha must not be 0 (Celu divides by it)");
  if (n.op_type == "Selu") {  // ONNX's defaults, to float32's precision
    p.alpha = n.GetFloat("alpha", 1.67326319217681884765625f);
    p.beta = n.GetFloat("gamma", 1.05070102214813232421875f);
  }
  if (n.op_type == "IsInf") {
    p.alpha = float(n.GetInt("detect_negative", 1) != 0);
    p.beta = float(n.GetInt("detect_positive", 1) != 0);
  }
  if (n.op_type == "Shrink") {
    p.alpha = n.GetFloat("lambd", 0.5f);
    p.beta = n.GetFloat("bias", 0.0f);
  }
  if (n.op_type == "HardSigmoid") {
    p.alpha = n.GetFloat("alpha", 0.2f);
    p.beta = n.GetFloat("beta", 0.5f);
  }
  if (n.op_type == "Gelu") {
    const std::string approx = n.GetString("approximate", "none");
    if (approx != "none" && approx != "tanh")
      return v.Fail("approximate must be 'none' or 'tanh', got '" + approx + "'");
    if (approx == "tanh") p.kind = compute::UnaryKind::kGeluTanh;
  }
  if (n.op_type == "Clip") {
    p.lo = n.GetFloat("min", p.lo);
    p.hi = n.GetFloat("max", p.hi);
    for (size_t i = 1; i < 3; ++i) {
      if (!v.HasInput(i) || !v.In(i).constant) continue;  // a runtime bound is read by the kernel
      TUNEFARM_ASSIGN_OR_RETURN(auto bound, v.OptionalConstScalar(i, i == 1 ? "min" : "max"));
      (i == 1 ? p.lo : p.hi) = *bound;
    }
  }
  return p;
}

Status InferUnary(InferContext& cx) {
  const UnaryEntry& e = UnaryFor(cx.node().op_type);
  if (e.float_only && cx.In(0).dtype != DataType::kFloat32) {
    return cx.Fail(std::string(e.op) + " takes float32 tensors, got " + graph::DataTypeName(cx.In(0).dtype));
  }
  if (e.kind == compute::UnaryKind::kNot && cx.In(0).dtype != DataType::kBool) return cx.Fail("Not takes bool tensors");
  for (size_t i = 1; i < cx.num_inputs(); ++i) {
    if (cx.HasInput(i) && Product(cx.Shape(i)) != 1) return cx.Fail("Clip bounds must be scalars");
  }
  TUNEFARM_RETURN_IF_ERROR(ParseUnary(cx).status());
  const bool predicate = e.kind == compute::UnaryKind::kIsNaN || e.kind == compute::UnaryKind::kIsInf;
  cx.SetOut(0, predicate ? DataType::kBool : cx.In(0).dtype, cx.Shape(0));
  return Status::OK();
}

// Only what is exact in float (or integer) arithmetic folds; transcendental functions run in the
// kernel, whose approximations may differ from libm in the last bit.
Fold FoldUnary(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(compute::UnaryParams p, ParseUnary(cx));
  const DataType dt = cx.In(0).dtype;
  std::function<double(double)> f;
  switch (p.kind) {
    case compute::UnaryKind::kRelu:
      f = [](double x) { return x > 0 ? x : 0.0; };
      break;
    case compute::UnaryKind::kNeg:
      f = [](double x) { return -x; };
      break;
    case compute::UnaryKind::kAbs:
      f = [](double x) { return std::fabs(x); };
      break;
    case compute::UnaryKind::kFloor:
      f = [](double x) { return std::floor(x); };
      break;
    case compute::UnaryKind::kCeil:
      f = [](double x) { return std::ceil(x); };
      break;
    case compute::UnaryKind::kRound:
      f = [](double x) { return std::nearbyint(x); };
      break;  // half to even
    case compute::UnaryKind::kSign:
      f = [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; };
      break;
    case compute::UnaryKind::kThresholdedRelu:
      f = [p](double x) { return x > double(p.alpha) ? x : 0.0; };
      break;
    case compute::UnaryKind::kSqrt:
      f = [](double x) { return double(std::sqrt(float(x))); };
      break;
    case compute::UnaryKind::kReciprocal:
      f = [](double x) { return double(1.0f / float(x)); };
      break;
    case compute::UnaryKind::kNot:
      f = [](double x) { return x == 0 ? 1.0 : 0.0; };
      break;
    case compute::UnaryKind::kClip:
      f = [p](double x) { return std::min(double(p.hi), std::max(double(p.lo), x)); };
      break;
    default:
      return Status::Unimplemented("not folded");
  }
  if (dt != DataType::kFloat32) {
    // Integers stay integers (every int64 exact); the kernel's clip bounds are the float bounds
    // clamped to the type's range (compute::ApplyUnary), here to int64's.
    auto bound = [](float v) { return v >= 9.2e18f ? INT64_MAX : v <= -9.2e18f ? INT64_MIN : int64_t(v); };
    const int64_t lo = bound(p.lo), hi = bound(p.hi);
    std::function<int64_t(int64_t)> g;
    switch (p.kind) {
      case compute::UnaryKind::kRelu:
        g = [](int64_t x) { return std::max<int64_t>(x, 0); };
        break;
      case compute::UnaryKind::kNeg:
        g = [](int64_t x) { return int64_t(0 - uint64_t(x)); };
        break;
      case compute::UnaryKind::kAbs:
        g = [](int64_t x) { return x < 0 ? int64_t(0 - uint64_t(x)) : x; };
        break;
      case compute::UnaryKind::kNot:
        g = [](int64_t x) { return int64_t(x == 0); };
        break;
      case compute::UnaryKind::kClip:
        g = [lo, hi](int64_t x) { return std::min(hi, std::max(lo, x)); };
        break;
      default:
        return Status::Unimplemented("not folded");
    }
    return std::vector<ConstantData>{
        MapBroadcastInt(dt, cx.Out(0).shape, {&cx.Const(0)}, [&](const std::vector<int64_t>& v) { return g(v[0]); })};
  }
  return std::vector<ConstantData>{
      MapBroadcast(dt, cx.Out(0).shape, {&cx.Const(0)}, [&](const std::vector<double>& v) { return f(v[0]); })};
}

Status LowerUnary(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(compute::UnaryParams p, ParseUnary(NodeView(cx.graph(), n)));
  std::vector<size_t> runtime_bounds;  // Clip bounds computed at run time: read from their tensors
  for (size_t i = 1; i < n.inputs.size() && i < 3; ++i) {
    if (n.inputs[i] >= 0 && !cx.V(n.inputs[i]).constant) runtime_bounds.push_back(i);
  }
  if (!runtime_bounds.empty()) {
    std::vector<size_t> inputs = {0};
    inputs.insert(inputs.end(), runtime_bounds.begin(), runtime_bounds.end());
    return cx.EmitPlain(n, inputs, [p, runtime_bounds](const std::vector<ir::Tensor>& ts) {
      return te::Compute(ts[0]->name + ".clip", ts[0]->shape, [&](const std::vector<ir::Expr>& i) {
        ir::Expr v = compute::ApplyUnary(te::Read(ts[0], i), p);
        for (size_t b = 0; b < runtime_bounds.size(); ++b) {
          const ir::Expr bound = compute::ReadScalar(ts[1 + b]);
          v = runtime_bounds[b] == 1 ? ir::max(v, bound) : ir::min(v, bound);  // NOLINT
        }
        return v;
      });
    });
  }
  const int in = n.inputs[0];
  const int64_t block = cx.Preferred(in);
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(in, block));
  const int t = cx.Emit(
      n.op_type, {x}, [p](const std::vector<ir::Tensor>& i) { return compute::Unary(i[0], p); }, cx.OutType(n),
      cx.V(n.outputs[0]).name);
  cx.Define(n.outputs[0], t, block);
  return Status::OK();
}

// --- binary ---------------------------------------------------------------------------------
struct BinaryEntry {
  const char* op;
  compute::BinaryKind kind;
  bool to_bool;           // comparisons and logic produce bool
  bool bool_input;        // And, Or, Xor
  bool variadic = false;  // one or more inputs, folded left to right (Max, Min, Sum, Mean)
};
constexpr BinaryEntry kBinary[] = {
    {"Add", compute::BinaryKind::kAdd, false, false},
    {"Sub", compute::BinaryKind::kSub, false, false},
    {"Mul", compute::BinaryKind::kMul, false, false},
    {"Div", compute::BinaryKind::kDiv, false, false},
    {"Pow", compute::BinaryKind::kPow, false, false},
    {"Max", compute::BinaryKind::kMax, false, false, true},
    {"Min", compute::BinaryKind::kMin, false, false, true},
    {"Equal", compute::BinaryKind::kEqual, true, false},
    {"Sum", compute::BinaryKind::kAdd, false, false, true},
    {"Mean", compute::BinaryKind::kAdd, false, false, true},
    {"Xor", compute::BinaryKind::kXor, true, true},
    {"Less", compute::BinaryKind::kLess, true, false},
    {"Greater", compute::BinaryKind::kGreater, true, false},
    {"And", compute::BinaryKind::kAnd, true, true},
    {"Or", compute::BinaryKind::kOr, true, true},
    {"Mod", compute::BinaryKind::kMod, false, false},
    {"GreaterOrEqual", compute::BinaryKind::kGreaterOrEqual, true, false},
    {"LessOrEqual", compute::BinaryKind::kLessOrEqual, true, false},
    {"PRelu", compute::BinaryKind::kPRelu, false, false},
    {"BitShift", compute::BinaryKind::kShiftLeft, false, false},  // kShiftRight by `direction`
};

const BinaryEntry& BinaryFor(const std::string& op) {
  return *std::find_if(std::begin(kBinary), std::end(kBinary), [&](const BinaryEntry& e) { return op == e.op; });
}

// PRelu's slope as it broadcasts: before opset 7 a 1-D slope of X's channel count applies per
// channel (axis 1), which numpy's trailing alignment reads as [C, 1, ...].
std::vector<int64_t> PReluSlopeShape(const NodeView& v) {
  const auto& x = v.Shape(0);
  const auto& slope = v.Shape(1);
  if (v.opset() > 0 && v.opset() < 7 && slope.size() == 1 && x.size() > 2 && slope[0] == x[1] && slope[0] != 1) {
    std::vector<int64_t> shape(x.size() - 1, 1);
    shape[0] = slope[0];
    return shape;
  }
  return slope;
}

// Mod's fmod attribute picks the sign convention, BitShift's direction the shift.
compute::BinaryKind BinaryKindOf(const Node& n) {
  const compute::BinaryKind kind = BinaryFor(n.op_type).kind;
  if (kind == compute::BinaryKind::kShiftLeft && n.GetString("direction", "") == "RIGHT")
    return compute::BinaryKind::kShiftRight;
  return kind == compute::BinaryKind::kMod && n.GetInt("fmod", 0) != 0 ? compute::BinaryKind::kFmod : kind;
}

Status InferBinary(InferContext& cx) {
  const BinaryEntry& e = BinaryFor(cx.node().op_type);
  if (e.variadic) {  // Max, Min, Sum and Mean take one or more inputs
    std::vector<int64_t> shape = cx.Shape(0);
    for (size_t i = 1; i < cx.num_inputs(); ++i) {
      if (!cx.HasInput(i) || cx.In(i).dtype != cx.In(0).dtype) return cx.Fail("inputs must be present and of one type");
      auto s = BroadcastShapes(shape, cx.Shape(i));
      if (!s.ok()) return cx.Fail(s.status().message());
      shape = *s;
    }
    if (cx.node().op_type == "Mean" && cx.In(0).dtype != DataType::kFloat32)
      return cx.Fail("Mean takes float32 tensors");
    cx.SetOut(0, cx.In(0).dtype, shape);
    return Status::OK();
  }
  if (cx.num_inputs() != 2 || !cx.HasInput(1)) return cx.Fail("takes exactly two inputs");
  if (e.bool_input && cx.In(0).dtype != DataType::kBool) {
    return cx.Fail(std::string(e.op) + " takes bool tensors, got " + graph::DataTypeName(cx.In(0).dtype));
  }
  // Pow's exponent may have another type (integer exponents of float bases).
  if (e.kind != compute::BinaryKind::kPow && cx.In(0).dtype != cx.In(1).dtype) {
    return cx.Fail(std::string("operands have different types: ") + graph::DataTypeName(cx.In(0).dtype) + " and " +
                   graph::DataTypeName(cx.In(1).dtype));
  }
  if (e.kind == compute::BinaryKind::kPow && cx.In(0).dtype != DataType::kFloat32)
    return cx.Fail("Pow takes a float32 base");
  if (e.kind == compute::BinaryKind::kShiftLeft) {
    const std::string direction = cx.node().GetString("direction", "");
    if (direction != "LEFT" && direction != "RIGHT")
      return cx.Fail("direction '" + direction + "' is not LEFT or RIGHT");
    if (cx.In(0).dtype == DataType::kFloat32 || cx.In(0).dtype == DataType::kBool) {
      return cx.Fail(std::string("BitShift takes unsigned integers, got ") + graph::DataTypeName(cx.In(0).dtype));
    }
  }
  // Before opset 7, broadcast=1 with an axis aligns B at that axis of A; numpy's rule (trailing
  // alignment) is the same only when the axis is rank(A) - rank(B).
  const Node& n = cx.node();
  if (n.GetInt("broadcast", 0) != 0 && n.Has("axis") &&
      n.GetInt("axis", 0) != int64_t(cx.Shape(0).size()) - int64_t(cx.Shape(1).size())) {
    return cx.Fail("legacy broadcast of B at axis " + std::to_string(n.GetInt("axis", 0)) +
                   " is not supported (only trailing alignment, axis = rank(A) - rank(B))");
  }
  const bool prelu = e.kind == compute::BinaryKind::kPRelu;
  auto s = BroadcastShapes(cx.Shape(0), prelu ? PReluSlopeShape(cx) : cx.Shape(1));
  // PRelu's slope broadcasts to X one way: the result has X's shape.
  if (prelu && (!s.ok() || *s != cx.Shape(0))) {
    return cx.Fail("the slope of shape " + ShapeStr(cx.Shape(1)) + " does not broadcast to X's shape " +
                   ShapeStr(cx.Shape(0)));
  }
  if (!s.ok()) return cx.Fail(s.status().message());
  cx.SetOut(0, e.to_bool ? DataType::kBool : cx.In(0).dtype, *s);
  return Status::OK();
}

// One binary operation on two constant elements, as the kernel computes it: T = int64_t for every
// integer type (wrapping arithmetic, then MapBroadcastInt wraps to the output's width), T = float
// for float32 (computed in float). One switch for both, so an operation is added once.
template <typename T>
T FoldedBinary(compute::BinaryKind kind, T a, T b, DataType out_t) {
  constexpr bool kInteger = std::is_integral_v<T>;
  // Integer add, sub and mul wrap (through uint64) instead of overflowing.
  auto wrapping = [](uint64_t r) { return T(int64_t(r)); };
  switch (kind) {
    case compute::BinaryKind::kAdd:
      if constexpr (kInteger) {
        return wrapping(uint64_t(a) + uint64_t(b));
      } else {
        return a + b;
      }
    case compute::BinaryKind::kSub:
      if constexpr (kInteger) {
        return wrapping(uint64_t(a) - uint64_t(b));
      } else {
        return a - b;
      }
    case compute::BinaryKind::kMul:
      if constexpr (kInteger) {
        return wrapping(uint64_t(a) * uint64_t(b));
      } else {
        return a * b;
      }
    case compute::BinaryKind::kDiv:
      if constexpr (kInteger) {
        return (a == INT64_MIN && b == -1) ? a : a / b;  // truncates, as the kernel
      } else {
        return a / b;
      }
    case compute::BinaryKind::kMax:
      return std::max(a, b);
    case compute::BinaryKind::kMin:
      return std::min(a, b);
    case compute::BinaryKind::kEqual:
      return a == b;
    case compute::BinaryKind::kLess:
      return a < b;
    case compute::BinaryKind::kGreater:
      return a > b;
    case compute::BinaryKind::kGreaterOrEqual:
      return a >= b;
    case compute::BinaryKind::kLessOrEqual:
      return a <= b;
    case compute::BinaryKind::kPRelu:
      if constexpr (kInteger) {
        return a < 0 ? wrapping(uint64_t(a) * uint64_t(b)) : a;
      } else {
        return a < 0 ? a * b : a;
      }
    case compute::BinaryKind::kAnd:
      return a != 0 && b != 0;
    case compute::BinaryKind::kOr:
      return a != 0 || b != 0;
    case compute::BinaryKind::kXor:
      return (a != 0) != (b != 0);
    case compute::BinaryKind::kMod:  // the sign of the divisor (Python's %)
      if constexpr (kInteger) {
        const int64_t m = (b == -1) ? 0 : a % b;
        return m != 0 && ((m < 0) != (b < 0)) ? m + b : m;
      } else {
        return a - b * std::floor(a / b);
      }
    case compute::BinaryKind::kFmod:  // the sign of the dividend (C's fmod)
      if constexpr (kInteger) {
        return (b == -1) ? 0 : a % b;
      } else {
        return std::fmod(a, b);
      }
    case compute::BinaryKind::kShiftLeft:
    case compute::BinaryKind::kShiftRight:
      if constexpr (kInteger) {
        // As the kernel: in the storage type's width (uint8, or int64 for the wider unsigned).
        const int bits = out_t == DataType::kUInt8 ? 8 : 64;
        if (b < 0 || b >= bits) return 0;
        const uint64_t mask = bits == 8 ? 0xffu : ~uint64_t(0);
        return int64_t(kind == compute::BinaryKind::kShiftLeft ? (uint64_t(a) << b) & mask : (uint64_t(a) & mask) >> b);
      }
      break;                         // integers only (InferBinary)
    case compute::BinaryKind::kPow:  // not folded
      break;
  }
  return 0;
}

Fold FoldBinary(InferContext& cx) {
  const BinaryEntry& e = BinaryFor(cx.node().op_type);
  const compute::BinaryKind kind = BinaryKindOf(cx.node());
  if (cx.num_inputs() != 2 || (e.variadic && cx.node().op_type != "Max" && cx.node().op_type != "Min")) {
    return Status::Unimplemented("not folded");  // Sum and Mean of constants run once, in the kernel
  }
  if (kind == compute::BinaryKind::kPRelu && PReluSlopeShape(cx) != cx.Shape(1))
    return Status::Unimplemented("not folded");
  const DataType in_t = cx.In(0).dtype, out_t = cx.Out(0).dtype;
  const std::vector<const ConstantData*> inputs = {&cx.Const(0), &cx.Const(1)};
  if (in_t != DataType::kFloat32) {
    if (e.kind == compute::BinaryKind::kPow) return Status::Unimplemented("not folded");
    for (int64_t d : cx.Const(1).i64) {
      if (d == 0 && (e.kind == compute::BinaryKind::kDiv || e.kind == compute::BinaryKind::kMod))
        return cx.Fail("integer division by zero");
    }
    return std::vector<ConstantData>{MapBroadcastInt(
        out_t, cx.Out(0).shape, inputs,
        [&](const std::vector<int64_t>& v) -> int64_t { return FoldedBinary<int64_t>(kind, v[0], v[1], out_t); })};
  }
  if (e.kind == compute::BinaryKind::kPow) return Status::Unimplemented("not folded");
  return std::vector<ConstantData>{
      MapBroadcast(out_t, cx.Out(0).shape, inputs, [&](const std::vector<double>& v) -> double {
        return FoldedBinary<float>(kind, float(v[0]), float(v[1]), out_t);
      })};
}

// Blocked when one operand lives blocked and the other either has its shape or is a float
// constant that broadcasts per channel (packed to the blocked shape at compile time).
Status LowerBinary(LowerApi& cx, const Node& n) {
  const compute::BinaryKind kind = BinaryKindOf(n);
  if (kind == compute::BinaryKind::kPRelu) {  // a legacy per-channel slope: viewed as [C, 1, ...]
    const std::vector<int64_t> slope_shape = PReluSlopeShape(NodeView(cx.graph(), n));
    if (slope_shape != cx.V(n.inputs[1]).shape) {
      TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
      TUNEFARM_ASSIGN_OR_RETURN(int slope, cx.Get(n.inputs[1], 0));
      slope = cx.View(slope, slope_shape, cx.V(n.inputs[1]).name + ".per_channel");
      cx.Define(n.outputs[0],
                cx.Emit(
                    n.op_type, {x, slope},
                    [kind](const std::vector<ir::Tensor>& i) { return compute::Binary(i[0], i[1], kind); },
                    cx.OutType(n), cx.V(n.outputs[0]).name),
                0);
      return Status::OK();
    }
  }
  // Pow by a scalar constant: exact multiplications for small integral exponents (LayerNorm's
  // square as older exporters write it), and the input's blocked layout kept.
  if (kind == compute::BinaryKind::kPow && cx.V(n.inputs[1]).constant &&
      cx.V(n.inputs[1]).constant->num_elements() == 1 && cx.V(n.outputs[0]).shape == cx.V(n.inputs[0]).shape) {
    compute::UnaryParams p;
    p.kind = compute::UnaryKind::kPowScalar;
    p.alpha = float(ElementAt(*cx.V(n.inputs[1]).constant, 0));
    const int64_t block = cx.Preferred(n.inputs[0]);
    TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], block));
    cx.Define(n.outputs[0],
              cx.Emit(
                  n.op_type, {x}, [p](const std::vector<ir::Tensor>& i) { return compute::Unary(i[0], p); },
                  cx.OutType(n), cx.V(n.outputs[0]).name),
              block);
    return Status::OK();
  }
  if (n.inputs.size() != 2 || n.op_type == "Mean") {  // variadic: one kernel over all inputs
    std::vector<size_t> inputs;
    for (size_t i = 0; i < n.inputs.size(); ++i) inputs.push_back(i);
    const auto shape = cx.V(n.outputs[0]).shape;
    const bool mean = n.op_type == "Mean";
    return cx.EmitPlain(n, inputs, [kind, shape, mean](const std::vector<ir::Tensor>& ts) {
      ir::Tensor acc = compute::Expand(ts[0], shape);
      for (size_t i = 1; i < ts.size(); ++i) acc = compute::Binary(acc, ts[i], kind);
      if (!mean) return acc;
      const float count = float(ts.size());
      return te::Compute(acc->name + ".mean", acc->shape,
                         [&](const std::vector<ir::Expr>& i) { return te::Read(acc, i) / ir::Expr(count); });
    });
  }
  const int a = n.inputs[0], b = n.inputs[1];
  const auto& out_shape = cx.V(n.outputs[0]).shape;
  int64_t block = 0;
  int ta = -1, tb = -1;
  for (int primary : {a, b}) {
    const int other = primary == a ? b : a;
    const int64_t k = cx.V(primary).constant ? 0 : cx.Preferred(primary);
    if (k == 0 || block != 0 || cx.V(primary).shape != out_shape) continue;
    const graph::Value& ov = cx.V(other);
    int t_other = -1;
    if (!ov.constant && ov.shape == out_shape) {
      TUNEFARM_ASSIGN_OR_RETURN(t_other, cx.Get(other, k));
    } else if (ov.constant && ov.constant->dtype == DataType::kFloat32 && ov.shape.size() <= 4) {
      // Right-aligned against N C H W: only the channel axis may exceed 1.
      bool per_channel = true;
      for (size_t i = 0; i < ov.shape.size(); ++i) {
        const size_t axis = 4 - ov.shape.size() + i;
        per_channel = per_channel && (ov.shape[i] == 1 || (axis == 1 && ov.shape[i] == out_shape[1]));
      }
      if (!per_channel) continue;
      const int64_t channels = out_shape[1];
      std::vector<float> packed(static_cast<size_t>(channels));
      for (int64_t c = 0; c < channels; ++c)
        packed[size_t(c)] = ov.constant->f32[ov.constant->f32.size() == 1 ? 0 : size_t(c)];
      t_other = cx.ParamFloats(ov.name + ".nchw" + std::to_string(k) + "c", {1, channels / k, 1, 1, k}, packed);
    } else {
      continue;
    }
    TUNEFARM_ASSIGN_OR_RETURN(int t_primary, cx.Get(primary, k));
    block = k;
    ta = primary == a ? t_primary : t_other;
    tb = primary == a ? t_other : t_primary;
  }
  if (block == 0) {
    TUNEFARM_ASSIGN_OR_RETURN(ta, cx.Get(a, 0));
    TUNEFARM_ASSIGN_OR_RETURN(tb, cx.Get(b, 0));
  }
  const int t = cx.Emit(
      n.op_type, {ta, tb}, [kind](const std::vector<ir::Tensor>& i) { return compute::Binary(i[0], i[1], kind); },
      cx.OutType(n), cx.V(n.outputs[0]).name);
  cx.Define(n.outputs[0], t, block);
  return Status::OK();
}

// --- Where, Cast ----------------------------------------------------------------------------
Status InferWhere(InferContext& cx) {
  if (cx.num_inputs() != 3 || !cx.HasInput(1) || !cx.HasInput(2))
    return cx.Fail("takes three inputs (condition, X, Y)");
  if (cx.In(0).dtype != DataType::kBool)
    return cx.Fail(std::string("the condition must be bool, got ") + graph::DataTypeName(cx.In(0).dtype));
  if (cx.In(1).dtype != cx.In(2).dtype) return cx.Fail("X and Y have different types");
  auto s = BroadcastShapes(cx.Shape(0), cx.Shape(1));
  if (s.ok()) s = BroadcastShapes(*s, cx.Shape(2));
  if (!s.ok()) return cx.Fail(s.status().message());
  cx.SetOut(0, cx.In(1).dtype, *s);
  return Status::OK();
}

Fold FoldWhere(InferContext& cx) {
  const std::vector<const ConstantData*> in = {&cx.Const(0), &cx.Const(1), &cx.Const(2)};
  if (cx.Out(0).dtype != DataType::kFloat32) {
    return std::vector<ConstantData>{MapBroadcastInt(cx.Out(0).dtype, cx.Out(0).shape, in,
                                                     [](const std::vector<int64_t>& v) { return v[0] ? v[1] : v[2]; })};
  }
  // The condition is bool (i64 storage), the values float.
  ConstantData cond_as_float = *in[0];
  cond_as_float.f32.assign(cond_as_float.i64.begin(), cond_as_float.i64.end());
  cond_as_float.dtype = DataType::kFloat32;
  return std::vector<ConstantData>{MapBroadcast(DataType::kFloat32, cx.Out(0).shape, {&cond_as_float, in[1], in[2]},
                                                [](const std::vector<double>& v) { return v[0] != 0 ? v[1] : v[2]; })};
}

Status LowerWhere(LowerApi& cx, const Node& n) {
  return cx.EmitPlain(n, {0, 1, 2}, [](const std::vector<ir::Tensor>& i) { return compute::Where(i[0], i[1], i[2]); });
}

// Cast's target as computed: a type kernels do not compute on is its storage type (float16 ->
// float32, uint32 -> int64); the graph output it reaches converts to the type itself.
Result<DataType> CastTarget(const NodeView& v) {
  if (!v.node().Has("to")) return v.Fail("missing required attribute 'to'");
  const int64_t to = v.node().GetInt("to", 0);
  if (auto t = graph::OnnxElementType(to)) return graph::StorageDataType(*t);
  return v.Fail("cast to element type " + std::to_string(to) + " is not supported (" + graph::SupportedElementTypes() +
                ")");
}

Status InferCast(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(DataType to, CastTarget(cx));
  cx.SetOut(0, to, cx.Shape(0));
  return Status::OK();
}

// CastLike (opset 15): Cast to the type of input 1, whose values are not read.
Status InferCastLike(InferContext& cx) {
  cx.SetOut(0, cx.In(1).dtype, cx.Shape(0));
  return Status::OK();
}

// Cast to int16, uint16 or uint32 computes in int64 and wraps to the type's range there, so a
// later cast back reads what ONNX does (uint32(-1) = 4294967295); nullopt for other targets.
struct NarrowInteger {
  int bits;
  bool is_signed;
};
std::optional<NarrowInteger> NarrowTarget(const Node& n) {
  if (n.op_type != "Cast") return std::nullopt;
  const auto t = graph::OnnxElementType(n.GetInt("to", 0));
  if (t == runtime::ElementType::kInt16) return NarrowInteger{16, true};
  if (t == runtime::ElementType::kUInt16) return NarrowInteger{16, false};
  if (t == runtime::ElementType::kUInt32) return NarrowInteger{32, false};
  return std::nullopt;
}

int64_t Wrap(int64_t v, NarrowInteger w) {
  const int64_t range = int64_t(1) << w.bits, half = w.is_signed ? range / 2 : 0;
  const int64_t m = (v + half) % range;
  return (m < 0 ? m + range : m) - half;
}

ir::Expr WrapExpr(const ir::Expr& v, NarrowInteger w) {  // the IR's integer % is a floor modulo
  const int64_t range = int64_t(1) << w.bits, half = w.is_signed ? range / 2 : 0;
  return (v + ir::Expr(half)) % ir::Expr(range) - ir::Expr(half);
}

// Cast to float16 or bfloat16 computes in float32 and rounds there to the type's precision and
// range, so a graph computing in float16 rounds where it casts (its float16 Conv and MatMul
// themselves compute in float32: more precise than ONNX Runtime's float16 kernels, never less).
std::optional<compute::NarrowFloat> NarrowFloatTarget(const Node& n) {
  if (n.op_type != "Cast") return std::nullopt;
  const auto t = graph::OnnxElementType(n.GetInt("to", 0));
  if (t == runtime::ElementType::kFloat16) return compute::NarrowFloat::kFloat16;
  if (t == runtime::ElementType::kBFloat16) return compute::NarrowFloat::kBFloat16;
  return std::nullopt;
}

Fold FoldCast(InferContext& cx) {
  const DataType to = cx.Out(0).dtype;
  if (const auto narrow = NarrowFloatTarget(cx.node())) {
    const bool half = *narrow == compute::NarrowFloat::kFloat16;
    auto round = [half](const std::vector<double>& v) {
      const float f = float(v[0]);
      return double(half ? runtime::HalfToFloat(runtime::FloatToHalf(f))
                         : runtime::BFloat16ToFloat(runtime::FloatToBFloat16(f)));
    };
    return std::vector<ConstantData>{MapBroadcast(to, cx.Out(0).shape, {&cx.Const(0)}, round)};
  }
  if (const auto narrow = NarrowTarget(cx.node())) {
    ConstantData wide =
        cx.In(0).dtype == DataType::kFloat32
            ? MapBroadcast(to, cx.Out(0).shape, {&cx.Const(0)}, [](const std::vector<double>& v) { return v[0]; })
            : MapBroadcastInt(to, cx.Out(0).shape, {&cx.Const(0)}, [](const std::vector<int64_t>& v) { return v[0]; });
    for (int64_t& v : wide.i64) v = Wrap(v, *narrow);
    return std::vector<ConstantData>{std::move(wide)};
  }
  if (to == DataType::kFloat32 || cx.In(0).dtype == DataType::kFloat32) {
    return std::vector<ConstantData>{
        MapBroadcast(to, cx.Out(0).shape, {&cx.Const(0)}, [](const std::vector<double>& v) { return v[0]; })};
  }
  return std::vector<ConstantData>{
      MapBroadcastInt(to, cx.Out(0).shape, {&cx.Const(0)}, [](const std::vector<int64_t>& v) { return v[0]; })};
}

Status LowerCast(LowerApi& cx, const Node& n) {
  const ElementType to = cx.OutType(n);
  const ir::Type t = ToIRType(to);
  const bool to_bool = to == ElementType::kBool;
  if (const auto narrow = NarrowTarget(n)) {
    const NarrowInteger w = *narrow;
    return cx.EmitPlain(n, {0}, [t, w](const std::vector<ir::Tensor>& i) {
      const ir::Tensor wide = compute::Cast(i[0], t, false);
      return te::Compute(wide->name + ".wrap", wide->shape,
                         [&](const std::vector<ir::Expr>& idx) { return WrapExpr(te::Read(wide, idx), w); });
    });
  }
  if (const auto narrow = NarrowFloatTarget(n)) {
    const compute::NarrowFloat to_type = *narrow;
    return cx.EmitPlain(n, {0}, [to_type](const std::vector<ir::Tensor>& i) {
      return compute::RoundToNarrowFloat(compute::Cast(i[0], ir::Type::Float(32), false), to_type);
    });
  }
  if (cx.V(n.inputs[0]).dtype == cx.V(n.outputs[0]).dtype) {  // a no-op cast is a view
    TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
    cx.Define(n.outputs[0], cx.View(x, cx.V(n.outputs[0]).shape, cx.V(n.outputs[0]).name), 0);
    return Status::OK();
  }
  return cx.EmitPlain(n, {0},
                      [t, to_bool](const std::vector<ir::Tensor>& i) { return compute::Cast(i[0], t, to_bool); });
}

}  // namespace

std::vector<OperatorDef> ElementwiseOperators() {
  std::vector<OperatorDef> ops = {
      {"LeakyRelu", "elementwise", {{"alpha", kFloat}}, InferUnary, FoldUnary, LowerUnary, ""},
      {"HardSigmoid", "elementwise", {{"alpha", kFloat}, {"beta", kFloat}}, InferUnary, FoldUnary, LowerUnary, ""},
      {"Clip",
       "elementwise",
       {{"min", kFloat}, {"max", kFloat}},
       InferUnary,
       FoldUnary,
       LowerUnary,
       "bounds: attributes before opset 11, inputs from 11 (constant or runtime scalars)"},
      {"Gelu",
       "elementwise",
       {{"approximate", kString}},
       InferUnary,
       FoldUnary,
       LowerUnary,
       "opset 20; erf or tanh form"},
      {"Elu", "elementwise", {{"alpha", kFloat}}, InferUnary, FoldUnary, LowerUnary, "float32"},
      {"Celu", "elementwise", {{"alpha", kFloat}}, InferUnary, FoldUnary, LowerUnary, "float32; alpha not 0"},
      {"Selu", "elementwise", {{"alpha", kFloat}, {"gamma", kFloat}}, InferUnary, FoldUnary, LowerUnary, "float32"},
      {"ThresholdedRelu", "elementwise", {{"alpha", kFloat}}, InferUnary, FoldUnary, LowerUnary, "float32"},
      {"IsInf",
       "elementwise",
       {{"detect_negative", kInt}, {"detect_positive", kInt}},
       InferUnary,
       FoldUnary,
       LowerUnary,
       "float32 in, bool out"},
      {"IsNaN", "elementwise", {}, InferUnary, FoldUnary, LowerUnary, "float32 in, bool out"},
      {"Shrink", "elementwise", {{"lambd", kFloat}, {"bias", kFloat}}, InferUnary, FoldUnary, LowerUnary, "float32"},
      {"Where", "elementwise", {}, InferWhere, FoldWhere, LowerWhere, "a bool condition", false, 3},
      {"Cast",
       "elementwise",
       {{"to", kInt, true}, {"saturate", kInt}},
       InferCast,
       FoldCast,
       LowerCast,
       "to any numeric type but float8 (float64, float16, bfloat16 computed in float32, float16 and bfloat16 rounded "
       "to their precision and range; int16 and unsigned in int64, int16/uint16/uint32 wrapped to their range); "
       "saturate (opset 19) only concerns float8"},
      {"CastLike",
       "elementwise",
       {{"saturate", kInt}},
       InferCastLike,
       FoldCast,
       LowerCast,
       "as Cast, to the type of `target_type`",
       false,
       2},
  };
  const size_t with_attributes = ops.size();
  for (const UnaryEntry& e : kUnary) {
    const auto listed = std::find_if(ops.begin(), ops.begin() + std::ptrdiff_t(with_attributes),
                                     [&](const OperatorDef& d) { return std::string(d.name) == e.op; });
    if (listed != ops.begin() + std::ptrdiff_t(with_attributes)) continue;  // listed above with its attributes
    ops.push_back({e.op, "elementwise", {}, InferUnary, FoldUnary, LowerUnary, e.float_only ? "float32" : ""});
  }
  for (const BinaryEntry& e : kBinary) {
    if (e.kind == compute::BinaryKind::kPRelu) {
      ops.push_back({e.op,
                     "elementwise",
                     {},
                     InferBinary,
                     FoldBinary,
                     LowerBinary,
                     "the slope broadcasts to X (per channel: [C, 1, 1])"});
      continue;
    }
    std::vector<AttrSpec> attrs = {{"broadcast", kInt}, {"axis", kInt}};
    if (e.kind == compute::BinaryKind::kShiftLeft) {
      ops.push_back({e.op,
                     "elementwise",
                     {{"direction", kString, true}},
                     InferBinary,
                     FoldBinary,
                     LowerBinary,
                     "unsigned integers (uint16/32/64 computed in int64); LEFT or RIGHT"});
      continue;
    }
    if (e.kind == compute::BinaryKind::kMod) attrs.push_back({"fmod", kInt});
    ops.push_back({e.op, "elementwise", attrs, InferBinary, FoldBinary, LowerBinary,
                   e.kind == compute::BinaryKind::kMod
                       ? "fmod 0: the divisor's sign (integers), 1: C fmod"
                       : "numpy broadcasting (legacy broadcast/axis attributes must describe the same)"});
  }
  return ops;
}

}  // namespace tunefarm::operators
