#include "compiler/schedule/templates/template_util.h"

#include <algorithm>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/te/tensor.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::compiler {

int64_t LargestDivisorAtMost(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d >= 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

int64_t FallbackChannelBlock(int64_t channels, int lanes) {
  if (channels % (2 * lanes) == 0) return 2 * lanes;
  if (channels % lanes == 0) return lanes;
  // Fewer than 4 channels (an RGB image): block 1, which is plain NCHW itself, so the model's
  // input needs no layout change (it cost 3% of MobileNetV2) and the convolution loses little.
  if (channels < 4) return 1;
  const int64_t below = LargestDivisorAtMost(channels, lanes);
  if (below >= 4) return below;
  // Counts like 58 or 116 (ShuffleNet) have no divisor in [4, lanes]: blocks of 1-2 starve the
  // conv's inner loop (its space excludes them), so take the smallest divisor in [4, 64].
  for (int64_t d = 4; d <= std::min<int64_t>(channels, 64); ++d) {
    if (channels % d == 0) return d;
  }
  return below;
}

int64_t FallbackChannelBlock(const Workload& w, const Target& t, int64_t channels) {
  const int64_t four_vectors = 4 * int64_t(t.vector_lanes);
  if (w.is_int8() && t.int8_products == Int8Products::kI16Pairs && channels % four_vectors == 0) return four_vectors;
  return FallbackChannelBlock(channels, t.vector_lanes);
}

std::vector<int64_t> RowTiles(int64_t n) {
  std::vector<int64_t> tiles;
  for (int64_t v : {1, 2, 4, 6, 8}) {
    if (v <= n) tiles.push_back(v);
  }
  return tiles;
}

std::vector<int64_t> VectorColumnTiles(const Target& t) {
  std::vector<int64_t> tiles;
  for (int64_t v = t.vector_lanes; v <= 4 * t.vector_lanes; v += t.vector_lanes) tiles.push_back(v);
  for (int64_t v : {int64_t(8), int64_t(4)}) {
    if (v < t.vector_lanes) tiles.push_back(v);
  }
  return tiles;
}

void DefineChannelBlocks(ConfigSpace* space, int64_t cin, int64_t kout, int lanes) {
  space->DefineSplit("tile_ic", cin, 2, SplitPolicy::kFactors);
  space->DefineSplit("tile_oc", kout, 2, SplitPolicy::kFactors);
  space->FilterKnob("tile_ic",
                    [cin](const std::vector<int64_t>& f) { return f.back() <= 64 && (cin < 4 || f.back() >= 4); });
  space->FilterKnob("tile_oc", [lanes, kout](const std::vector<int64_t>& f) {
    return f.back() <= 64 && (kout % lanes != 0 || f.back() % lanes == 0);
  });
}

ir::Expr ApplyEpilogue(ir::Expr v, const Epilogue& e, const ir::Expr& bias, const ir::Expr& residual,
                       const ir::Expr& slope) {
  if (e.bias) v = v + bias;
  if (e.residual) v = v + residual;
  switch (e.activation) {
    case Activation::kNone:
      break;
    case Activation::kRelu:
      v = ir::max(v, ir::Expr(0.0f));
      break;
    case Activation::kRelu6:
      v = ir::min(ir::max(v, ir::Expr(0.0f)), ir::Expr(6.0f));
      break;
    case Activation::kClip:
      v = ir::min(ir::max(v, ir::Expr(e.clip_min)), ir::Expr(e.clip_max));
      break;
    case Activation::kPRelu:
      v = ir::select(v < ir::Expr(0.0f), v * slope, v);
      break;
    case Activation::kGelu:
      v = compute::ApplyUnary(v, {compute::UnaryKind::kGelu});
      break;
    case Activation::kGeluTanh:
      v = compute::ApplyUnary(v, {compute::UnaryKind::kGeluTanh});
      break;
  }
  return v;
}

void VectorizeByLanes(te::Stage& stage, const te::IterVar& iv, int64_t extent, int lanes) {
  if (extent > lanes && extent % lanes == 0) {
    auto [outer, inner] = stage.split(iv, lanes);
    stage.unroll(outer);
    stage.vectorize(inner);
  } else {
    stage.vectorize(iv);
  }
}

ir::Type DataTypeOf(const Workload& w) {
  if (!w.is_int8()) return ir::Type::Float(32);
  return ir::Type{w.dtype == "uint8" ? ir::Type::kUInt : ir::Type::kInt, 8, 1};
}

ir::Type WeightTypeOf(const Workload& w) {
  if (!w.is_int8()) return ir::Type::Float(32);
  return w.is_batch_matmul() ? DataTypeOf(w) : ir::Type::Int(8);  // two activations of one type
}

ir::Type AccumulatorTypeOf(const Workload& w) { return w.is_int8() ? ir::Type::Int(32) : ir::Type::Float(32); }

namespace {

// An int8 workload's input zero point in the data's type: the argument's element, or the constant.
ir::Expr InputZeroPoint(const Workload& w, const Epilogue& e, const EpilogueArgs& args) {
  if (e.input_zero_point_argument) return te::Read(args.input_zero_point, {ir::Expr(int64_t(0))});
  return ir::cast(DataTypeOf(w), ir::Expr(int64_t(e.input_zero_point)));
}

}  // namespace

ir::Expr MultiplyOperands(const Workload& w, const Epilogue& e, const EpilogueArgs& args, const ir::Expr& data,
                          const ir::Expr& weight) {
  if (!w.is_int8()) return data * weight;
  const ir::Type i32 = ir::Type::Int(32);
  ir::Expr x = ir::cast(i32, data);
  if (e.input_zero_point != 0 || e.input_zero_point_argument) x = x - ir::cast(i32, InputZeroPoint(w, e, args));
  ir::Expr y = ir::cast(i32, weight);
  if (e.weight_zero_point != 0) y = y - ir::cast(i32, ir::Expr(int64_t(e.weight_zero_point)));
  return x * y;
}

ir::Expr PadValueOf(const Workload& w, const Epilogue& e, const EpilogueArgs& args) {
  return w.is_int8() ? InputZeroPoint(w, e, args) : ir::Expr(0.0f);
}

EpilogueArgs DeclareEpilogueArgs(const Epilogue& e, const std::vector<int64_t>& bias_shape,
                                 std::vector<int64_t> out_shape, KernelDef* def, const Workload* w) {
  EpilogueArgs a;
  const bool int8 = w && w->is_int8();
  if (e.bias) {
    a.bias = te::Placeholder("bias", bias_shape, int8 ? ir::Type::Int(32) : ir::Type::Float(32));
    def->args.push_back(a.bias);
    def->roles.push_back(BufferRole::kBias);
  }
  if (e.residual) {
    const bool is_signed = e.integer_residual.residual_signed;
    a.residual = te::Placeholder("residual", std::move(out_shape),
                                 !int8 || !e.integer_residual.enabled ? ir::Type::Float(32)
                                 : is_signed                          ? ir::Type::Int(8)
                                                                      : ir::Type{ir::Type::kUInt, 8, 1});
    def->args.push_back(a.residual);
    def->roles.push_back(BufferRole::kResidual);
  }
  if (e.activation == Activation::kPRelu) {
    a.slope = te::Placeholder("slope", bias_shape);
    def->args.push_back(a.slope);
    def->roles.push_back(BufferRole::kSlope);
  }
  if (e.requantize.enabled) {
    a.scale = te::Placeholder("scale", bias_shape);
    def->args.push_back(a.scale);
    def->roles.push_back(BufferRole::kScale);
  }
  if (int8 && e.input_zero_point_argument) {
    a.input_zero_point = te::Placeholder("input_zero_point", {1}, DataTypeOf(*w));
    def->args.push_back(a.input_zero_point);
    def->roles.push_back(BufferRole::kZeroPoint);
  }
  return a;
}

Int8Products Int8FormOf(const Workload& w, const Epilogue& e, int64_t reduction_block, const Target& t) {
  const Int8Products form = t.int8_products;
  const bool fits = w.is_int8() && !w.is_batch_matmul() && !e.input_zero_point_argument &&
                    reduction_block % ElementsPerWord(form) == 0;
  return fits ? form : Int8Products::kInt32Vectors;
}

int64_t ElementsPerWord(Int8Products form) {
  switch (form) {
    case Int8Products::kU8S8Quads:
    case Int8Products::kS8S8Quads:
      return 4;
    case Int8Products::kI16Pairs:
      return 2;
    case Int8Products::kInt32Vectors:
      break;
  }
  return 1;
}

ir::Expr DotProduct(Int8Products form, const ir::Expr& input_word, const ir::Expr& weight_word) {
  const ir::Expr zero = ir::IntImm::Make(ir::Type::Int(32), 0);
  switch (form) {
    case Int8Products::kU8S8Quads:
      return ir::dot4_u8s8(zero, input_word, weight_word);
    case Int8Products::kS8S8Quads:
      return ir::dot4_s8s8(zero, input_word, weight_word);
    case Int8Products::kI16Pairs:
      return ir::dot2_i16(zero, input_word, weight_word);
    case Int8Products::kInt32Vectors:
      break;
  }
  TUNEFARM_CHECK_MSG(false, "int32 vectors have no dot product");
  return ir::Expr();
}

namespace {
// Whether the form multiplies int8 activations (else uint8).
bool SignedActivations(Int8Products form) { return form == Int8Products::kS8S8Quads; }
}  // namespace

int32_t DotProductZeroPoint(const Workload& w, const Epilogue& e, Int8Products form) {
  const bool is_signed = w.dtype == "int8";
  if (is_signed == SignedActivations(form)) return e.input_zero_point;
  return is_signed ? e.input_zero_point + 128 : e.input_zero_point - 128;
}

ir::Expr InputWord(const ir::Tensor& input, const std::vector<ir::Expr>& prefix, const ir::Expr& word,
                   const Workload& w, Int8Products form) {
  const int64_t n = ElementsPerWord(form);
  return InputWordOf(
      input,
      [&](int64_t j) {
        std::vector<ir::Expr> index = prefix;
        index.push_back(word * ir::Expr(n) + ir::Expr(j));
        return index;
      },
      w, form);
}

ir::Expr InputWordOf(const ir::Tensor& input, const std::function<std::vector<ir::Expr>(int64_t)>& index_of,
                     const Workload& w, Int8Products form) {
  const ir::Type i32 = ir::Type::Int(32), u8{ir::Type::kUInt, 8, 1};
  auto byte = [&](int64_t j) {
    ir::Expr b = te::Read(input, index_of(j));
    return b.type() == u8 ? b : ir::reinterpret(u8, b);
  };
  ir::Expr packed;
  uint32_t top_bits;  // each element's bit 7
  if (form == Int8Products::kI16Pairs) {
    packed = ir::byte_pair(byte(0), byte(1));
    top_bits = 0x00800080u;
  } else {
    for (int64_t j = 0; j < 4; ++j) {
      // Byte j at bits 8j: disjoint bits, which LLVM reads as one 32-bit load.
      ir::Expr lane = ir::cast(i32, byte(j));
      if (j > 0) lane = ir::Call::Make(i32, "shift_left", {lane, ir::cast(i32, ir::Expr(8 * j))});
      packed = j == 0 ? lane : packed + lane;
    }
    top_bits = 0x80808080u;
  }
  if ((w.dtype == "int8") == SignedActivations(form)) return packed;
  // x + 128 (int8 read as uint8) or x - 128 (uint8 as int8) in each element: its bit 7 flipped.
  return ir::Call::Make(i32, ir::kBitwiseXor, {packed, ir::cast(i32, ir::Expr(int64_t(int32_t(top_bits))))});
}

ir::Tensor DeclareCompensation(const std::vector<int64_t>& shape, KernelDef* def) {
  ir::Tensor t = te::Placeholder("compensation", shape, ir::Type::Int(32));
  def->args.push_back(t);
  def->roles.push_back(BufferRole::kCompensation);
  return t;
}

bool HasEpilogue(const Epilogue& e) {
  return e.bias || e.residual || e.activation != Activation::kNone || e.requantize.enabled;
}

namespace {

ir::Type Type8(bool is_signed) { return is_signed ? ir::Type::Int(8) : ir::Type{ir::Type::kUInt, 8, 1}; }
ir::Expr Clamp(const ir::Expr& v, float lo, float hi) { return ir::min(ir::max(v, ir::Expr(lo)), ir::Expr(hi)); }

// clamp(round_half_to_even(float(acc) * scale) + zero_point, min, max) in uint8 or int8: ONNX
// Runtime's requantization (a float multiplier per channel), the activation as the bounds; with a
// fused residual add, the sum quantized as QLinearAdd quantizes it (Epilogue's IntegerResidual).
// The bounds are integers, so clamping before the rounding gives the same value as clamping after:
// the float clamp keeps the conversion in range, and round_to_int32 rounds and converts in one
// instruction (vcvtps2dq), the zero point added in int32.
ir::Expr RequantizeValue(const ir::Expr& acc, const ir::Expr& scale, const Epilogue& e, const ir::Expr& residual) {
  const Requantize& r = e.requantize;
  const ir::Type i32 = ir::Type::Int(32), f32 = ir::Type::Float(32);
  // round(x) + zero_point clamped to [lo, hi], less the zero point: an int32.
  auto centered = [](const ir::Expr& x, int32_t zero_point, float lo, float hi) {
    return ir::round_to_int32(Clamp(x, lo - float(zero_point), hi - float(zero_point)));
  };
  auto offset = [&](const ir::Expr& v, int32_t zero_point, bool is_signed) {
    return ir::cast(Type8(is_signed), v + ir::cast(i32, ir::Expr(int64_t(zero_point))));
  };
  const ir::Expr x = ir::cast(f32, acc) * scale;
  if (!e.integer_residual.enabled)
    return offset(centered(x, r.zero_point, float(r.min), float(r.max)), r.zero_point, r.is_signed);
  const IntegerResidual& s = e.integer_residual;
  // The product saturated to its own type, as QLinearAdd reads it; then each operand times its
  // scale over the sum's, as ONNX Runtime's vectorized QLinearAdd forms the sum (MLAS qladd): no
  // division per element, which cost a residual block's 1x1 convolution a third of its time; the
  // quotient differs from (a + b) / sum_scale by at most one rounding step.
  const ir::Expr q = centered(x, r.zero_point, r.is_signed ? -128.0f : 0.0f, r.is_signed ? 127.0f : 255.0f);
  const float ratio = s.scale / s.sum_scale, residual_ratio = s.residual_scale / s.sum_scale;
  const ir::Expr first = ir::cast(f32, q) * ir::Expr(ratio);
  const ir::Expr second =
      ir::cast(f32, ir::cast(i32, residual) - ir::cast(i32, ir::Expr(int64_t(s.residual_zero_point)))) *
      ir::Expr(residual_ratio);
  return offset(centered(first + second, s.sum_zero_point, float(r.min), float(r.max)), s.sum_zero_point, s.sum_signed);
}

}  // namespace

ir::Tensor FusedEpilogue(const ir::Tensor& acc, const Epilogue& e, const EpilogueArgs& args,
                         const std::function<std::vector<ir::Expr>(const std::vector<ir::Expr>&)>& bias_index,
                         const std::vector<int64_t>& shape) {
  return te::Compute("out", shape.empty() ? acc->shape : shape, [&](const std::vector<ir::Expr>& i) {
    ir::Expr b = e.bias ? te::Read(args.bias, bias_index(i)) : ir::Expr();
    ir::Expr r = e.residual ? te::Read(args.residual, i) : ir::Expr();
    ir::Expr s = e.activation == Activation::kPRelu ? te::Read(args.slope, bias_index(i)) : ir::Expr();
    if (acc->dtype.is_float()) return ApplyEpilogue(te::Read(acc, i), e, b, r, s);
    // An int32 accumulator: the bias, then the requantization (the activation is its bounds).
    ir::Expr v = te::Read(acc, i);
    if (args.compensation) v = v + te::Read(args.compensation, bias_index(i));
    if (e.bias) v = v + b;
    return e.requantize.enabled ? RequantizeValue(v, te::Read(args.scale, bias_index(i)), e, r) : v;
  });
}

ir::Tensor PadNCHWc(const ir::Tensor& data, const Conv2dParams& c, const ir::Expr& pad_value) {
  const int64_t hp = c.height + c.pad_top + c.pad_bottom, wp = c.width + c.pad_left + c.pad_right;
  if (hp == c.height && wp == c.width) return data;
  const auto& s = data->shape;
  return te::Compute("pad", {s[0], s[1], hp, wp, s[4]}, [&](const std::vector<ir::Expr>& i) {
    ir::Expr h = i[2] - ir::Expr(c.pad_top), x = i[3] - ir::Expr(c.pad_left);
    ir::Expr inside = h >= ir::Expr(0) && h < ir::Expr(c.height) && x >= ir::Expr(0) && x < ir::Expr(c.width);
    return ir::select(inside, ClampedRead(data, {i[0], i[1], h, x, i[4]}), pad_value);
  });
}

bool ChunksAloneSuffice(int64_t chunks, int64_t row_tiles) { return chunks >= kMinParallelChunks || row_tiles <= 1; }

int64_t FallbackParallel(const Workload& w) { return w.Flops() / 2 >= double(te::kMinParallelWork) ? 0 : 1; }

te::IterVar ScheduleConvOutputTiles(te::Stage& o, int64_t oh_tile, int64_t ow_tile, bool parallel_rows, int64_t block,
                                    int lanes, double flops) {
  auto n = o.axes[0], chunk = o.axes[1], oh = o.axes[2], ow = o.axes[3], cb = o.axes[4];
  auto [oho, ohi] = o.split(oh, oh_tile);
  auto [owo, owi] = o.split(ow, ow_tile);
  o.reorder({n, chunk, oho, owo, ohi, owi, cb});
  auto fused = o.fuse(n, chunk);
  if (parallel_rows) fused = o.fuse(fused, oho);
  if (flops / 2 >= double(te::kMinParallelWork)) o.parallel(fused);
  o.unroll(ohi);
  o.unroll(owi);
  VectorizeByLanes(o, cb, block, lanes);
  return owo;
}

namespace {
// Option indices of "pad_at" (stored in records: append new placements, never reorder).
constexpr int64_t kPadAtRoot = 0, kPadAtInline = 2;
}  // namespace

const std::vector<std::string>& PadPlacements() {
  static const std::vector<std::string> kPlacements = {"root", "tile", "inline"};
  return kPlacements;
}

int64_t FallbackPadPlacement(const Conv2dParams& c) {
  if (c.pad_top + c.pad_left + c.pad_bottom + c.pad_right == 0) return 0;  // "none"
  constexpr int64_t kInlineMaxFmasPerInput = 128;
  const int64_t fmas_per_input = (c.out_channels / c.groups) * c.kernel_h * c.kernel_w / (c.stride_h * c.stride_w);
  return fmas_per_input <= kInlineMaxFmasPerInput ? kPadAtInline : kPadAtRoot;
}

void SchedulePadding(te::Schedule& s, const te::Tensor& pad, const std::string& pad_at, te::Stage& consumer,
                     const te::IterVar& at, int64_t block) {
  if (pad_at == "inline") {
    s.compute_inline(pad);
    return;
  }
  te::Stage& p = s[pad];
  if (pad_at == "tile") {
    p.compute_at(consumer, at);
  } else {
    p.parallel(p.fuse(p.fuse(p.axes[0], p.axes[1]), p.axes[2]));
  }
  if (block >= 4) p.vectorize(p.axes[4]);
}

ir::Expr WinogradEntry(const WinogradMatrices& w, double (WinogradMatrices::*at)(int, int) const, int row, int cols,
                       const ir::Expr& col) {
  ir::Expr e = ir::Expr(0.0f);
  for (int j = 0; j < cols; ++j) {
    const double v = (w.*at)(row, j);
    if (v != 0.0) e = ir::select(col == ir::Expr(int64_t(j)), ir::Expr(float(v)), e);
  }
  return e;
}

bool WinogradRowIsZero(const WinogradMatrices& w, double (WinogradMatrices::*at)(int, int) const, int row, int cols) {
  for (int j = 0; j < cols; ++j) {
    if ((w.*at)(row, j) != 0.0) return false;
  }
  return true;
}

namespace {

Status CheckDtype(const Workload& w, const char* name, bool int8_ok) {
  if (w.dtype == "float32" || (int8_ok && w.is_int8())) return Status::OK();
  return Status::InvalidArgument("unsupported dtype '" + w.dtype + "' for " + name + "; supported: float32" +
                                 (int8_ok ? ", uint8, int8" : ""));
}

}  // namespace

Status CheckConv2d(const Workload& w, const char* name, bool int8_ok) {
  const Conv2dParams& c = w.conv;
  std::string where = std::string(name) + " workload " + w.Key();
  TUNEFARM_RETURN_IF_ERROR(CheckDtype(w, name, int8_ok));
  if (c.batch < 1 || c.in_channels < 1 || c.height < 1 || c.width < 1 || c.out_channels < 1 || c.kernel_h < 1 ||
      c.kernel_w < 1) {
    return Status::InvalidArgument("unsupported shape: every dimension must be >= 1 in " + where);
  }
  if (c.stride_h < 1 || c.stride_w < 1) return Status::InvalidArgument("unsupported stride: must be >= 1 in " + where);
  if (c.dilation_h < 1 || c.dilation_w < 1)
    return Status::InvalidArgument("unsupported dilation: must be >= 1 in " + where);
  if (c.pad_top < 0 || c.pad_left < 0 || c.pad_bottom < 0 || c.pad_right < 0) {
    return Status::InvalidArgument("unsupported padding: must be >= 0 in " + where);
  }
  if (c.groups < 1 || c.in_channels % c.groups != 0 || c.out_channels % c.groups != 0) {
    return Status::InvalidArgument("unsupported groups: " + std::to_string(c.groups) +
                                   " must divide input and output channels in " + where);
  }
  if (c.out_height() < 1 || c.out_width() < 1) {
    return Status::InvalidArgument("unsupported shape: the kernel is larger than the padded input in " + where);
  }
  return Status::OK();
}

Status CheckBatchMatmul(const Workload& w, const char* name, bool int8_ok) {
  if (!w.is_batch_matmul())
    return Status::InvalidArgument(std::string(name) + " computes batched products, not " + w.Key());
  TUNEFARM_RETURN_IF_ERROR(CheckDtype(w, name, int8_ok));
  return w.Validate();
}

Status CheckDense(const Workload& w, const char* name, bool int8_ok) {
  const DenseParams& d = w.dense;
  TUNEFARM_RETURN_IF_ERROR(CheckDtype(w, name, int8_ok));
  if (d.batch < 1 || d.in_features < 1 || d.out_features < 1) {
    return Status::InvalidArgument(std::string("unsupported shape: every dimension must be >= 1 in ") + name +
                                   " workload " + w.Key());
  }
  return Status::OK();
}

}  // namespace tunefarm::compiler
