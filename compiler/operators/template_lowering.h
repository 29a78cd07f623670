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
// [K/oc_bn, Cg/ic_bn, KH, KW, ic_bn/4, oc_bn] words of four input channels' int8 values) or, when
// depthwise, depthwise_conv2d_nchwc ([K/oc_bn, KH, KW, oc_bn]); the blocks read from the template's
// data and output arguments.
template <typename T>
std::vector<T> PackConvWeights(const std::vector<T>& w, const std::vector<int64_t>& shape,
                               const compiler::KernelDef& def, bool depthwise) {
  const int64_t ic_bn = def.args[0]->shape.back(), oc_bn = def.args.back()->shape.back();
  const int64_t kh = shape[2], kw = shape[3], cg = shape[1];
  const bool words = sizeof(T) == 1 && def.args[1]->dtype == ir::Type::Int(32);
  std::vector<T> packed(size_t(def.args[1]->NumElements() * (words ? 4 : 1)));
  for (int64_t k = 0; k < shape[0]; ++k) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t h = 0; h < kh; ++h) {
        for (int64_t x = 0; x < kw; ++x) {
          const T v = w[size_t(((k * cg + c) * kh + h) * kw + x)];
          const int64_t tile = ((((k / oc_bn) * (cg / ic_bn) + c / ic_bn) * kh + h) * kw + x) * ic_bn * oc_bn;
          // Tap words: the chunk's (h, x, channel) taps flattened, four to a word.
          const int64_t tap = (h * kw + x) * ic_bn + c % ic_bn, tap_words = (kh * kw * ic_bn + 3) / 4;
          const int64_t chunk = (k / oc_bn) * (cg / ic_bn) + c / ic_bn;
          const size_t at = depthwise ? size_t(((k / oc_bn * kh + h) * kw + x) * oc_bn + k % oc_bn)
                            : words && def.args[1]->shape.size() == 4
                                ? size_t(((chunk * tap_words + tap / 4) * oc_bn + k % oc_bn) * 4 + tap % 4)
                            : words ? size_t(tile + ((c % ic_bn) / 4 * oc_bn + k % oc_bn) * 4 + c % 4)
                                    : size_t(tile + (c % ic_bn) * oc_bn + k % oc_bn);
          packed[at] = v;
        }
      }
    }
  }
  return packed;
}

// A dense layer's weights, [in, out] as MatMul stores them or [out, in] when trans_b (Gemm's
// transB), to `packed_shape`: dense_pack's [ceil(out/bn), in, bn] (zero-padded; with `words`, the
// int8 dot products' [ceil(out/bn), in/4, bn] words of four k steps) or as stored [out, in].
template <typename T>
std::vector<T> PackDenseWeights(const std::vector<T>& w, bool trans_b, int64_t in, int64_t out,
                                const std::vector<int64_t>& packed_shape, bool words = false) {
  int64_t elements = words ? 4 : 1;
  for (int64_t d : packed_shape) elements *= d;
  std::vector<T> packed(size_t(elements), T(0));
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < in; ++k) {
      const T v = trans_b ? w[size_t(o * in + k)] : w[size_t(k * out + o)];
      const int64_t bn = packed_shape.size() == 3 ? packed_shape[2] : 1;
      if (words) {
        packed[size_t((((o / bn) * (in / 4) + k / 4) * bn + o % bn) * 4 + k % 4)] = v;
      } else if (packed_shape.size() == 3) {
        packed[size_t(((o / bn) * in + k) * bn + o % bn)] = v;
      } else {
        packed[size_t(o * in + k)] = v;
      }
    }
  }
  return packed;
}

}  // namespace tunefarm::operators

#endif  // TUNEFARM_COMPILER_OPERATORS_TEMPLATE_LOWERING_H_
