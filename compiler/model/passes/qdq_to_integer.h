// QdqToInteger: the QDQ form of a quantized model (QuantizeLinear / DequantizeLinear pairs around
// float operators, as PyTorch's and ONNX Runtime's static quantizers write it) becomes integer
// operators, as ONNX Runtime's QDQ transformer and TVM's QNN canonicalization make it:
//
//   Q(act(Conv(DQ(x), DQ(w), bias)))    -> QLinearConv(x, w, int32 bias)
//   Q(act(Gemm(DQ(x), DQ(w), bias)))    -> com.microsoft.QGemm(x, w, int32 bias)
//   Q(act(MatMul(DQ(x), DQ(w))))        -> QLinearMatMul(x, w)
//
// w a constant, every scale and zero point a constant (per tensor; w's per output channel too);
// act an optional Relu or Clip, which becomes the integer node's clamp of its quantized output
// (graph.h's NodeEpilogue), exactly, since quantizing is monotone. A float bias is rounded to the
// accumulator's scale (x_scale * w_scale[channel]); a DequantizeLinear'd int32 one comes back
// exactly. An identity Cast between a QuantizeLinear and its DequantizeLinear (PyTorch writes one)
// is looked through. The integer node reads what the chain read and writes what the
// QuantizeLinear wrote; the float nodes it replaces are left unused (RemoveDeadNodes drops them).
// Integer nodes with constant weights are the int8 tasks (operators/node_workload.h).
//
// Chains whose intermediate values feed anything else, or that run under If guards, stay float.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_QDQ_TO_INTEGER_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_QDQ_TO_INTEGER_H_

#include "compiler/graph/graph.h"

namespace tunefarm::graph {

// Returns the number of chains rewritten. Precondition: InferShapes and FoldConstants ran (the
// DequantizeLinear'd weights and the bias path are constants).
int QdqToInteger(Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_QDQ_TO_INTEGER_H_
