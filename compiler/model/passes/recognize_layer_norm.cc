#include "compiler/model/passes/recognize_layer_norm.h"

#include <optional>
#include <string>

#include "compiler/graph/graph_util.h"

namespace tunefarm::graph {
namespace {

class Matcher {
 public:
  explicit Matcher(const Graph& g) : g_(g), uses_(CountUses(g)), readers_(g.values.size()) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (int in : g.nodes[i].inputs) {
        if (in >= 0) readers_[size_t(in)].push_back(i);
      }
    }
  }

  struct Chain {
    int x = -1, gamma = -1, beta = -1;
    int64_t axis = 0;
    float epsilon = 0;
    size_t last = 0;
    std::vector<size_t> nodes;
  };

  // The chain whose first ReduceMean is node `mean`, or nullopt.
  std::optional<Chain> Match(size_t mean) const {
    Chain c;
    const Node& m = g_.nodes[mean];
    if (m.op_type != "ReduceMean" || m.inputs.empty() || m.outputs.size() != 1) return std::nullopt;
    c.x = m.inputs[0];
    const Value& xv = g_.values[size_t(c.x)];
    if (xv.dtype != DataType::kFloat32 || xv.shape.empty()) return std::nullopt;
    const std::optional<int64_t> axis = TrailingAxes(m, xv.shape.size());
    if (!axis) return std::nullopt;
    c.axis = *axis;
    c.nodes = {mean};
    // d = x - m, read by the Pow and the Div only.
    const auto sub = Single(m.outputs[0], "Sub");
    if (!sub || g_.nodes[*sub].inputs != std::vector<int>{c.x, m.outputs[0]}) return std::nullopt;
    c.nodes.push_back(*sub);
    const int d = g_.nodes[*sub].outputs[0];
    if (IsGraphOutput(g_, d) || readers_[size_t(d)].size() != 2 || uses_[size_t(d)] != 2) return std::nullopt;
    std::optional<size_t> pow, div;
    for (size_t r : readers_[size_t(d)]) {
      const Node& n = g_.nodes[r];
      if (n.op_type == "Pow" && n.inputs.size() == 2 && n.inputs[0] == d &&
          ScalarConstant(g_, n.inputs[1], xv.shape.size()) == 2.0f)
        pow = r;
      if (n.op_type == "Div" && n.inputs.size() == 2 && n.inputs[0] == d) div = r;
    }
    if (!pow || !div) return std::nullopt;
    c.nodes.push_back(*pow);
    // v = ReduceMean(d^2, the same axes); Sqrt(v + eps).
    const auto var = Single(g_.nodes[*pow].outputs[0], "ReduceMean");
    if (!var || TrailingAxes(g_.nodes[*var], xv.shape.size()) != axis || g_.nodes[*var].GetInt("keepdims", 1) != 1 ||
        m.GetInt("keepdims", 1) != 1) {
      return std::nullopt;
    }
    c.nodes.push_back(*var);
    const auto add = Single(g_.nodes[*var].outputs[0], "Add");
    if (!add) return std::nullopt;
    const std::optional<float> eps =
        ScalarConstant(g_, OtherInput(g_.nodes[*add], g_.nodes[*var].outputs[0]), xv.shape.size());
    if (!eps || *eps < 0) return std::nullopt;
    c.epsilon = *eps;
    c.nodes.push_back(*add);
    const auto sqrt = Single(g_.nodes[*add].outputs[0], "Sqrt");
    if (!sqrt || g_.nodes[*div].inputs[1] != g_.nodes[*sqrt].outputs[0] || !OnlyUse(g_.nodes[*sqrt].outputs[0])) {
      return std::nullopt;
    }
    c.nodes.push_back(*sqrt);
    c.nodes.push_back(*div);
    c.last = *div;
    // [* gamma] [+ beta]: constants over the normalized axes.
    int out = g_.nodes[*div].outputs[0];
    if (const auto mul = Single(out, "Mul"); mul && Affine(OtherInput(g_.nodes[*mul], out), xv.shape, c.axis)) {
      c.gamma = OtherInput(g_.nodes[*mul], out);
      c.nodes.push_back(*mul);
      c.last = *mul;
      out = g_.nodes[*mul].outputs[0];
      if (const auto plus = Single(out, "Add"); plus && Affine(OtherInput(g_.nodes[*plus], out), xv.shape, c.axis)) {
        c.beta = OtherInput(g_.nodes[*plus], out);
        c.nodes.push_back(*plus);
        c.last = *plus;
      }
    }
    return c;
  }

 private:
  // The first axis of a reduction over [axis, rank), or nullopt for other axes.
  std::optional<int64_t> TrailingAxes(const Node& n, size_t rank) const {
    std::vector<int64_t> axes = n.GetInts("axes");
    if (n.inputs.size() > 1 && n.inputs[1] >= 0) {  // opset 18: a constant input
      const auto& c = g_.values[size_t(n.inputs[1])].constant;
      if (!c || c->dtype != DataType::kInt64) return std::nullopt;
      axes = c->i64;
    }
    if (axes.empty()) return std::nullopt;
    std::vector<bool> reduced(rank, false);
    for (int64_t a : axes) {
      const int64_t axis = a < 0 ? a + int64_t(rank) : a;
      if (axis < 0 || axis >= int64_t(rank)) return std::nullopt;
      reduced[size_t(axis)] = true;
    }
    const int64_t first = int64_t(rank) - int64_t(axes.size());
    for (size_t d = 0; d < rank; ++d) {
      if (reduced[d] != (int64_t(d) >= first)) return std::nullopt;
    }
    return first;
  }
  // A float32 constant over the normalized axes [axis, rank) of x (LayerNormalization's scale and
  // bias: no extent along the other axes, not even 1s there).
  bool Affine(int value, const std::vector<int64_t>& x, int64_t axis) const {
    if (value < 0) return false;
    const Value& v = g_.values[size_t(value)];
    if (!v.constant || v.dtype != DataType::kFloat32 || int64_t(v.shape.size()) > int64_t(x.size()) - axis)
      return false;
    for (size_t i = 0; i < v.shape.size(); ++i) {
      const int64_t want = x[x.size() - v.shape.size() + i];
      if (v.shape[i] != want && v.shape[i] != 1) return false;
    }
    return true;
  }
  bool OnlyUse(int value) const { return uses_[size_t(value)] == 1 && !IsGraphOutput(g_, value); }
  // The single reader of `value` when it has op `op` and one output.
  std::optional<size_t> Single(int value, const char* op) const {
    if (!OnlyUse(value) || readers_[size_t(value)].size() != 1) return std::nullopt;
    const size_t r = readers_[size_t(value)][0];
    if (g_.nodes[r].op_type != op || g_.nodes[r].outputs.size() != 1) return std::nullopt;
    return r;
  }

  const Graph& g_;
  std::vector<int> uses_;
  std::vector<std::vector<size_t>> readers_;
};

}  // namespace

int RecognizeLayerNorm(Graph* g) {
  int replaced = 0;
  // One matcher (its use counts and readers) until a chain is replaced: building it per node made
  // the pass quadratic in the graph (a 20,000-node chain took most of a minute).
  std::optional<Matcher> matcher;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (!matcher) matcher.emplace(*g);
    std::optional<Matcher::Chain> c = matcher->Match(i);
    if (!c) continue;
    matcher.reset();  // the graph changes below
    const std::vector<int64_t>& x = g->values[size_t(c->x)].shape;
    if (c->gamma < 0) {  // LayerNormalization needs a scale: ones over the normalized axes
      ConstantData ones{DataType::kFloat32, std::vector<int64_t>(x.begin() + c->axis, x.end()), {}, {}};
      ones.f32.assign(size_t(ones.num_elements()), 1.0f);
      c->gamma = g->AddConstant(g->values[size_t(g->nodes[c->last].outputs[0])].name + ".scale", std::move(ones));
    }
    // The last node computes the normalization; the others are left without inputs or outputs
    // (dead, for RemoveDeadNodes), in place so the node order stays topological.
    for (size_t k : c->nodes) {
      Node& n = g->nodes[k];
      if (k == c->last) {
        n.op_type = "LayerNormalization";
        n.inputs = {c->x, c->gamma};
        if (c->beta >= 0) n.inputs.push_back(c->beta);
        Attribute axis, eps;
        axis.kind = Attribute::kInt;
        axis.i = c->axis;
        eps.kind = Attribute::kFloat;
        eps.f = c->epsilon;
        n.attrs = {{"axis", axis}, {"epsilon", eps}};
      } else {
        n.op_type = "Identity";
        n.inputs.clear();
        n.outputs.clear();
      }
    }
    ++replaced;
  }
  return replaced;
}

}  // namespace tunefarm::graph
