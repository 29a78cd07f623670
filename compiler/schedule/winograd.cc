#include "tunefarm/compiler/winograd.h"

#include <algorithm>
#include <string>

namespace tunefarm::compiler {
namespace {

// Toom-Cook F(m, 3) from alpha - 1 finite interpolation points a_j and infinity (alpha = m + 2),
// derived as the transpose of the polynomial product s(x) = g(x) h(x):
//   s(x) = s_top M(x) + sum_j s(a_j) M_j(x) / f_j,   M(x) = prod_l (x - a_l),
//   M_j(x) = M(x) / (x - a_j),   f_j = M_j(a_j),   s_top = g_2 h_{m-1} (the value "at infinity").
// Correlation is the transpose of h -> s, so y = A^T [(G g) (.) (B^T d)] with
//   A[j][i] = a_j^i            (the last row: e_{m-1})
//   G[j][k] = a_j^k / f_j      (the last row: e_2)
//   B[t][j] = coefficient t of M_j(x)   (the last column: of M(x)).
// For the points 0, +-1, +-2 this is Lavin & Gray's F(4x4, 3x3) up to signs; F(6x6, 3x3) adds
// +-1/2, the usual choice that keeps the transforms' entries and rounding errors small.
WinogradMatrices Construct(int m, const std::vector<double>& points) {
  WinogradMatrices w;
  w.m = m;
  w.alpha = m + 2;
  const int alpha = w.alpha, finite = alpha - 1;
  // coefficients (lowest first) of prod over l != skip of (x - a_l); skip = -1 takes every point
  auto product_polynomial = [&](int skip) {
    std::vector<double> p = {1.0};
    for (int l = 0; l < finite; ++l) {
      if (l == skip) continue;
      std::vector<double> next(p.size() + 1, 0.0);
      for (size_t t = 0; t < p.size(); ++t) {
        next[t + 1] += p[t];
        next[t] -= points[size_t(l)] * p[t];
      }
      p = next;
    }
    p.resize(size_t(alpha), 0.0);
    return p;
  };
  w.A.assign(size_t(alpha * m), 0.0);
  w.G.assign(size_t(alpha * 3), 0.0);
  w.B.assign(size_t(alpha * alpha), 0.0);
  for (int j = 0; j < finite; ++j) {
    const double a = points[size_t(j)];
    double f = 1.0;
    for (int l = 0; l < finite; ++l) {
      if (l != j) f *= a - points[size_t(l)];
    }
    double power = 1.0;
    for (int i = 0; i < m; ++i, power *= a) w.A[size_t(j * m + i)] = power;
    power = 1.0;
    for (int k = 0; k < 3; ++k, power *= a) w.G[size_t(j * 3 + k)] = power / f;
    const std::vector<double> mj = product_polynomial(j);
    for (int t = 0; t < alpha; ++t) w.B[size_t(t * alpha + j)] = mj[size_t(t)];
  }
  w.A[size_t(finite * m + m - 1)] = 1.0;
  w.G[size_t(finite * 3 + 2)] = 1.0;
  const std::vector<double> all = product_polynomial(-1);
  for (int t = 0; t < alpha; ++t) w.B[size_t(t * alpha + finite)] = all[size_t(t)];
  return w;
}

}  // namespace

Result<const WinogradMatrices*> WinogradFor(int m) {
  static const WinogradMatrices kF2 = Construct(2, {0, 1, -1});
  static const WinogradMatrices kF4 = Construct(4, {0, 1, -1, 2, -2});
  static const WinogradMatrices kF6 = Construct(6, {0, 1, -1, 2, -2, 0.5, -0.5});
  if (m == 2) return &kF2;
  if (m == 4) return &kF4;
  if (m == 6) return &kF6;
  return Status::InvalidArgument("Winograd output tile " + std::to_string(m) + " is not built (2, 4 or 6)");
}

bool IsWinogradConv(const Conv2dParams& c) {
  return c.kernel_h == 3 && c.kernel_w == 3 && c.stride_h == 1 && c.stride_w == 1 && c.dilation_h == 1 &&
         c.dilation_w == 1 && c.groups == 1 && c.out_height() > 0 && c.out_width() > 0;
}

bool WinogradTileFits(const Conv2dParams& c, int m) { return m == 2 || m <= std::max(c.out_height(), c.out_width()); }

int WinogradFallbackTile(const Conv2dParams& c) {
  int best = 2;
  double best_cost = 0;
  for (int m : kWinogradTiles) {
    if (!WinogradTileFits(c, m)) continue;
    const int64_t rows = (c.out_height() + m - 1) / m, cols = (c.out_width() + m - 1) / m;
    const double waste = double(rows * m * cols * m) / double(c.out_height() * c.out_width());
    const double cost = double((m + 2) * (m + 2)) / double(m * m) * waste;
    if (best_cost == 0 || cost < best_cost) {
      best = m;
      best_cost = cost;
    }
  }
  return best;
}

int WinogradTileSize(const Conv2dParams& c) { return c.out_height() % 4 == 0 && c.out_width() % 4 == 0 ? 4 : 2; }

std::vector<float> WinogradWeightTransform(const std::vector<float>& weights, int64_t out_channels, int64_t in_channels,
                                           int64_t oc_block, const WinogradMatrices& w) {
  const int alpha = w.alpha;
  std::vector<float> u(size_t(alpha * alpha * out_channels * in_channels));
  std::vector<double> gg(size_t(alpha * 3));  // G g
  for (int64_t k = 0; k < out_channels; ++k) {
    for (int64_t c = 0; c < in_channels; ++c) {
      const float* g = &weights[size_t((k * in_channels + c) * 9)];
      std::fill(gg.begin(), gg.end(), 0.0);
      for (int e = 0; e < alpha; ++e) {
        for (int j = 0; j < 3; ++j)
          for (int i = 0; i < 3; ++i) gg[size_t(e * 3 + j)] += w.g(e, i) * g[i * 3 + j];
      }
      for (int e = 0; e < alpha; ++e) {
        for (int n = 0; n < alpha; ++n) {
          double v = 0;
          for (int j = 0; j < 3; ++j) v += gg[size_t(e * 3 + j)] * w.g(n, j);
          const int64_t position = e * alpha + n;
          u[size_t(((position * (out_channels / oc_block) + k / oc_block) * in_channels + c) * oc_block +
                   k % oc_block)] = float(v);
        }
      }
    }
  }
  return u;
}

}  // namespace tunefarm::compiler
