// LowerGpuMath: the float32 transcendental calls of a kernel (exp, log, tanh) become plain
// arithmetic, so a CUDA kernel never needs libdevice (a CUDA-toolkit file a GPU host with only a
// driver does not have) and the host emulation of a GPU kernel runs the very formulas the GPU runs.
// CPU kernels run it too, as `lower_math` after vectorization: the formulas are built at the
// vector's width, where LLVM would make one libm call per lane.
//
//   exp   Cody-Waite range reduction x = n ln2 + r (|r| <= ln2/2, ln2 split in two so n*hi is
//         exact), a degree-7 polynomial for e^r, and 2^n applied as two exponent-field scalings so
//         results in the subnormal range and up to FLT_MAX need no special case.
//   log   x = m 2^e with m in [sqrt(1/2), sqrt(2)) read from the bits (subnormals scaled by 2^23
//         first), log(1+f) by a degree-10 polynomial, e ln2 added in two parts.
//   tanh  |x| < 0.625: an odd polynomial; beyond: 1 - 2/(exp(2|x|)+1) with the sign of x.
//
// Special values are those of C's expf/logf/tanhf (NaN in, NaN out; log of a negative is NaN, of 0
// is -inf). The accuracy against float64 is measured in tests/compiler/gpu_math_test.cc and stated
// in docs/cuda.md. sqrt, fabs and floor are left alone: NVPTX has exact instructions for them.
// The bit reinterpretation is ir::reinterpret (a call both code generators emit as a bitcast).
#ifndef TUNEFARM_COMPILER_PASSES_LOWER_GPU_MATH_H_
#define TUNEFARM_COMPILER_PASSES_LOWER_GPU_MATH_H_

#include "compiler/ir/ir.h"

namespace tunefarm::passes {

ir::Stmt LowerGpuMath(const ir::Stmt& s);

// The expressions the pass substitutes, for a float32 value (any lane count) of x.
ir::Expr GpuExp(const ir::Expr& x);
ir::Expr GpuLog(const ir::Expr& x);
ir::Expr GpuTanh(const ir::Expr& x);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_LOWER_GPU_MATH_H_
