// What lowering a node through a schedule template takes, for float nodes (nn_ops.cc: Conv, Gemm,
// MatMul) and int8 ones (integer_ops.cc) alike: the implementations that apply, the packers of the
// layouts a template's weight argument takes (schedule/template_table.h's WeightPacking), and the
// plan's kernel.
#ifndef TUNEFARM_COMPILER_OPERATORS_TEMPLATE_LOWERING_H_
#define TUNEFARM_COMPILER_OPERATORS_TEMPLATE_LOWERING_H_

#include <cstdint>
#include <vector>

#include "compiler/operators/lower_api.h"
#include "compiler/schedule/op_template.h"

namespace tunefarm::operators {

// The node's workload's implementations on the target that have a config space there (empty when
// the node is not a task, node_workload.h).
std::vector<compiler::Workload> TunableImplementations(LowerApi& cx, const graph::Node& n);

// An int8 task node (node_workload.h: QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger,
// com.microsoft.QGemm) through the best of its implementations (integer_ops.cc).
Status LowerInt8Task(LowerApi& cx, const graph::Node& n, const std::vector<compiler::Workload>& implementations);
// A requantized output clamped to the bounds of the activation the QDQ rewrite fused on an integer
// node (graph.h's NodeEpilogue), or q itself (integer_ops.cc; the untuned kernels).
ir::Tensor ClampToFusedActivation(const ir::Tensor& q, const graph::Node& n);
// The untuned kernels' form of a fused residual add (node_workload.h, kFusedResidual): q (the
// node's requantized product, its scale and zero point node inputs y_scale and y_scale + 1) plus
// the residual, as QLinearAdd computes them, quantized in `out` with the sum's parameters; q itself
// when the node has none (integer_ops.cc).
ir::Tensor AddFusedResidual(const ir::Tensor& q, const graph::Node& n, const std::vector<ir::Tensor>& tensors,
                            size_t y_scale, ir::Type out);
// The type of an integer node's requantized product: its y zero point's (uint8 without one),
// which is the output's unless a residual add is fused after it.
ir::Type ProductType(LowerApi& cx, const graph::Node& n, size_t y_zero);

// The plan's kernel for a tunable node, its arguments in def's order.
void AddTemplateKernel(LowerApi& cx, const graph::Node& n, const LowerApi::Choice& choice, compiler::KernelDef def,
                       const compiler::Epilogue& ep, std::vector<int> args);

// Conv weights [K, C/groups, KH, KW] (`shape`) packed to the blocked layouts of conv2d_nchwc
// ([K/oc_bn, Cg/ic_bn, KH, KW, ic_bn, oc_bn]; for int8 dot products, an int32 weight argument,
// [K/oc_bn, Cg/ic_bn, KH, KW, ic_bn/n, oc_bn] words of n = def.weight_word input channels' values,
// here one element each: WidenToInt16 makes the int16 halves of n = 2) or, when
// depthwise, depthwise_conv2d_nchwc ([K/oc_bn, KH, KW, oc_bn]); the blocks read from the template's
// data and output arguments.
template <typename T>
std::vector<T> PackConvWeights(const std::vector<T>& w, const std::vector<int64_t>& shape,
                               const compiler::KernelDef& def, bool depthwise) {
  const int64_t ic_bn = def.args[0]->shape.back(), oc_bn = def.args.back()->shape.back();
  const int64_t kh = shape[2], kw = shape[3], cg = shape[1];
  const bool words = def.weight_word > 0;
  const int64_t n = words ? def.weight_word : 1;
  std::vector<T> packed(size_t(def.args[1]->NumElements() * n));
  for (int64_t k = 0; k < shape[0]; ++k) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t h = 0; h < kh; ++h) {
        for (int64_t x = 0; x < kw; ++x) {
          const T v = w[size_t(((k * cg + c) * kh + h) * kw + x)];
          const int64_t tile = ((((k / oc_bn) * (cg / ic_bn) + c / ic_bn) * kh + h) * kw + x) * ic_bn * oc_bn;
          // Tap words: the chunk's (h, x, channel) taps flattened, n to a word.
          const int64_t tap = (h * kw + x) * ic_bn + c % ic_bn, tap_words = (kh * kw * ic_bn + n - 1) / n;
          const int64_t chunk = (k / oc_bn) * (cg / ic_bn) + c / ic_bn;
          const size_t at = depthwise ? size_t(((k / oc_bn * kh + h) * kw + x) * oc_bn + k % oc_bn)
                            : words && def.args[1]->shape.size() == 4
                                ? size_t(((chunk * tap_words + tap / n) * oc_bn + k % oc_bn) * n + tap % n)
                            : words ? size_t(tile + ((c % ic_bn) / n * oc_bn + k % oc_bn) * n + c % n)
                                    : size_t(tile + (c % ic_bn) * oc_bn + k % oc_bn);
          packed[at] = v;
        }
      }
    }
  }
  return packed;
}

// A dense layer's weights, [in, out] as MatMul stores them or [out, in] when trans_b (Gemm's
// transB), to `packed_shape`: dense_pack's [ceil(out/bn), in, bn] (zero-padded; with words of n
// (KernelDef::weight_word), the int8 dot products' [ceil(out/bn), in/n, bn] words of n k steps, one
// element each) or as stored [out, in].
template <typename T>
std::vector<T> PackDenseWeights(const std::vector<T>& w, bool trans_b, int64_t in, int64_t out,
                                const std::vector<int64_t>& packed_shape, int64_t n = 0) {
  const bool words = n > 0;
  int64_t elements = words ? n : 1;
  for (int64_t d : packed_shape) elements *= d;
  std::vector<T> packed(size_t(elements), T(0));
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < in; ++k) {
      const T v = trans_b ? w[size_t(o * in + k)] : w[size_t(k * out + o)];
      const int64_t bn = packed_shape.size() == 3 ? packed_shape[2] : 1;
      if (words) {
        packed[size_t((((o / bn) * (in / n) + k / n) * bn + o % bn) * n + k % n)] = v;
      } else if (packed_shape.size() == 3) {
        packed[size_t(((o / bn) * in + k) * bn + o % bn)] = v;
      } else {
        packed[size_t(o * in + k)] = v;
      }
    }
  }
  return packed;
}

// Int8 values as the little-endian bytes of int16 values (a pair-word kernel's weights).
inline std::vector<int8_t> WidenToInt16(const std::vector<int8_t>& v) {
  std::vector<int8_t> bytes;
  bytes.reserve(2 * v.size());
  for (int8_t x : v) {
    bytes.push_back(x);
    bytes.push_back(x < 0 ? int8_t(-1) : int8_t(0));  // the sign extended
  }
  return bytes;
}

}  // namespace tunefarm::operators

#endif  // TUNEFARM_COMPILER_OPERATORS_TEMPLATE_LOWERING_H_
