// Helpers shared by the operator templates.
#ifndef TUNEFARM_COMPILER_SCHEDULE_TEMPLATES_TEMPLATE_UTIL_H_
#define TUNEFARM_COMPILER_SCHEDULE_TEMPLATES_TEMPLATE_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compiler/ir/ir_operators.h"
#include "compiler/schedule/op_template.h"
#include "compiler/te/schedule.h"
#include "tunefarm/compiler/winograd.h"
#include "tunefarm/compiler/workload.h"

namespace tunefarm::compiler {

// Largest divisor of n that is <= limit (at least 1).
int64_t LargestDivisorAtMost(int64_t n, int64_t limit);

// The channel block the fallback configs use for a tensor of `channels` channels: two vectors when
// they divide it, else one, else the largest divisor below a vector (the smallest divisor in
// [4, 64] when that one is below 4); 1 for fewer than 4 channels (NCHW1c is NCHW). A function of the channel
// count alone, so the conv (or depthwise conv) that writes a tensor and every one that reads it
// agree on its layout and a model needs no layout change between them.
int64_t FallbackChannelBlock(int64_t channels, int lanes);
// The same for a workload on a target: an int8 one where the products are vpmaddwd pairs (AVX2)
// takes four vectors of channels where they divide the count, so each broadcast input pair (four
// instructions to form) feeds four multiply-adds; int8 ResNet-18 ran in 28.8 ms against 35.0 ms
// with two (one thread, AVX2 code on a Zen 5). Still the count's alone, so layers chain.
int64_t FallbackChannelBlock(const Workload& w, const Target& t, int64_t channels);

// The register tiles of the matrix-product templates (dense_pack, batch_matmul): row tiles 1, 2,
// 4, 6 and 8 not above n, and column tiles of whole vectors up to four (8 and 4 below the
// target's vector width). Both lists are part of those templates' config spaces: changing their
// order or values renumbers recorded configs.
std::vector<int64_t> RowTiles(int64_t n);
std::vector<int64_t> VectorColumnTiles(const Target& t);

// Defines the NCHW[x]c channel-block knobs tile_ic and tile_oc of a convolution with `cin` input
// and `kout` output channels per group: blocks up to 64 wide; input blocks of 1-3 only when there
// are fewer than 4 channels (shorter inner loops cannot amortize their loads); output blocks whole
// vectors whenever the count allows it (a partial vector wastes lanes of every FMA).
void DefineChannelBlocks(ConfigSpace* space, int64_t cin, int64_t kout, int lanes);

// value + bias + residual, then the activation (what Epilogue documents); slope: kPRelu's.
ir::Expr ApplyEpilogue(ir::Expr value, const Epilogue& e, const ir::Expr& bias, const ir::Expr& residual,
                       const ir::Expr& slope);

using te::ClampedRead;  // te/tensor.h

// Vectorizes iv (of the given extent) in native-width pieces: an extent that is a multiple of the
// target's lanes becomes an unrolled loop of full vectors (LLVM legalizes odd-sized wide vectors
// such as <48 x float> poorly); anything else is vectorized as is.
void VectorizeByLanes(te::Stage& stage, const te::IterVar& iv, int64_t extent, int lanes);

// Entry (row, col) of a Winograd matrix (w.*at: WinogradMatrices::a, b or g) for a constant row
// and a column index that unrolling makes constant: a chain of selects over the row's nonzero
// entries (zero when none matches), which Simplify folds to the constant, and zero terms away.
ir::Expr WinogradEntry(const WinogradMatrices& w, double (WinogradMatrices::*at)(int, int) const, int row, int cols,
                       const ir::Expr& col);
// Whether row `row` of that matrix is zero in all of its `cols` columns (the term can be skipped).
bool WinogradRowIsZero(const WinogradMatrices& w, double (WinogradMatrices::*at)(int, int) const, int row, int cols);

// The int8 workloads (Workload::is_int8, Epilogue's Requantize): the types of a kernel's data and
// weight arguments (float32, or the activations' uint8/int8 and int8 weights) and of its
// accumulator (float32 or int32).
ir::Type DataTypeOf(const Workload& w);
ir::Type WeightTypeOf(const Workload& w);
ir::Type AccumulatorTypeOf(const Workload& w);

// Templates that compute int8 workloads pass int8_ok; the others refuse them with an error naming
// the dtype.
Status CheckConv2d(const Workload& w, const char* template_name, bool int8_ok = false);
Status CheckDense(const Workload& w, const char* template_name, bool int8_ok = false);
Status CheckBatchMatmul(const Workload& w, const char* template_name, bool int8_ok = false);

// The epilogue's extra arguments, appended to def->args after data and weights: bias of
// bias_shape (in the accumulator's type: int32 for an int8 workload w), residual of the output's
// shape, PRelu's slopes and an int8 kernel's requantization scales (float32) of bias_shape, and the
// input's zero point as a one-element argument of the data's type where the epilogue says so.
struct EpilogueArgs {
  ir::Tensor bias, residual, slope, scale, input_zero_point;
  ir::Tensor compensation;  // DeclareCompensation's, when the kernel uses int8 dot products
};
EpilogueArgs DeclareEpilogueArgs(const Epilogue& e, const std::vector<int64_t>& bias_shape,
                                 std::vector<int64_t> out_shape, KernelDef* def, const Workload* w = nullptr);
// One term of the reduction: data * weight, or for an int8 workload (int32(data) - the input's
// zero point) * int32(weight), exact in int32.
ir::Expr MultiplyOperands(const Workload& w, const Epilogue& e, const EpilogueArgs& args, const ir::Expr& data,
                          const ir::Expr& weight);
// What padding reads: 0, or an int8 workload's input zero point (which then contributes nothing).
ir::Expr PadValueOf(const Workload& w, const Epilogue& e, const EpilogueArgs& args);

// Int8 dot products: how an int8 conv or dense template multiplies when the target's int8
// multiply-adds beat int32 vectors (Target::int8_products), its reduction block holds whole words
// and the input's zero point is a constant. The kernel reads consecutive input bytes along the
// reduction as one int32 word -- four bytes (kU8S8Quads, ir::dot4_u8s8; kS8S8Quads, ir::dot4_s8s8)
// or two in the low bytes of its int16 halves (kI16Pairs, ir::dot2_i16) -- of the signedness the
// form multiplies (uint8, int8 for kS8S8Quads: an activation of the other kind is read as x + 128 or
// x - 128, its bit 7 flipped), the weights as int32 words of as many int8 or int16 values along the
// reduction (how the lowering packs them: KernelDef::weight_word), and sums the raw products. The
// compensation argument, -(the zero point read the same way) * the sum of the channel's weights
// (DotProductZeroPoint), turns that sum into (x - zero point) * w, exactly. Padding still reads the
// zero point. kInt32Vectors: the multiply of MultiplyOperands.
Int8Products Int8FormOf(const Workload& w, const Epilogue& e, int64_t reduction_block, const Target& t);
// Reduction elements per int32 word of a form: 4, 2, or 1 (kInt32Vectors).
int64_t ElementsPerWord(Int8Products form);
// The form's product of an input word and a weight word, accumulated from 0.
ir::Expr DotProduct(Int8Products form, const ir::Expr& input_word, const ir::Expr& weight_word);
// The zero point the compensation is formed with: the input's, in the form's terms (uint8, or int8
// for kS8S8Quads).
int32_t DotProductZeroPoint(const Workload& w, const Epilogue& e, Int8Products form);
// The int32 word of input[prefix..., n*word .. n*word+n-1] (its last axis; n the form's
// ElementsPerWord), as the form's values.
ir::Expr InputWord(const ir::Tensor& input, const std::vector<ir::Expr>& prefix, const ir::Expr& word,
                   const Workload& w, Int8Products form);
// The same of any n elements: element j is input[index_of(j)].
ir::Expr InputWordOf(const ir::Tensor& input, const std::function<std::vector<ir::Expr>(int64_t)>& index_of,
                     const Workload& w, Int8Products form);
// The compensation argument, one int32 per output channel in the bias's shape.
ir::Tensor DeclareCompensation(const std::vector<int64_t>& shape, KernelDef* def);
bool HasEpilogue(const Epilogue& e);
// out[i] = epilogue(acc[i]); bias, slopes and scales read at bias_index(i). An int32 accumulator
// gets its compensation (args.compensation, when declared), its bias and then, when requantized, Requantize's rounding,
// zero point and bounds. `shape`: out's, when it is only a part of acc's (the real rows of dense_pack's whole row
// tiles); empty: acc's.
ir::Tensor FusedEpilogue(const ir::Tensor& acc, const Epilogue& e, const EpilogueArgs& args,
                         const std::function<std::vector<ir::Expr>(const std::vector<ir::Expr>&)>& bias_index,
                         const std::vector<int64_t>& shape = {});

// A parallel loop over channel chunks alone (a conv's "oc", a depthwise's "c") splits only as far
// as there are chunks: MobileNetV2's stem has one block of 32 output channels, and a config that
// wins at one thread then runs on one core of many (1.11x at 2 threads). Such a config is valid
// only with at least kMinParallelChunks chunks (4 per thread on 4 cores) or when no rows could be
// fused in; the row-fused option ("oc_oh", "c_oh", every fallback's) is always valid.
inline constexpr int64_t kMinParallelChunks = 16;
bool ChunksAloneSuffice(int64_t chunks, int64_t row_tiles);

// The fallback's option index of a ("parallel-axis", "none") knob: "none" (1) for an operator of
// fewer FMAs than te::kMinParallelWork, else the parallel axis (0).
int64_t FallbackParallel(const Workload& w);

// The padded input of an NCHW[x]c convolution (data itself when there is no padding), padding
// reading pad_value (PadValueOf).
ir::Tensor PadNCHWc(const ir::Tensor& data, const Conv2dParams& c, const ir::Expr& pad_value);

// Schedules the output stage of an NCHW[x]c convolution (axes n, c-chunk, oh, ow, c-block): tiles
// of oh_tile x ow_tile positions, the parallel loop over (n, c-chunk) -- and the row tiles too when
// parallel_rows --, the tile unrolled and the channel block vectorized. A conv of fewer FMAs
// (flops / 2) than te::kMinParallelWork stays serial. Returns the ow-tile loop, where the
// accumulator stage is computed.
te::IterVar ScheduleConvOutputTiles(te::Stage& out, int64_t oh_tile, int64_t ow_tile, bool parallel_rows, int64_t block,
                                    int lanes, double flops);

// Where a padded convolution builds its zero-padded input, the "pad_at" knob (PadPlacements()):
//   root    once up front, its outer loops fused and parallel: the whole input copied once;
//   tile    inside `consumer` at loop `at`: only the window the consumer reads there, with halo;
//   inline  no padded copy: each read of the window checks its bounds (a select, which LLVM
//           hoists to the tiles' loops; it pays where the conv does few FMAs per input element).
// A copy vectorizes its channel block when it is at least 4 wide.
const std::vector<std::string>& PadPlacements();
// The fallback's "pad_at" option index: 0 (the only option, "none") for an unpadded conv; inline
// when the conv does few FMAs per input element, else root. bench_kernels on Zen 4: a depthwise
// 3x3 (2-9 FMAs per input element) runs 1.4-2.7x faster inline, MobileNetV2's stem (72) 1.25x;
// ResNet-18's stem (784) and 3x3 convs (576+) run 1.25x faster padded at the root.
int64_t FallbackPadPlacement(const Conv2dParams& c);
void SchedulePadding(te::Schedule& s, const te::Tensor& pad, const std::string& pad_at, te::Stage& consumer,
                     const te::IterVar& at, int64_t block);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_SCHEDULE_TEMPLATES_TEMPLATE_UTIL_H_
