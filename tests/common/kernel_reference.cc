#include "common/kernel_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "compiler/schedule/template_table.h"
#include "tunefarm/compiler/winograd.h"

namespace tunefarm::testing {

using compiler::Activation;
using compiler::Epilogue;
using compiler::KernelInfo;
using compiler::KernelSpec;

namespace {

int Find(const KernelInfo& info, const char* role) {
  for (size_t i = 0; i < info.buffers.size(); ++i) {
    if (info.buffers[i].role == role) return int(i);
  }
  return -1;
}

// slope: PRelu's for the output's channel (the kernel's "slope" argument, laid out as the bias).
float Epi(float v, const Epilogue& e, float bias, float residual, float slope) {
  if (e.bias) v += bias;
  if (e.residual) v += residual;
  switch (e.activation) {
    case Activation::kNone:
      break;
    case Activation::kRelu:
      v = std::max(v, 0.0f);
      break;
    case Activation::kRelu6:
      v = std::min(std::max(v, 0.0f), 6.0f);
      break;
    case Activation::kClip:
      v = std::min(std::max(v, e.clip_min), e.clip_max);
      break;
    case Activation::kPRelu:
      v = v < 0 ? v * slope : v;
      break;
    case Activation::kGelu:
      v = float(0.5 * v * (1.0 + std::erf(double(v) / std::sqrt(2.0))));
      break;
    case Activation::kGeluTanh:
      v = float(0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (double(v) + 0.044715 * double(v) * v * v))));
      break;
  }
  return v;
}

// The epilogue of output element `o` in channel `ch` (bias, slope) from the kernel's arguments.
float EpiAt(float v, const KernelSpec& spec, const KernelInfo& info, const Buffers& args, size_t ch, size_t o) {
  const int bi = Find(info, "bias"), ri = Find(info, "residual"), si = Find(info, "slope");
  return Epi(v, spec.epilogue, bi >= 0 ? args[size_t(bi)][ch] : 0.0f, ri >= 0 ? args[size_t(ri)][o] : 0.0f,
             si >= 0 ? args[size_t(si)][ch] : 0.0f);
}

std::vector<float> ConvReference(const KernelSpec& spec, const KernelInfo& info, const Buffers& args, bool depthwise) {
  const auto& c = spec.workload.conv;
  const auto& data = args[size_t(Find(info, "input"))];
  const auto& w = args[size_t(Find(info, "weight"))];
  const int oi = Find(info, "output");
  const auto& dshape = info.buffers[0].shape;
  const auto& oshape = info.buffers[size_t(oi)].shape;
  // Blocked NCHW[x]c (CPU templates) or plain NCHW (CUDA templates: a block of 1).
  const int64_t ic_bn = dshape.size() == 5 ? dshape[4] : 1, oc_bn = oshape.size() == 5 ? oshape[4] : 1;
  const int64_t OH = c.out_height(), OW = c.out_width();
  const int64_t Cg = c.in_channels / c.groups, Kg = c.out_channels / c.groups;
  auto in_at = [&](int64_t n, int64_t ch, int64_t h, int64_t x) {
    return data[size_t((((n * (c.in_channels / ic_bn) + ch / ic_bn) * c.height + h) * c.width + x) * ic_bn +
                       ch % ic_bn)];
  };
  auto w_at = [&](int64_t oc, int64_t icg, int64_t kh, int64_t kw) {
    if (depthwise) {
      return w[size_t(((oc / oc_bn * c.kernel_h + kh) * c.kernel_w + kw) * oc_bn + oc % oc_bn)];
    }
    return w[size_t(((((oc / oc_bn) * (Cg / ic_bn) + icg / ic_bn) * c.kernel_h + kh) * c.kernel_w + kw) * ic_bn *
                        oc_bn +
                    (icg % ic_bn) * oc_bn + oc % oc_bn)];
  };
  std::vector<float> out(size_t(info.buffers[size_t(oi)].num_elements()));
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t oc = 0; oc < c.out_channels; ++oc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t g = oc / Kg;
          double acc = 0;
          for (int64_t icg = 0; icg < Cg; ++icg)
            for (int64_t kh = 0; kh < c.kernel_h; ++kh)
              for (int64_t kw = 0; kw < c.kernel_w; ++kw) {
                int64_t ih = oh * c.stride_h - c.pad_top + kh * c.dilation_h;
                int64_t iw = ow * c.stride_w - c.pad_left + kw * c.dilation_w;
                if (ih < 0 || ih >= c.height || iw < 0 || iw >= c.width) continue;
                acc += double(in_at(n, g * Cg + icg, ih, iw)) * double(w_at(oc, icg, kh, kw));
              }
          size_t o = size_t((((n * (c.out_channels / oc_bn) + oc / oc_bn) * OH + oh) * OW + ow) * oc_bn + oc % oc_bn);
          out[o] = EpiAt(float(acc), spec, info, args, size_t(oc), o);
        }
  return out;
}

// Winograd with weights already transformed (U = G g G^T: [alpha, alpha, K, C] for the CUDA
// template, [alpha, alpha, K/oc_bn, C/ic_bn, ic_bn, oc_bn] for the CPU one; the tile m is
// alpha - 2): the definition computed naively in double, tile by tile (V = B^T d B,
// M = sum_c U (.) V, Y = A^T M A), in whatever layout the data and output buffers declare.
// winograd_test.cc checks the transforms against direct convolution.
std::vector<float> WinogradReference(const KernelSpec& spec, const KernelInfo& info, const Buffers& args) {
  const auto& c = spec.workload.conv;
  const int wi = Find(info, "weight");
  const auto& ushape = info.buffers[size_t(wi)].shape;
  const compiler::WinogradMatrices& wm = **compiler::WinogradFor(int(ushape[0]) - 2);
  const int m = wm.m, alpha = wm.alpha;
  const auto& data = args[size_t(Find(info, "input"))];
  const auto& u = args[size_t(wi)];
  const int oi = Find(info, "output");
  const auto& dshape = info.buffers[0].shape;
  const auto& oshape = info.buffers[size_t(oi)].shape;
  const int64_t ic_bn = dshape.size() == 5 ? dshape[4] : 1, oc_bn = oshape.size() == 5 ? oshape[4] : 1;
  const int64_t OH = c.out_height(), OW = c.out_width(), C = c.in_channels, K = c.out_channels;
  auto in_at = [&](int64_t n, int64_t ch, int64_t h, int64_t x) {
    return data[size_t((((n * (C / ic_bn) + ch / ic_bn) * c.height + h) * c.width + x) * ic_bn + ch % ic_bn)];
  };
  auto u_at = [&](int e, int f, int64_t k, int64_t ch) {
    return u[size_t((((e * alpha + f) * (K / oc_bn) + k / oc_bn) * C + ch) * oc_bn + k % oc_bn)];
  };
  std::vector<float> out(size_t(info.buffers[size_t(oi)].num_elements()));
  std::vector<double> v(size_t(C * alpha * alpha));
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t th = 0; th * m < OH; ++th)
      for (int64_t tw = 0; tw * m < OW; ++tw) {
        for (int64_t ch = 0; ch < C; ++ch) {
          double d[8][8];
          for (int r = 0; r < alpha; ++r)
            for (int q = 0; q < alpha; ++q) {
              int64_t h = th * m + r - c.pad_top, x = tw * m + q - c.pad_left;
              d[r][q] = h < 0 || h >= c.height || x < 0 || x >= c.width ? 0.0 : in_at(n, ch, h, x);
            }
          for (int e = 0; e < alpha; ++e)
            for (int f = 0; f < alpha; ++f) {
              double acc = 0;
              for (int r = 0; r < alpha; ++r)
                for (int q = 0; q < alpha; ++q) acc += wm.b(r, e) * d[r][q] * wm.b(q, f);
              v[size_t((ch * alpha + e) * alpha + f)] = acc;
            }
        }
        for (int64_t k = 0; k < K; ++k) {
          double mm[8][8];
          for (int e = 0; e < alpha; ++e)
            for (int f = 0; f < alpha; ++f) {
              double acc = 0;
              for (int64_t ch = 0; ch < C; ++ch)
                acc += double(u_at(e, f, k, ch)) * v[size_t((ch * alpha + e) * alpha + f)];
              mm[e][f] = acc;
            }
          for (int a = 0; a < m; ++a)
            for (int b = 0; b < m; ++b) {
              const int64_t oh = th * m + a, ow = tw * m + b;
              if (oh >= OH || ow >= OW) continue;
              double y = 0;
              for (int r = 0; r < alpha; ++r)
                for (int q = 0; q < alpha; ++q) y += wm.a(r, a) * mm[r][q] * wm.a(q, b);
              size_t o = size_t((((n * (K / oc_bn) + k / oc_bn) * OH + oh) * OW + ow) * oc_bn + k % oc_bn);
              out[o] = EpiAt(float(y), spec, info, args, size_t(k), o);
            }
        }
      }
  return out;
}

std::vector<float> DenseReference(const KernelSpec& spec, const KernelInfo& info, const Buffers& args) {
  const auto& d = spec.workload.dense;
  const auto& data = args[0];
  const auto& w = args[1];
  const auto& wshape = info.buffers[1].shape;
  bool packed = spec.workload.implementation == "dense_pack";
  std::vector<float> out(size_t(d.batch * d.out_features));
  for (int64_t n = 0; n < d.batch; ++n)
    for (int64_t o = 0; o < d.out_features; ++o) {
      double acc = 0;
      for (int64_t k = 0; k < d.in_features; ++k) {
        float wv = packed ? w[size_t(((o / wshape[2]) * d.in_features + k) * wshape[2] + o % wshape[2])]
                          : w[size_t(o * d.in_features + k)];
        acc += double(data[size_t(n * d.in_features + k)]) * double(wv);
      }
      size_t idx = size_t(n * d.out_features + o);
      out[idx] = EpiAt(float(acc), spec, info, args, size_t(o), idx);
    }
  return out;
}

// out[b, m, n] = sum_k a[b, m, k] * b[b, k, n], both operands inputs (arguments 0 and 1).
std::vector<float> BatchMatmulReference(const KernelSpec& spec, const KernelInfo& info, const Buffers& args) {
  const auto& p = spec.workload.batch_matmul;
  const auto& a = args[0];
  const auto& b = args[1];
  std::vector<float> out(size_t(p.batch * p.m * p.n));
  for (int64_t bi = 0; bi < p.batch; ++bi)
    for (int64_t m = 0; m < p.m; ++m)
      for (int64_t n = 0; n < p.n; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < p.k; ++k)
          acc += double(a[size_t((bi * p.m + m) * p.k + k)]) * b[size_t((bi * p.k + k) * p.n + n)];
        const size_t o = size_t((bi * p.m + m) * p.n + n);
        out[o] = EpiAt(float(acc), spec, info, args, size_t(n), o);
      }
  return out;
}

}  // namespace

Buffers RandomArguments(const KernelInfo& info, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const bool winograd = info.workload_key.find("winograd") != std::string::npos;
  Buffers args;
  for (const auto& b : info.buffers) {
    std::vector<float> v(size_t(b.num_elements()), 0.0f);
    if (b.role != "output") {
      for (float& x : v) x = dist(rng);
    }
    if (winograd && b.role == "weight") {
      // What a model passes: 3x3 filters [K, C, 3, 3] transformed for the kernel's tile
      // (alpha = shape[0]) and output-channel block (the last dimension of the CPU layout).
      const auto& shape = b.shape;
      const int64_t oc_block = shape.size() == 6 ? shape.back() : 1;
      const int64_t k = shape.size() == 6 ? shape[2] * oc_block : shape[2];
      const int64_t c = shape.size() == 6 ? shape[3] * shape[4] : shape[3];
      std::vector<float> filters(size_t(k * c * 9));
      for (float& x : filters) x = dist(rng);
      v = compiler::WinogradWeightTransform(filters, k, c, oc_block, **compiler::WinogradFor(int(shape[0]) - 2));
    }
    args.push_back(std::move(v));
  }
  return args;
}

std::vector<float> ReferenceOutput(const KernelSpec& spec, const KernelInfo& info, const Buffers& args) {
  if (spec.workload.is_dense()) return DenseReference(spec, info, args);
  if (spec.workload.is_batch_matmul()) return BatchMatmulReference(spec, info, args);
  if (spec.workload.implementation.find("winograd") != std::string::npos) return WinogradReference(spec, info, args);
  const bool depthwise = spec.workload.implementation.find("depthwise") != std::string::npos;
  return ConvReference(spec, info, args, depthwise);
}

compiler::Workload RandomWorkload(const std::string& template_name, std::mt19937_64& rng) {
  auto pick = [&](std::vector<int64_t> v) { return v[size_t(rng() % v.size())]; };
  compiler::Workload w;
  w.implementation = template_name;
  auto row = compiler::FindTemplateRow(template_name);
  if (row.ok()) w.op = (*row)->op;  // an unknown name stays a conv2d workload, refused where built
  if (w.is_dense()) {
    w.dense = {pick({1, 1, 2, 3}), pick({1, 7, 16, 33, 64, 100}), pick({1, 5, 16, 31, 48, 70})};
    return w;
  }
  if (w.is_batch_matmul()) {  // attention's shapes in small: odd token counts, head sizes
    w.batch_matmul = {pick({1, 2, 3, 4}), pick({1, 5, 8, 13, 17}), pick({1, 7, 16, 33}), pick({1, 5, 16, 19, 40})};
    return w;
  }
  auto& c = w.conv;
  c.batch = pick({1, 1, 1, 2});
  c.kernel_h = pick({1, 3, 3, 5});
  c.kernel_w = rng() % 4 == 0 ? pick({1, 3}) : c.kernel_h;
  c.stride_h = c.stride_w = pick({1, 1, 2});
  c.dilation_h = c.dilation_w = pick({1, 1, 1, 2});
  c.pad_top = pick({0, 1, 2});
  c.pad_left = pick({0, 1, 2});
  c.pad_bottom = rng() % 3 == 0 ? c.pad_top + 1 : c.pad_top;
  c.pad_right = c.pad_left;
  c.height = pick({5, 7, 8, 11, 14});
  c.width = pick({5, 6, 9, 13, 16});
  if (template_name.find("depthwise") != std::string::npos) {
    c.in_channels = c.out_channels = c.groups = pick({3, 8, 16, 24, 32});
  } else {
    c.groups = pick({1, 1, 1, 2, 4});
    c.in_channels = c.groups * pick({1, 2, 3, 4, 8, 16});
    c.out_channels = c.groups * pick({1, 3, 4, 8, 16, 32});
  }
  if (template_name.find("winograd") != std::string::npos) {  // what Winograd computes: 3x3, stride 1
    c.kernel_h = c.kernel_w = 3;
    c.stride_h = c.stride_w = c.dilation_h = c.dilation_w = 1;
    c.groups = 1;
    c.in_channels = pick({1, 3, 4, 8, 16, 32});
    c.out_channels = pick({1, 3, 4, 8, 16, 32});
  }
  // Keep the kernel inside the padded input.
  while (c.out_height() < 1 || c.out_width() < 1) {
    c.height += 3;
    c.width += 3;
  }
  return w;
}

Epilogue RandomEpilogue(std::mt19937_64& rng) {
  Epilogue e;
  e.bias = rng() % 2 == 0;
  e.residual = rng() % 3 == 0;
  e.activation = static_cast<Activation>(rng() % 7);  // kNone .. kGeluTanh
  e.clip_min = -0.5f;
  e.clip_max = 0.75f;
  return e;
}

}  // namespace tunefarm::testing
