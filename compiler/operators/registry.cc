#include "compiler/operators/registry.h"

#include <algorithm>
#include <map>

#include "tunefarm/compiler/operators.h"

namespace tunefarm::operators {
namespace {

const char* KindName(graph::Attribute::Kind k) {
  switch (k) {
    case graph::Attribute::kInt:
      return "an int";
    case graph::Attribute::kFloat:
      return "a float";
    case graph::Attribute::kInts:
      return "a list of ints";
    case graph::Attribute::kFloats:
      return "a list of floats";
    case graph::Attribute::kString:
      return "a string";
    case graph::Attribute::kTensor:
      return "a tensor";
  }
  return "?";
}

struct Table {
  std::vector<OperatorDef> rows;
  std::vector<const OperatorDef*> sorted;
  std::map<std::string, const OperatorDef*, std::less<>> by_name;
};

const Table& TheTable() {
  static const Table* table = [] {
    auto* t = new Table;
    for (auto family : {ElementwiseOperators, NnOperators, NormOperators, TensorOperators, ReduceOperators,
                        ResizeOperators, RecurrentOperators, ControlOperators, IndexOperators, QuantizeOperators,
                        IntegerOperators, MicrosoftOperators}) {
      for (OperatorDef& d : family()) t->rows.push_back(std::move(d));
    }
    for (const OperatorDef& d : t->rows) {
      t->sorted.push_back(&d);
      t->by_name[d.name] = &d;
    }
    std::sort(t->sorted.begin(), t->sorted.end(),
              [](const OperatorDef* a, const OperatorDef* b) { return std::string_view(a->name) < b->name; });
    return t;
  }();
  return *table;
}

}  // namespace

std::string QualifiedOpType(std::string_view domain, std::string_view op_type) {
  if (domain.empty() || domain == "ai.onnx") return std::string(op_type);
  return std::string(domain) + "." + std::string(op_type);
}

const OperatorDef* FindOperator(std::string_view op_type) {
  const Table& t = TheTable();
  auto it = t.by_name.find(op_type);
  return it == t.by_name.end() ? nullptr : it->second;
}

const std::vector<const OperatorDef*>& AllOperators() { return TheTable().sorted; }

std::vector<std::string> OperatorNames() {
  std::vector<std::string> names;
  for (const OperatorDef* d : AllOperators()) names.push_back(d->name);
  return names;
}

Status CheckAttributes(const graph::Graph& g, const graph::Node& n, const OperatorDef& def) {
  auto fail = [&](const std::string& why) { return Status::InvalidArgument(g.Describe(n) + ": " + why); };
  for (const auto& [name, attr] : n.attrs) {
    // A structured binding cannot be captured in C++17 (clang refuses it); a plain reference can.
    const std::string& attr_name = name;
    auto spec =
        std::find_if(def.attrs.begin(), def.attrs.end(), [&](const AttrSpec& s) { return attr_name == s.name; });
    if (spec == def.attrs.end()) {
      std::string known;
      for (const AttrSpec& s : def.attrs) known += (known.empty() ? "" : ", ") + std::string(s.name);
      return fail("unknown attribute '" + name + "' (" + n.op_type + " takes " + (known.empty() ? "none" : known) +
                  ")");
    }
    if (attr.kind != spec->kind) {
      return fail("attribute '" + name + "' must be " + KindName(spec->kind) + ", got " + KindName(attr.kind));
    }
  }
  for (const AttrSpec& s : def.attrs) {
    if (s.required && !n.Has(s.name)) return fail(std::string("missing required attribute '") + s.name + "'");
  }
  return Status::OK();
}

std::string OperatorTableMarkdown() {
  std::string out = "| operator | family | attributes | CPU | CUDA | notes |\n|---|---|---|---|---|---|\n";
  for (const OperatorDef* d : AllOperators()) {
    std::string attrs;
    for (const AttrSpec& s : d->attrs)
      attrs += (attrs.empty() ? "" : ", ") + std::string(s.name) + (s.required ? " (required)" : "");
    out += std::string("| ") + d->name + " | " + d->family + " | " + (attrs.empty() ? "—" : attrs) + " | " +
           (d->lower ? "yes" : "no") + " | " + (d->lower ? "yes" : "no") + " | " + d->notes + " |\n";
  }
  return out;
}

}  // namespace tunefarm::operators

namespace tunefarm::compiler {

std::vector<std::string> SupportedOperators() { return operators::OperatorNames(); }
std::string OperatorSupportMarkdown() { return operators::OperatorTableMarkdown(); }

}  // namespace tunefarm::compiler
