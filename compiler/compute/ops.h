// The untuned operators of a model as tensor expressions: what TVM's TOPI is to Relay.
//
// Every function returns the compute definition of one operator over its input tensors (usually
// placeholders); ScheduleGeneric (generic_schedule.cc) turns any set of them into loops. The model
// compiler calls these for everything that is not a tunable template (conv2d, dense), and for the
// layout conversions between kernels. Shapes are static; the caller has validated attributes (the
// graph's shape inference did), so a violated precondition here is a bug and fails a check.
//
// Layout-aware operators take `spatial_axes`: the dimensions of the input that are pooled over,
// so one definition serves NCHW ([2, 3]), NCW ([2]), NCDHW ([2, 3, 4]) and NCHW[x]c ([2, 3]).
#ifndef TUNEFARM_COMPILER_COMPUTE_OPS_H_
#define TUNEFARM_COMPILER_COMPUTE_OPS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/te/schedule.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::compute {

using ir::Expr;
using ir::Tensor;

// 0 of type t (a select's other arm, a reduction's padding).
Expr ZeroOf(const ir::Type& t);

// --- element-wise -----------------------------------------------------------------------------
enum class UnaryKind {
  kIdentity,
  kRelu,
  kLeakyRelu,
  kSigmoid,
  kHardSigmoid,
  kHardSwish,
  kTanh,
  kClip,
  kExp,
  kLog,
  kSqrt,
  kReciprocal,
  kNeg,
  kAbs,
  kFloor,
  kErf,
  kGelu,
  kGeluTanh,
  kNot,
  kPowScalar,  // x ** alpha
  kCeil,
  kRound,
  kSign,
  kSoftplus,
  kSoftsign,
  kElu,
  kSelu,
  kCelu,
  kThresholdedRelu,
  kMish,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kIsNaN,
  kIsInf,  // to bool; IsInf: alpha != 0 detects -inf, beta != 0 +inf
  kShrink  // x < -alpha ? x + beta : x > alpha ? x - beta : 0
};
struct UnaryParams {
  UnaryKind kind = UnaryKind::kIdentity;
  // LeakyRelu, Elu, Celu, ThresholdedRelu alpha; HardSigmoid alpha, beta; Selu alpha, gamma (as
  // beta); PowScalar exponent.
  float alpha = 0, beta = 0;
  float lo = -3.4e38f, hi = 3.4e38f;  // Clip bounds
};
Expr ApplyUnary(const Expr& x, const UnaryParams& p);
Tensor Unary(const Tensor& x, const UnaryParams& p);

enum class BinaryKind {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMax,
  kMin,
  kEqual,
  kLess,
  kGreater,
  kAnd,
  kOr,
  kMod,
  kFmod,
  kGreaterOrEqual,
  kLessOrEqual,
  kPRelu,  // x < 0 ? x * slope : x
  kXor,
  kShiftLeft,
  kShiftRight  // unsigned integers; a shift by the width or more gives 0
};
// Numpy broadcasting over the tensors' shapes (right-aligned; a dimension of 1 broadcasts).
// Comparisons and logic produce bool (a uint8 of 0/1). Integer division truncates toward zero
// (ONNX's Div on integers). kMod takes the divisor's sign (Python), kFmod the dividend's (C fmod).
Tensor Binary(const Tensor& a, const Tensor& b, BinaryKind kind);
Expr ApplyBinary(Expr x, Expr y, BinaryKind kind);
// cond ? x : y with broadcasting.
Tensor Where(const Tensor& cond, const Tensor& x, const Tensor& y);
// x converted to t (float -> integer truncates); to_bool: x != 0 as a bool byte.
Tensor Cast(const Tensor& x, ir::Type t, bool to_bool);
// float32 x rounded to float16's or bfloat16's precision and range and kept in float32: what a Cast
// to those types stores, round half to even, past float16's largest value infinity. Graphs that
// compute in float16 compute here in float32 and round where they cast.
enum class NarrowFloat { kFloat16, kBFloat16 };
Tensor RoundToNarrowFloat(const Tensor& x, NarrowFloat to);
// ONNX GatherElements: out[i] = x[i with axis `axis` replaced by indices[i]]; indices has x's
// rank. Negative indices count from the end; one outside the axis is clamped into it (a read never
// leaves the tensor).
Tensor GatherElements(const Tensor& x, const Tensor& indices, int64_t axis);
// --- indexed reads and writes (ops/index.cc): indices normalized and clamped into their axes ----
// ONNX GatherND with batch_dims.
Tensor GatherND(const Tensor& data, const Tensor& indices, int64_t batch_dims);
// ONNX ScatterElements (and Scatter): data with updates written where indices name along axis.
enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };
Tensor ScatterElements(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis,
                       ScatterReduction reduction);
// ONNX OneHot: values[1] where the (normalized) index equals the position along the new axis.
Tensor OneHot(const Tensor& indices, const Tensor& values, int64_t depth, int64_t axis);
// ONNX TopK along axis: the k largest (or smallest) values and their int64 indices, sorted, ties
// by index.
struct TopKResult {
  Tensor values, indices;
};
TopKResult TopK(const Tensor& x, int64_t axis, int64_t k, bool largest);
// x broadcast to shape (numpy rules, ONNX Expand: the result shape is the broadcast of both).
Tensor Expand(const Tensor& x, const std::vector<int64_t>& shape);
std::vector<int64_t> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// (x - mean) / sqrt(var + eps) * scale + bias, per channel (axis 1).
Tensor BatchNorm(const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& mean, const Tensor& var,
                 float epsilon);

// --- data movement -------------------------------------------------------------------------
// The same elements in row-major order under a new shape (also a plain copy).
Tensor Reshape(const Tensor& x, const std::vector<int64_t>& shape);
Tensor Transpose(const Tensor& x, const std::vector<int64_t>& perm);
// out[i] = x[start + i * step] per dimension; out_shape from shape inference.
Tensor StridedSlice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                    const std::vector<int64_t>& out_shape);
Tensor Concat(const std::vector<Tensor>& inputs, int64_t axis);
enum class PadMode { kConstant, kEdge, kReflect, kWrap };
// The constant fill is `value`, or the single element of value_tensor when that is given.
Tensor Pad(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end, PadMode mode,
           float value, const Tensor& value_tensor = Tensor());
// The single element of a tensor of any rank (a runtime scalar operand).
Expr ReadScalar(const Tensor& t);
// out = x.take(indices, axis) with indices an int64 tensor of in-range (non-negative) values.
Tensor Gather(const Tensor& x, const Tensor& indices, int64_t axis);

// Activation layouts: block 0 is plain N C H W; block b > 0 is N C/b H W b (C % b == 0).
// Converts a 4-D activation between blocks; logical_shape is N C H W.
Tensor ChangeLayout(const Tensor& x, const std::vector<int64_t>& logical_shape, int64_t from_block, int64_t to_block);
std::vector<int64_t> PhysicalShape(const std::vector<int64_t>& logical_shape, int64_t block);

// --- reductions -----------------------------------------------------------------------------
struct PoolParams {
  bool is_max = true;
  std::vector<int64_t> spatial_axes, kernel, strides, pads_begin, pads_end, dilations;
  bool count_include_pad = false;  // average pooling
};
// out_shape from shape inference (ceil mode included); padding never counts for max.
Tensor Pool(const Tensor& x, const PoolParams& p, const std::vector<int64_t>& out_shape);
// Mean over spatial_axes, which stay as extent-1 dimensions.
Tensor GlobalAveragePool(const Tensor& x, const std::vector<int64_t>& spatial_axes);
Tensor ReduceMean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims);
enum class ReduceOp { kSum, kMean, kMax, kMin, kSumSquare, kL2, kL1, kLogSum, kLogSumExp, kProd };
Tensor Reduce(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims, ReduceOp op);
// (x - mean) / sqrt(var + eps) * scale + bias over axes [axis, rank); scale and bias have the
// trailing shape (bias may be null).
Tensor LayerNorm(const Tensor& x, const Tensor& scale, const Tensor& bias, int64_t axis, float epsilon);
// GroupNormalization: x [N, C, spatial...] normalized over each group of C / groups channels and
// the spatial axes, then scale and bias per channel ([C]) or, in opset 18's form, per group
// ([groups]).
Tensor GroupNorm(const Tensor& x, const Tensor& scale, const Tensor& bias, int64_t groups, float epsilon);
// Local response normalization across channels: x / (bias + alpha / size * sum of x^2 over the
// `size` channels from c - (size - 1) / 2, those inside [0, C))^beta.
Tensor LocalResponseNorm(const Tensor& x, int64_t size, float alpha, float beta, float bias);
// Normalized exponentials over axes [first_axis, last_axis] (a range, for the opset < 13 form
// that flattens the trailing axes).
Tensor Softmax(const Tensor& x, int64_t first_axis, int64_t last_axis);
// log(Softmax) over the same axes, as x - max - log(sum(exp(x - max))): never log(0).
Tensor LogSoftmax(const Tensor& x, int64_t first_axis, int64_t last_axis);
// 1 at the first largest element over axes [first_axis, last_axis] (in row-major order), 0 elsewhere.
Tensor Hardmax(const Tensor& x, int64_t first_axis, int64_t last_axis);
// The int64 index along `axis` of the largest (is_max) or smallest element; the first such one,
// or the last with last_index. keepdims keeps the axis as 1.
Tensor ArgReduce(const Tensor& x, int64_t axis, bool keepdims, bool is_max, bool last_index);
// x where element (.., i, j) of its last two axes lies on or above (upper) or on or below the
// k-th diagonal (j - i >= k, or j - i <= k), 0 elsewhere.
Tensor Trilu(const Tensor& x, bool upper, int64_t k);
// ONNX CumSum along `axis`: inclusive or exclusive, forward or reversed.
Tensor CumSum(const Tensor& x, int64_t axis, bool exclusive, bool reverse);

// --- linear algebra (untuned forms; dense layers with constant weights use dense_pack) ---------
// Batched matrix product with numpy semantics (1-D operands promoted, batch dims broadcast).
Tensor MatMul(const Tensor& a, const Tensor& b);
// Einstein summation: one label string per input (one letter per dimension, already validated),
// the output's labels; labels absent from the output are summed over.
Tensor Einsum(const std::vector<Tensor>& inputs, const std::vector<std::string>& input_labels,
              const std::string& output_labels);
// alpha * op(A) op(B) + beta * C, C broadcast to [M, N] (c may be null).
Tensor Gemm(const Tensor& a, const Tensor& b, const Tensor& c, bool trans_a, bool trans_b, float alpha, float beta);
// Direct convolution over any number of spatial axes (N C D... layout) for what the templates do
// not cover (1-D and 3-D convolutions, runtime weights); bias may be null.
struct ConvParams {
  std::vector<int64_t> strides, pads_begin, dilations;
  int64_t groups = 1;
};
Tensor ConvDirect(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvParams& p,
                  const std::vector<int64_t>& out_shape);
// Transposed convolution (ONNX ConvTranspose), gathered per output: out[n, m, o] sums
// x[n, c, i] * w[c, m % (M/groups), k] over the taps where o = i * stride - pad_begin + k * dilation.
// w is [C, M/groups, k...]; pads_begin may be negative (an output_shape larger than the natural one).
Tensor ConvTransposeDirect(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvParams& p,
                           const std::vector<int64_t>& out_shape);

// --- quantization (quantize.cc): the integer side of ONNX's quantized operators ---------------
// int32(x) - int32(zero_point): the zero point one element (per tensor) or one per index of x's
// `axis` (axis -1: per tensor); a null zero point is 0. Products of two such values summed in int32
// are exact for any convolution or matrix product a model holds (ONNX requires that they not overflow).
Tensor SubtractZeroPoint(const Tensor& x, const Tensor& zero_point, int64_t axis);
// What QLinearConv and QLinearMatMul make of their int32 accumulator, as ONNX Runtime does it:
//   saturate(round_half_to_even(float(acc) * (a_scale * b_scale / y_scale)) + y_zero_point)
// Each scale and the zero point is one element, or one per index of the accumulator's axis given
// (-1: per tensor). y_zero_point null: 0, and the output type `out` (uint8 or int8) saturates.
struct Requantization {
  Tensor a_scale, b_scale, y_scale, y_zero_point;
  int64_t a_axis = -1, b_axis = -1;
  ir::Type out{ir::Type::kUInt, 8, 1};
};
Tensor Requantize(const Tensor& acc, const Requantization& r);
// The element `idx` of a quantization parameter (scale or zero point) of a tensor indexed by idx:
// parameter[idx[axis]] along axis, or its single element when axis is -1 or it has only one.
Expr ReadQuantParameter(const Tensor& parameter, const std::vector<Expr>& idx, int64_t axis);
// saturate(round_half_to_even(v) + zero_point) in type out (v a float32 expression; zero_point
// undefined: 0): the last step of every quantization.
Expr RoundAndSaturate(const Expr& v, const Expr& zero_point, ir::Type out);
// ONNX's DequantizeLinear, (x - zero_point) * scale in float32, and QuantizeLinear,
// saturate(round_half_to_even(x / scale) + zero_point) in type out; parameters per tensor or along
// x's `axis` (-1: per tensor); a null zero point is 0.
Tensor Dequantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point, int64_t axis);
Tensor Quantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point, int64_t axis, ir::Type out);
// DynamicQuantizeLinear's parameters of x, as scalars: scale = (max(0, max x) - min(0, min x)) / 255
// and zero_point = saturate(round(-min(0, min x) / scale)) in uint8 (0 when the scale is 0, i.e.
// x is all zeros).
struct DynamicParameters {
  Tensor scale, zero_point;
};
DynamicParameters DynamicQuantizationParameters(const Tensor& x);
// x quantized to uint8 with those parameters (0 when the scale is 0).
Tensor QuantizeDynamically(const Tensor& x, const Tensor& scale, const Tensor& zero_point);

// --- schedules ------------------------------------------------------------------------------
// Loops for any of the definitions above: every stage at root, its outer data axes fused into one
// parallel loop when there is enough work, the innermost data axis vectorized in pieces that
// divide it (reduce axes moved outside it).
std::unique_ptr<te::Schedule> ScheduleGeneric(const std::vector<Tensor>& outputs, const compiler::Target& target);
// The same for NVIDIA GPUs (generic_schedule_gpu.cc): one output element per thread.
std::unique_ptr<te::Schedule> ScheduleGenericGpu(const Tensor& output, const compiler::Target& target);

}  // namespace tunefarm::compute

#endif  // TUNEFARM_COMPILER_COMPUTE_OPS_H_
