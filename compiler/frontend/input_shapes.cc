#include "compiler/frontend/input_shapes.h"

#include <charconv>
#include <optional>
#include <set>

namespace tunefarm {
namespace compiler {

std::string InputShape::ToString() const {
  std::string s = name + ":";
  for (size_t i = 0; i < dims.size(); ++i) {
    s += (i ? "x" : "") + (is_range(i) ? std::to_string(min_dims[i]) + ".." : std::string()) + std::to_string(dims[i]);
  }
  return s;
}

namespace {

// One size of --input-shape: a positive integer below 2^31, or nullopt.
std::optional<int64_t> ParseSize(std::string_view part) {
  int64_t d = 0;
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
  if (part.empty() || ec != std::errc() || end != part.data() + part.size() || d <= 0 || d >= (int64_t(1) << 31)) {
    return std::nullopt;
  }
  return d;
}

}  // namespace

Result<InputShape> ParseInputShape(std::string_view text) {
  const std::string quoted = "--input-shape '" + std::string(text) + "'";
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return Status::InvalidArgument(quoted + ": expected NAME:DIMS, such as data:1x3x224x224");
  }
  InputShape shape;
  shape.name = std::string(text.substr(0, colon));
  std::string_view dims = text.substr(colon + 1);
  std::vector<int64_t> mins;
  bool any_range = false;
  while (true) {
    const size_t x = dims.find('x');
    const std::string_view part = dims.substr(0, x);
    const size_t dots = part.find("..");
    const std::optional<int64_t> hi = ParseSize(dots == std::string_view::npos ? part : part.substr(dots + 2));
    const std::optional<int64_t> lo = dots == std::string_view::npos ? hi : ParseSize(part.substr(0, dots));
    if (!lo || !hi) {
      return Status::InvalidArgument(quoted + ": dimension '" + std::string(part) +
                                     "' is not a positive integer below 2^31 nor a range LO..HI of them "
                                     "(dimensions are separated by 'x')");
    }
    if (dots != std::string_view::npos && *lo >= *hi) {
      return Status::InvalidArgument(quoted + ": the range '" + std::string(part) +
                                     "' is empty or one size; a range is LO..HI with LO < HI");
    }
    any_range = any_range || *lo < *hi;
    shape.dims.push_back(*hi);
    mins.push_back(*lo);
    if (x == std::string_view::npos) break;
    dims = dims.substr(x + 1);
  }
  if (any_range) shape.min_dims = std::move(mins);
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

// The ranges of one --input-shape join the graph's symbolic dimension: dimension 0 only, one range
// for every input that has one (what the compiler keeps symbolic today).
Status AddRanges(graph::Graph* g, const compiler::InputShape& shape, int input) {
  const std::string flag = "--input-shape " + shape.ToString();
  for (size_t d = 0; d < shape.dims.size(); ++d) {
    if (!shape.is_range(d)) continue;
    if (d != 0) {
      return Status::InvalidArgument(flag + ": a range on dimension " + std::to_string(d) + " of input '" + shape.name +
                                     "'; only dimension 0 can be kept symbolic so far (give the others one size)");
    }
    const graph::Value& v = g->values[size_t(input)];
    if (!g->symbolic_dim) {
      const bool named = !v.dim_params.empty() && !v.dim_params[0].empty();
      g->symbolic_dim =
          graph::SymbolicDim{named ? v.dim_params[0] : shape.name + ".0", shape.min_dims[0], shape.dims[0], {}};
    } else if (g->symbolic_dim->min != shape.min_dims[0] || g->symbolic_dim->max != shape.dims[0]) {
      return Status::InvalidArgument(
          flag + ": its range differs from another input's (" + std::to_string(g->symbolic_dim->min) + ".." +
          std::to_string(g->symbolic_dim->max) +
          "); the inputs given ranges share one symbolic dimension, so give them the same one");
    }
    g->symbolic_dim->inputs.push_back(input);
  }
  return Status::OK();
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
    TUNEFARM_RETURN_IF_ERROR(AddRanges(g, shape, int(input - g->values.data())));
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
