#include "compiler/model/passes/trim_dead_conv_taps.h"

#include <algorithm>
#include <vector>

namespace tunefarm::graph {
namespace {

using graph::ConstantData;
using graph::DataType;

struct TapRange {
  int64_t first = 0, last = 0;  // the kept taps, inclusive
};

// The taps of one axis to keep: the live ones, widened so neither pad goes below zero.
TapRange LiveTaps(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t pad_begin, int64_t pad_end) {
  int64_t first = k, last = -1;
  for (int64_t j = 0; j < k; ++j) {
    // The positions tap j reads run from j*d - p (o = 0) to (out-1)*s + j*d - p, step s.
    const int64_t lo = j * d - pad_begin, hi = (out - 1) * s + j * d - pad_begin;
    bool live = false;
    if (hi >= 0 && lo < in) {
      // The first o with o*s + lo >= 0, and whether that position is below in.
      const int64_t o = lo >= 0 ? 0 : (-lo + s - 1) / s;
      live = o < out && o * s + lo < in;
    }
    if (live) {
      first = std::min(first, j);
      last = std::max(last, j);
    }
  }
  if (last < 0) return {0, k - 1};  // nothing reads the image (an all-padding output): leave it
  first = std::min(first, pad_begin / d);
  last = std::max(last, k - 1 - pad_end / d);
  return {first, last};
}

}  // namespace

Result<int> TrimDeadConvTaps(graph::Graph* g) {
  int trimmed = 0;
  for (graph::Node& n : g->nodes) {
    if (n.op_type != "Conv" || n.inputs.size() < 2 || n.outputs.size() != 1) continue;
    const graph::Value& x = g->values[size_t(n.inputs[0])];
    const auto w = g->values[size_t(n.inputs[1])].constant;
    const graph::Value& y = g->values[size_t(n.outputs[0])];
    if (x.shape.size() != 4 || y.shape.size() != 4 || !w || w->dtype != DataType::kFloat32 || w->shape.size() != 4)
      continue;
    const std::vector<int64_t> strides = n.GetInts("strides", {1, 1}), dilations = n.GetInts("dilations", {1, 1});
    const std::vector<int64_t> pads = n.GetInts("pads", {0, 0, 0, 0});
    if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 ||
        n.GetString("auto_pad", "NOTSET") != "NOTSET")
      continue;
    const int64_t kh = w->shape[2], kw = w->shape[3];
    const TapRange rh = LiveTaps(x.shape[2], y.shape[2], kh, strides[0], dilations[0], pads[0], pads[2]);
    const TapRange rw = LiveTaps(x.shape[3], y.shape[3], kw, strides[1], dilations[1], pads[1], pads[3]);
    const int64_t nkh = rh.last - rh.first + 1, nkw = rw.last - rw.first + 1;
    if (nkh == kh && nkw == kw) continue;
    ConstantData trimmed_w{DataType::kFloat32, {w->shape[0], w->shape[1], nkh, nkw}, {}, {}};
    trimmed_w.f32.reserve(size_t(trimmed_w.num_elements()));
    for (int64_t oc = 0; oc < w->shape[0] * w->shape[1]; ++oc) {
      for (int64_t j = rh.first; j <= rh.last; ++j) {
        for (int64_t i = rw.first; i <= rw.last; ++i) trimmed_w.f32.push_back(w->f32[size_t((oc * kh + j) * kw + i)]);
      }
    }
    const std::string name = g->values[size_t(n.inputs[1])].name + ".live_taps";
    n.inputs[1] = g->AddConstant(name, std::move(trimmed_w));  // `x`, `y` are not used past here
    graph::Attribute& p = n.attrs["pads"];
    p.kind = graph::Attribute::kInts;
    p.ints = {pads[0] - rh.first * dilations[0], pads[1] - rw.first * dilations[1],
              pads[2] - (kh - 1 - rh.last) * dilations[0], pads[3] - (kw - 1 - rw.last) * dilations[1]};
    graph::Attribute& ks = n.attrs["kernel_shape"];
    ks.kind = graph::Attribute::kInts;
    ks.ints = {nkh, nkw};
    if (nkh == 1 || nkw == 1) {  // a single tap has no dilation: the workload says so (D1)
      graph::Attribute& dil = n.attrs["dilations"];
      dil.kind = graph::Attribute::kInts;
      dil.ints = {nkh == 1 ? 1 : dilations[0], nkw == 1 ? 1 : dilations[1]};
    }
    ++trimmed;
  }
  return trimmed;
}

}  // namespace tunefarm::graph
