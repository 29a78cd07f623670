#include "compiler/model/fold_constants.h"

#include <cstring>

#include "compiler/model/compile_graph.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm::compiler {
namespace {

// Folding a node whose output is larger than this would grow the artifact instead of shrinking the
// work (e.g. an Expand of a scalar); such nodes stay.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

graph::ConstantData FromBytes(graph::DataType dtype, const std::vector<int64_t>& shape, const void* data) {
  graph::ConstantData c{dtype, shape, {}, {}};
  const int64_t n = c.num_elements();
  if (dtype == graph::DataType::kFloat32) {
    c.f32.resize(size_t(n));
    std::memcpy(c.f32.data(), data, size_t(n) * 4);
    return c;
  }
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case graph::DataType::kInt64: {
        int64_t v;
        std::memcpy(&v, bytes + i * 8, 8);
        c.i64.push_back(v);
        break;
      }
      case graph::DataType::kInt32: {
        int32_t v;
        std::memcpy(&v, bytes + i * 4, 4);
        c.i64.push_back(v);
        break;
      }
      case graph::DataType::kInt8: c.i64.push_back(int8_t(bytes[i])); break;
      default: c.i64.push_back(bytes[i]); break;
    }
  }
  return c;
}

// Compiles the one node on constants for the host and runs it; false when it cannot be.
bool Evaluate(const graph::Graph& g, const graph::Node& n, std::vector<graph::ConstantData>* outputs) {
  graph::Graph mini;
  mini.opset = g.opset;
  graph::Node copy = n;
  copy.guards.clear();  // its conditions are values of the whole graph, and a constant runs anyway
  for (int& in : copy.inputs) {
    if (in < 0) continue;
    graph::Value v = g.values[size_t(in)];
    v.producer = -1;
    in = mini.AddValue(std::move(v));
  }
  for (int& out : copy.outputs) {
    graph::Value v = g.values[size_t(out)];
    v.edge_dtype.reset();  // read back as stored, not converted to the model's output type
    if (v.shape_known) {
      int64_t elements = 1;
      for (int64_t d : v.shape) elements *= d;
      if (elements > kMaxFoldedElements) return false;
    }
    v.producer = 0;
    out = mini.AddValue(std::move(v));
    mini.outputs.push_back(out);
  }
  mini.nodes.push_back(std::move(copy));
  CompileOptions options;
  options.opt_level = 0;
  options.warn = [](const std::string&) {};
  auto artifact = CompileGraph(std::move(mini), "constant folding", HostTarget(), options);
  if (!artifact.ok()) return false;
  auto ex = runtime::Executor::Load(std::move(*artifact));
  if (!ex.ok() || !(*ex)->Run().ok()) return false;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const graph::Value& v = g.values[size_t(n.outputs[k])];
    outputs->push_back(FromBytes(v.dtype, (*ex)->outputs()[k].shape, (*ex)->Output(k)));
  }
  return true;
}

}  // namespace

Result<int> FoldConstants(graph::Graph* g) {
  int folded = 0;
  for (graph::Node& n : g->nodes) {
    if (n.outputs.empty()) continue;
    bool inputs_constant = !n.inputs.empty(), outputs_constant = true;
    for (int in : n.inputs) inputs_constant = inputs_constant && (in < 0 || g->values[size_t(in)].constant);
    for (int out : n.outputs) outputs_constant = outputs_constant && g->values[size_t(out)].constant;
    if (!inputs_constant || outputs_constant) continue;
    std::vector<graph::ConstantData> values;
    if (!Evaluate(*g, n, &values)) continue;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      graph::Value& v = g->values[size_t(n.outputs[k])];
      v.constant = std::make_shared<const graph::ConstantData>(std::move(values[k]));
      v.shape = v.constant->shape;
      v.shape_known = true;
    }
    ++folded;
  }
  return folded;
}

}  // namespace tunefarm::compiler
