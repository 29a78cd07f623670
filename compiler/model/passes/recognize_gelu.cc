#include "compiler/model/passes/recognize_gelu.h"

#include <cmath>
#include <optional>

#include "compiler/graph/graph_util.h"

namespace tunefarm::graph {
namespace {

bool Near(std::optional<float> v, double want) { return v && std::fabs(double(*v) - want) <= 1e-4 * std::fabs(want); }

struct Chain {
  int x = -1;                 // GELU's input
  size_t last = 0;            // the node whose output is GELU's
  std::vector<size_t> nodes;  // every node of the chain, `last` included
};

class Matcher {
 public:
  explicit Matcher(const Graph& g) : g_(g), uses_(CountUses(g)), reader_(g.values.size(), -1) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (int in : g.nodes[i].inputs) {
        if (in >= 0) reader_[size_t(in)] = int(i);  // meaningful only where uses_ is 1
      }
    }
  }

  // The chain whose Erf is node `erf`, or nullopt.
  std::optional<Chain> Match(size_t erf) const {
    const Node& e = g_.nodes[erf];
    if (e.op_type != "Erf" || e.inputs.size() != 1 || e.outputs.size() != 1) return std::nullopt;
    // x / sqrt(2), or x * (1 / sqrt(2)).
    const int scaled = e.inputs[0];
    const Node* s = Producer(scaled);
    if (!s || !OnlyUse(scaled) || s->inputs.size() != 2) return std::nullopt;
    Chain c;
    // Constants must not broadcast x to a higher rank (Gelu(x) keeps x's shape).
    auto rank = [&](int v) { return v < 0 ? size_t(0) : g_.values[size_t(v)].shape.size(); };
    if (s->op_type == "Div" && Near(ScalarConstant(g_, s->inputs[1], rank(s->inputs[0])), std::sqrt(2.0))) {
      c.x = s->inputs[0];
    } else if (s->op_type == "Mul") {
      for (size_t k : {0, 1}) {
        if (c.x < 0 && Near(ScalarConstant(g_, s->inputs[k], rank(s->inputs[1 - k])), std::sqrt(0.5)))
          c.x = s->inputs[1 - k];
      }
    }
    if (c.x < 0) return std::nullopt;
    auto Scalar = [&, x_rank = rank(c.x)](int v) { return ScalarConstant(g_, v, x_rank); };
    c.nodes = {size_t(g_.values[size_t(scaled)].producer), erf};
    // Erf(...) + 1.
    const auto plus_one = Next(e.outputs[0], "Add");
    if (!plus_one || !Near(Scalar(OtherInput(g_.nodes[*plus_one], e.outputs[0])), 1.0)) return std::nullopt;
    c.nodes.push_back(*plus_one);
    // Times x, or times 0.5 * x; then times 0.5 when x came unhalved.
    const int sum = g_.nodes[*plus_one].outputs[0];
    const auto product = Next(sum, "Mul");
    if (!product) return std::nullopt;
    c.nodes.push_back(*product);
    const int factor = OtherInput(g_.nodes[*product], sum);
    if (factor == c.x) {
      const auto half = Next(g_.nodes[*product].outputs[0], "Mul");
      if (!half || !Near(Scalar(OtherInput(g_.nodes[*half], g_.nodes[*product].outputs[0])), 0.5)) return std::nullopt;
      c.nodes.push_back(*half);
      c.last = *half;
      return c;
    }
    const Node* h = Producer(factor);
    if (!h || !OnlyUse(factor) || h->op_type != "Mul" || !Near(Scalar(OtherInput(*h, c.x)), 0.5)) return std::nullopt;
    c.nodes.push_back(size_t(g_.values[size_t(factor)].producer));
    c.last = *product;
    return c;
  }

 private:
  const Node* Producer(int value) const {
    if (value < 0 || g_.values[size_t(value)].producer < 0) return nullptr;
    return &g_.nodes[size_t(g_.values[size_t(value)].producer)];
  }
  bool OnlyUse(int value) const { return uses_[size_t(value)] == 1 && !IsGraphOutput(g_, value); }
  // The single reader of `value` when it has op `op` and one output.
  std::optional<size_t> Next(int value, const char* op) const {
    if (!OnlyUse(value) || reader_[size_t(value)] < 0) return std::nullopt;
    const Node& n = g_.nodes[size_t(reader_[size_t(value)])];
    if (n.op_type != op || n.outputs.size() != 1) return std::nullopt;
    return size_t(reader_[size_t(value)]);
  }

  const Graph& g_;
  std::vector<int> uses_;
  std::vector<int> reader_;
};

}  // namespace

int RecognizeGelu(Graph* g) {
  int replaced = 0;
  // One matcher (its use counts and readers) until a chain is replaced: building it per node made
  // the pass quadratic in the graph.
  std::optional<Matcher> matcher;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (!matcher) matcher.emplace(*g);
    const std::optional<Chain> chain = matcher->Match(i);
    if (!chain || g->values[size_t(chain->x)].dtype != DataType::kFloat32) continue;
    matcher.reset();  // the graph changes below
    // The last node computes GELU from x; the others are left without inputs or outputs (dead, for
    // RemoveDeadNodes), in place so the node order stays topological.
    for (size_t k : chain->nodes) {
      Node& n = g->nodes[k];
      if (k == chain->last) {
        n.op_type = "Gelu";
        n.inputs = {chain->x};
        n.attrs.clear();
      } else {
        n.op_type = "Identity";
        n.inputs.clear();  // reads nothing: x's other readers see x used once (FuseEpilogues)
        n.outputs.clear();
      }
    }
    ++replaced;
  }
  return replaced;
}

}  // namespace tunefarm::graph
