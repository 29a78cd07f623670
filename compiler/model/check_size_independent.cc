#include "compiler/model/check_size_independent.h"

#include <algorithm>
#include <string>

namespace tunefarm::compiler {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool SameData(const graph::ConstantData& a, const graph::ConstantData& b, bool except_first) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.f32.size() != b.f32.size() || a.i64.size() != b.i64.size()) {
    return false;
  }
  const size_t from = except_first ? 1 : 0;
  return std::equal(a.f32.begin() + std::min(from, a.f32.size()), a.f32.end(),
                    b.f32.begin() + std::min(from, b.f32.size())) &&
         std::equal(a.i64.begin() + std::min(from, a.i64.size()), a.i64.end(),
                    b.i64.begin() + std::min(from, b.i64.size()));
}

}  // namespace

std::vector<int64_t> ProbeSizes(const graph::SymbolicDim& dim) {
  std::vector<int64_t> sizes;
  for (int64_t s : {std::max<int64_t>(dim.min, 2), dim.max - 1}) {
    if (s < dim.max && std::find(sizes.begin(), sizes.end(), s) == sizes.end()) sizes.push_back(s);
  }
  if (sizes.empty()) sizes.push_back(dim.min);
  return sizes;
}

graph::Graph WithSize(graph::Graph g, int64_t size) {
  for (int in : g.symbolic_dim->inputs) g.values[size_t(in)].shape[0] = size;
  return g;
}

Status CheckSizeIndependent(const graph::Graph& at_max, const graph::Graph& at_size, int64_t size) {
  const graph::SymbolicDim& dim = *at_max.symbolic_dim;
  const std::string sizes = "'" + dim.name + "' = " + std::to_string(dim.max) + " and " + std::to_string(size);
  const std::string fix = "; this model cannot keep '" + dim.name + "' symbolic: give it one size with --input-shape";
  if (at_max.nodes.size() != at_size.nodes.size()) {
    return Status::InvalidArgument("the graph optimizes to " + std::to_string(at_max.nodes.size()) + " and " +
                                   std::to_string(at_size.nodes.size()) + " nodes at " + sizes + fix);
  }
  for (size_t i = 0; i < at_max.nodes.size(); ++i) {
    const graph::Node& n = at_max.nodes[i];
    const graph::Node& m = at_size.nodes[i];
    if (n.op_type != m.op_type || n.inputs.size() != m.inputs.size() || n.outputs.size() != m.outputs.size()) {
      return Status::InvalidArgument("the graph's nodes differ at " + sizes + " from " + at_max.Describe(n) + " on" +
                                     fix);
    }
    // A node folded into constants is never lowered (Shape -> Gather -> Concat): what matters is
    // where its constants are read by a node that runs.
    bool folded = !n.outputs.empty();
    for (int o : n.outputs) folded = folded && at_max.values[size_t(o)].constant != nullptr;
    if (folded) continue;
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      if ((n.inputs[j] < 0) != (m.inputs[j] < 0)) {
        return Status::InvalidArgument(at_max.Describe(n) + ": its inputs differ at " + sizes + fix);
      }
      if (n.inputs[j] < 0) continue;
      const graph::Value& a = at_max.values[size_t(n.inputs[j])];
      const graph::Value& b = at_size.values[size_t(m.inputs[j])];
      if ((a.constant == nullptr) != (b.constant == nullptr)) {
        return Status::InvalidArgument(at_max.Describe(n) + ": its input " + std::to_string(j) + " ('" + a.name +
                                       "') is a constant at one of " + sizes + " only" + fix);
      }
      const bool reshape_target = n.op_type == "Reshape" && j == 1;
      if (a.constant && !SameData(*a.constant, *b.constant, reshape_target)) {
        return Status::InvalidArgument(at_max.Describe(n) + ": its input " + std::to_string(j) + " ('" + a.name +
                                       "') is folded from the size of '" + dim.name + "' (it differs at " + sizes +
                                       ")" + fix);
      }
    }
    for (size_t j = 0; j < n.outputs.size(); ++j) {
      const graph::Value& a = at_max.values[size_t(n.outputs[j])];
      const graph::Value& b = at_size.values[size_t(m.outputs[j])];
      bool same = a.shape.size() == b.shape.size();
      for (size_t d = 1; same && d < a.shape.size(); ++d) same = a.shape[d] == b.shape[d];
      if (same && !a.shape.empty() && a.shape[0] != b.shape[0]) {
        same = a.shape[0] % dim.max == 0 && b.shape[0] == a.shape[0] / dim.max * size;
      }
      if (!same) {
        return Status::InvalidArgument(at_max.Describe(n) + ": its output '" + a.name + "' is " + ShapeText(a.shape) +
                                       " and " + ShapeText(b.shape) + " at " + sizes +
                                       ": only dimension 0 may follow '" + dim.name + "', as a multiple of it" + fix);
      }
    }
  }
  return Status::OK();
}

}  // namespace tunefarm::compiler
