#include "compiler/model/passes/conv_transpose_as_conv.h"

#include <utility>

#include "compiler/graph/graph_util.h"
#include "compiler/operators/conv_transpose_window.h"

namespace tunefarm::graph {
namespace {

using graph::Attribute;
using graph::ConstantData;
using graph::DataType;
using graph::Node;

Attribute Ints(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::kInts;
  a.ints = std::move(v);
  return a;
}

Attribute Int(int64_t v) {
  Attribute a;
  a.kind = Attribute::kInt;
  a.i = v;
  return a;
}

// The rewrite of node `index`, or an empty list when the identity does not apply to it.
std::vector<Node> Rewrite(graph::Graph* g, size_t index) {
  const Node n = g->nodes[index];
  if (n.op_type != "ConvTranspose" || n.inputs.size() < 2 || n.outputs.size() != 1) return {};
  const graph::Value x = g->values[size_t(n.inputs[0])];  // a copy: AddConstant grows g->values
  const auto w = g->values[size_t(n.inputs[1])].constant;
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const auto bias = has_bias ? g->values[size_t(n.inputs[2])].constant : nullptr;
  if (x.shape.size() != 4 || x.dtype != DataType::kFloat32 || !w || w->dtype != DataType::kFloat32 ||
      (has_bias && !bias))
    return {};
  auto window = operators::ParseConvTranspose(operators::NodeView(*g, n));
  if (!window.ok()) return {};
  const compute::ConvParams& p = window->params;
  const int64_t s = p.strides[0];
  // DepthToSpace interleaves square blocks only. A dilated window's taps leave most of each
  // phase's kernel zero (and none land in some phases where d and s share a factor): those keep
  // the direct kernel rather than multiply by zeros.
  if (p.strides[1] != s || p.dilations[0] != 1 || p.dilations[1] != 1) return {};
  const int64_t G = p.groups, C = w->shape[0], Og = w->shape[1], kh = w->shape[2], kw = w->shape[3];
  const int64_t Cg = C / G, O = Og * G;
  // Tap t of the window lands t past its input's position: in phase t % s, t / s output steps
  // further. Each phase is a plain convolution over the taps that land in it.
  const int64_t Kh = (kh + s - 1) / s, Kw = (kw + s - 1) / s;  // taps per phase
  const int64_t H = x.shape[2], W = x.shape[3];
  const int64_t full_h = (H + Kh - 1) * s, full_w = (W + Kw - 1) * s;  // the phases' extent
  const std::vector<int64_t>& out = window->out;
  const int64_t ph = p.pads_begin[0], pw = p.pads_begin[1];
  // Negative padding (a larger output_shape) or output_padding past the phases' extent reads
  // positions the identity does not produce: those keep the direct kernel.
  if (ph < 0 || pw < 0 || ph + out[0] > full_h || pw + out[1] > full_w) return {};

  // V[o*s*s + rh*s + rw, c % Cg, Kh-1-eh, Kw-1-ew] = W[c, o % Og, th, tw] with th = eh*s + rh
  // (flipped taps). Output channel o's phases are adjacent (DepthToSpace's CRD order), so a
  // group's channels stay contiguous and grouped windows are grouped convolutions.
  ConstantData v{DataType::kFloat32, {O * s * s, Cg, Kh, Kw}, {}, {}};
  v.f32.assign(size_t(v.num_elements()), 0.0f);
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t ol = 0; ol < Og; ++ol) {
      const int64_t o = (c / Cg) * Og + ol;
      for (int64_t th = 0; th < kh; ++th) {
        for (int64_t tw = 0; tw < kw; ++tw) {
          const int64_t rh = th % s, rw = tw % s;
          const int64_t jh = Kh - 1 - th / s, jw = Kw - 1 - tw / s;
          v.f32[size_t(((o * s * s + rh * s + rw) * Cg + c % Cg) * Kh * Kw + jh * Kw + jw)] =
              w->f32[size_t(((c * Og + ol) * kh + th) * kw + tw)];
        }
      }
    }
  }
  const std::string base = n.name.empty() ? g->values[size_t(n.outputs[0])].name : n.name;
  Node conv;
  conv.name = base + ".as_conv";
  conv.op_type = "Conv";
  conv.inputs = {n.inputs[0], g->AddConstant(base + ".phase_weights", std::move(v))};
  if (has_bias) {
    ConstantData b{DataType::kFloat32, {O * s * s}, {}, {}};
    for (float value : bias->f32) b.f32.insert(b.f32.end(), size_t(s * s), value);
    conv.inputs.push_back(g->AddConstant(base + ".phase_bias", std::move(b)));
  }
  conv.attrs = {{"kernel_shape", Ints({Kh, Kw})},
                {"pads", Ints({Kh - 1, Kw - 1, Kh - 1, Kw - 1})},
                {"strides", Ints({1, 1})},
                {"dilations", Ints({1, 1})},
                {"group", Int(G)}};
  const int64_t N = x.shape[0];
  const bool crop = ph != 0 || pw != 0 || out[0] != full_h || out[1] != full_w;
  conv.outputs = {s == 1 && !crop ? n.outputs[0]
                                  : graph::AddFloatValue(g, base + ".phases", {N, O * s * s, H + Kh - 1, W + Kw - 1})};
  std::vector<Node> nodes = {conv};
  int phases = conv.outputs[0];
  if (s > 1) {
    Node d2s;
    d2s.name = base + ".interleave";
    d2s.op_type = "DepthToSpace";
    d2s.inputs = {phases};
    Attribute crd;
    crd.kind = Attribute::kString;
    crd.s = "CRD";
    d2s.attrs = {{"blocksize", Int(s)}, {"mode", crd}};
    d2s.outputs = {crop ? graph::AddFloatValue(g, base + ".interleaved", {N, O, full_h, full_w}) : n.outputs[0]};
    phases = d2s.outputs[0];
    nodes.push_back(d2s);
  }
  if (crop) {
    Node slice;
    slice.name = base + ".crop";
    slice.op_type = "Slice";
    const std::vector<int64_t> starts = {ph, pw}, ends = {ph + out[0], pw + out[1]}, axes = {2, 3};
    slice.inputs = {phases};
    if (g->opset > 0 && g->opset < 10) {  // Slice-1 reads attributes, Slice-10 on inputs
      slice.attrs = {{"starts", Ints(starts)}, {"ends", Ints(ends)}, {"axes", Ints(axes)}};
    } else {
      for (const auto& [role, list] :
           {std::pair{".crop_starts", &starts}, {".crop_ends", &ends}, {".crop_axes", &axes}}) {
        slice.inputs.push_back(g->AddConstant(base + role, ConstantData{DataType::kInt64, {2}, {}, *list}));
      }
    }
    slice.outputs = {n.outputs[0]};
    nodes.push_back(slice);
  }
  return nodes;
}

}  // namespace

Result<int> ConvTransposeAsConv(graph::Graph* g) { return graph::RewriteNodes(g, Rewrite); }

}  // namespace tunefarm::graph
