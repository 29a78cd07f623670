#include "compiler/frontend/input_shapes.h"

#include <charconv>
#include <set>

namespace tunefarm {
namespace compiler {

std::string InputShape::ToString() const {
  std::string s = name + ":";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

Result<InputShape> ParseInputShape(std::string_view text) {
  const std::string quoted = "--input-shape '" + std::string(text) + "'";
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return Status::InvalidArgument(quoted + ": expected NAME:DIMS, such as data:1x3x224x224");
  }
  InputShape shape;
  shape.name = std::string(text.substr(0, colon));
  std::string_view dims = text.substr(colon + 1);
  while (true) {
    const size_t x = dims.find('x');
    const std::string_view part = dims.substr(0, x);
    int64_t d = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || d <= 0 || d >= (int64_t(1) << 31)) {
      return Status::InvalidArgument(quoted + ": dimension '" + std::string(part) +
                                     "' is not a positive integer below 2^31 (dimensions are separated by 'x')");
    }
    shape.dims.push_back(d);
    if (x == std::string_view::npos) break;
    dims = dims.substr(x + 1);
  }
  return shape;
}

}  // namespace compiler

namespace frontend {

namespace {

std::string DimsText(const graph::Value& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.shape.size(); ++i) {
    if (i) s += ", ";
    const bool named = i < v.dim_params.size() && !v.dim_params[i].empty();
    s += v.shape[i] >= 0 ? std::to_string(v.shape[i]) : named ? v.dim_params[i] : "?";
  }
  return s + "]";
}

std::string SymbolicInputMessage(const graph::Value& v) {
  std::string symbolic, example = v.name + ":";
  for (size_t i = 0; i < v.shape.size(); ++i) {
    example += (i ? "x" : "") + (v.shape[i] >= 0 ? std::to_string(v.shape[i]) : std::string("?"));
    if (v.shape[i] >= 0) continue;
    const bool named = i < v.dim_params.size() && !v.dim_params[i].empty();
    symbolic += (symbolic.empty() ? "" : ", ") + std::to_string(i) + (named ? " (" + v.dim_params[i] + ")" : "");
  }
  if (v.shape.empty()) {
    return "graph input '" + v.name + "' has no shape in the model; give it one with --input-shape " + v.name +
           ":D0xD1x...";
  }
  return "graph input '" + v.name + "' has symbolic dimensions " + symbolic + " in " + DimsText(v) +
         "; fix them with --input-shape " + example + " (each ? a size)";
}

}  // namespace

Status ApplyInputShapes(graph::Graph* g, const std::vector<compiler::InputShape>& shapes) {
  std::set<std::string> given;
  for (const compiler::InputShape& shape : shapes) {
    const std::string flag = "--input-shape " + shape.ToString();
    if (!given.insert(shape.name).second) {
      return Status::InvalidArgument("--input-shape gives input '" + shape.name + "' twice");
    }
    graph::Value* input = nullptr;
    std::string names;
    for (int idx : g->inputs) {
      graph::Value& v = g->values[size_t(idx)];
      names += (names.empty() ? "" : ", ") + v.name;
      if (v.name == shape.name) input = &v;
    }
    if (!input) {
      return Status::InvalidArgument(flag + ": the model has no graph input '" + shape.name +
                                     "' (its inputs: " + (names.empty() ? "none" : names) + ")");
    }
    if (!input->shape.empty() && input->shape.size() != shape.dims.size()) {
      return Status::InvalidArgument(flag + ": input '" + shape.name + "' has rank " +
                                     std::to_string(input->shape.size()) + " " + DimsText(*input) + ", not " +
                                     std::to_string(shape.dims.size()));
    }
    for (size_t d = 0; d < input->shape.size(); ++d) {
      if (input->shape[d] >= 0 && input->shape[d] != shape.dims[d]) {
        return Status::InvalidArgument(flag + ": dimension " + std::to_string(d) + " of input '" + shape.name +
                                       "' is fixed by the model at " + std::to_string(input->shape[d]) + " " +
                                       DimsText(*input) + ", not " + std::to_string(shape.dims[d]));
      }
    }
    input->shape = shape.dims;
    input->shape_known = true;
  }
  // Every input must now be fixed: the message names each symbolic dimension and the flag.
  for (int idx : g->inputs) {
    const graph::Value& v = g->values[size_t(idx)];
    if (!v.shape_known) return Status::InvalidArgument(SymbolicInputMessage(v));
  }
  return Status::OK();
}

}  // namespace frontend
}  // namespace tunefarm
