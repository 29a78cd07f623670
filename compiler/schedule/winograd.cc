#include "tunefarm/compiler/winograd.h"

#include <string>

namespace tunefarm::compiler {
namespace {

// Interpolation points 0, 1, -1 (and 2, -2 for m = 4), as in Lavin & Gray's paper; B and A are
// the transposes of the paper's B^T and A^T.
WinogradMatrices MakeF2x3() {
  WinogradMatrices w;
  w.m = 2;
  w.alpha = 4;
  const double bt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  const double at[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  w.G = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) w.B.push_back(bt[j][i]);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j) w.A.push_back(at[j][i]);
  return w;
}

WinogradMatrices MakeF4x3() {
  WinogradMatrices w;
  w.m = 4;
  w.alpha = 6;
  const double bt[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                           {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  const double at[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  w.G = {1.0 / 4,  0,        0,        -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6,
         1.0 / 24, 1.0 / 12, 1.0 / 6,  1.0 / 24, -1.0 / 12, 1.0 / 6, 0,        0,       1};
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) w.B.push_back(bt[j][i]);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j) w.A.push_back(at[j][i]);
  return w;
}

}  // namespace

Result<const WinogradMatrices*> WinogradFor(int m) {
  static const WinogradMatrices kF2 = MakeF2x3(), kF4 = MakeF4x3();
  if (m == 2) return &kF2;
  if (m == 4) return &kF4;
  return Status::InvalidArgument("Winograd output tile " + std::to_string(m) + " is not built (2 or 4)");
}

bool IsWinogradConv(const Conv2dParams& c) {
  return c.kernel_h == 3 && c.kernel_w == 3 && c.stride_h == 1 && c.stride_w == 1 && c.dilation_h == 1 &&
         c.dilation_w == 1 && c.groups == 1 && c.out_height() > 0 && c.out_width() > 0;
}

int WinogradTileSize(const Conv2dParams& c) { return c.out_height() % 4 == 0 && c.out_width() % 4 == 0 ? 4 : 2; }

std::vector<float> WinogradWeightTransform(const std::vector<float>& weights, int64_t out_channels,
                                           int64_t in_channels, const WinogradMatrices& w) {
  const int alpha = w.alpha;
  std::vector<float> u(size_t(alpha * alpha * out_channels * in_channels));
  for (int64_t k = 0; k < out_channels; ++k)
    for (int64_t c = 0; c < in_channels; ++c) {
      const float* g = &weights[size_t((k * in_channels + c) * 9)];
      double gg[6][3] = {};  // G g
      for (int e = 0; e < alpha; ++e)
        for (int j = 0; j < 3; ++j)
          for (int i = 0; i < 3; ++i) gg[e][j] += w.g(e, i) * g[i * 3 + j];
      for (int e = 0; e < alpha; ++e)
        for (int n = 0; n < alpha; ++n) {
          double v = 0;
          for (int j = 0; j < 3; ++j) v += gg[e][j] * w.g(n, j);
          u[size_t(((e * alpha + n) * out_channels + k) * in_channels + c)] = float(v);
        }
    }
  return u;
}

}  // namespace tunefarm::compiler
