// Winograd F(m x m, 3 x 3) for 3x3 stride-1 convolutions (Lavin & Gray): the transform matrices,
// the tile size the CUDA template uses for a shape, and the weight transform done once at compile
// time (a kernel of the Winograd template takes the transformed weights, never the 3x3 ones).
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

// m = 2 (alpha 4: 2.25x fewer multiplications) or m = 4 (alpha 6: 4x); anything else is an error.
Result<const WinogradMatrices*> WinogradFor(int m);

// A 3x3, stride-1, dilation-1, ungrouped convolution with outputs: what Winograd computes.
bool IsWinogradConv(const Conv2dParams& c);

// The output tile the CUDA template uses: 4 when the output rows and columns are multiples of 4
// (no wasted edge tiles), else 2.
int WinogradTileSize(const Conv2dParams& c);

// weights [K, C, 3, 3] -> U [alpha, alpha, K, C]: U[e][n][k][c] = (G g_kc G^T)[e][n], in double.
std::vector<float> WinogradWeightTransform(const std::vector<float>& weights, int64_t out_channels,
                                           int64_t in_channels, const WinogradMatrices& w);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_WINOGRAD_H_
