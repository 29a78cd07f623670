// Winograd F(m x m, 3 x 3) for 3x3 stride-1 convolutions (Lavin & Gray): the transform matrices,
// the tile size the CUDA template uses for a shape (the CPU template tunes it), and the weight
// transform done once at compile time (a kernel of a Winograd template takes the transformed
// weights, never the 3x3 ones).
//
// For an input tile d (alpha x alpha, alpha = m + 2) of one channel and a filter g (3 x 3):
//   U = G g G^T   (alpha x alpha)      V = B^T d B   (alpha x alpha)
//   M = sum over input channels of U (.) V (elementwise)
//   Y = A^T M A   (m x m outputs)
// The matrices below are stored untransposed, row-major: B is alpha x alpha, G alpha x 3, A alpha x m.
#ifndef TUNEFARM_COMPILER_WINOGRAD_H_
#define TUNEFARM_COMPILER_WINOGRAD_H_

#include <cstdint>
#include <vector>

#include "tunefarm/compiler/workload.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::compiler {

struct WinogradMatrices {
  int m = 0, alpha = 0;
  std::vector<double> A, B, G;
  double a(int i, int j) const { return A[size_t(i * m + j)]; }
  double b(int i, int j) const { return B[size_t(i * alpha + j)]; }
  double g(int i, int j) const { return G[size_t(i * 3 + j)]; }
};

// m = 2 (alpha 4: 2.25x fewer multiplications), m = 4 (alpha 6: 4x) or m = 6 (alpha 8: 5.06x,
// at the price of larger transforms and rounding errors); anything else is an error.
Result<const WinogradMatrices*> WinogradFor(int m);

// The output tiles the CPU template tunes over. WinogradFor builds m = 6 too, but F(6x6, 3x3) in
// float32 is about twice as inexact as F(4x4, 3x3) (the GEMM's rounding errors are amplified by
// A's entries up to 2^5): on random 3x3 convolutions with a clip epilogue it reached 1.3e-4
// relative error, past the 1e-4 every kernel must hold, and it was never the fastest on the
// ResNet-18 layers (bench/RESULTS.md, "Winograd on CPUs").
constexpr int kWinogradTiles[] = {2, 4};

// A 3x3, stride-1, dilation-1, ungrouped convolution with outputs: what Winograd computes.
bool IsWinogradConv(const Conv2dParams& c);

// The output tile the CUDA template uses: 4 when the output rows and columns are multiples of 4
// (no wasted edge tiles), else 2.
int WinogradTileSize(const Conv2dParams& c);

// Whether tile m is worth offering for c: m = 2 always; a larger one only when the output is at
// least m wide or high (m = 6 on a 4x4 output computes a 6x6 tile, mostly waste).
bool WinogradTileFits(const Conv2dParams& c, int m);

// The CPU template's untuned tile: the m with the least estimated work per output, the GEMM's
// alpha^2 / m^2 multiplications times the edge waste (tiles computed over outputs needed).
int WinogradFallbackTile(const Conv2dParams& c);

// weights [K, C, 3, 3] -> U [alpha, alpha, K / oc_block, C, oc_block]:
// U[e][n][k / oc_block][c][k % oc_block] = (G g_kc G^T)[e][n], in double. oc_block divides K; the
// CUDA template takes oc_block 1 ([alpha, alpha, K, C]), the CPU one its output-channel block.
std::vector<float> WinogradWeightTransform(const std::vector<float>& weights, int64_t out_channels, int64_t in_channels,
                                           int64_t oc_block, const WinogradMatrices& w);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_WINOGRAD_H_
