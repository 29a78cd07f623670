#include "compiler/model/lowering/follow_symbolic_dim.h"

#include <string>

#include "compiler/te/leading_extent.h"
#include "compiler/te/tensor.h"

namespace tunefarm::lowering {
namespace {

std::string KernelName(const compiler::PlannedKernel& k) {
  return "kernel " + k.op + (k.node.empty() ? "" : " of node '" + k.node + "'");
}

}  // namespace

Status FollowSymbolicDim(compiler::ModelPlan* plan) {
  runtime::Artifact& a = plan->artifact;
  if (!a.symbolic_dim) return Status::OK();
  const runtime::SymbolicDim& dim = *a.symbolic_dim;
  // A view's scale, from its base's: the same bytes per unit of the size whenever its dimension 0 is
  // a multiple of the maximum (row-major storage keeps the leading rows first).
  auto resolve_view = [&](int t) -> Status {
    runtime::ArtifactTensor& view = a.tensors[size_t(t)];
    if (view.view_of < 0 || view.leading_scale > 0 || a.tensors[size_t(view.view_of)].leading_scale == 0) {
      return Status::OK();
    }
    if (view.shape.empty() || view.shape[0] % dim.max != 0) {
      std::string shape;
      for (int64_t d : view.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
      return Status::InvalidArgument("tensor '" + view.name + "' [" + shape + "] reshapes '" +
                                     a.tensors[size_t(view.view_of)].name + "' so that '" + dim.name +
                                     "' is no longer its dimension 0");
    }
    view.leading_scale = view.shape[0] / dim.max;
    return Status::OK();
  };
  for (compiler::PlannedKernel& k : plan->kernels) {
    te::LeadingExtent leading;
    leading.min = dim.min;
    leading.max = dim.max;
    bool reads_following = false;
    for (size_t i = 0; i < k.args.size(); ++i) {
      TUNEFARM_RETURN_IF_ERROR(resolve_view(k.args[i]).WithContext(KernelName(k)));
      const int64_t scale = a.tensors[size_t(k.args[i])].leading_scale;
      if (scale > 0) {
        leading.follows[k.def.args[i].get()] = te::LeadingExtent::Follow{0, scale};
        reads_following = true;
      }
    }
    if (!reads_following) continue;
    leading.size = te::Placeholder(dim.name + ".size", {1}, ir::Type::Int(64));
    k.def.args.push_back(leading.size);
    if (!k.def.roles.empty()) k.def.roles.push_back(compiler::BufferRole::kSize);
    k.args.push_back(dim.tensor);
    te::Schedule& schedule = *k.def.schedule;
    TUNEFARM_RETURN_IF_ERROR(te::InferLeadingExtent(&schedule, leading).WithContext(KernelName(k)));
    const te::LeadingExtent& found = *schedule.leading_extent();
    for (const ir::Tensor& out : schedule.outputs()) {
      for (size_t i = 0; i < k.def.args.size(); ++i) {
        if (k.def.args[i] != out) continue;
        runtime::ArtifactTensor& t = a.tensors[size_t(k.args[i])];
        auto it = found.follows.find(out.get());
        const int64_t scale = it == found.follows.end() ? 0 : it->second.scale;
        const bool leading_axis = it == found.follows.end() || it->second.axis == 0;
        if (t.view_of >= 0 || !leading_axis || (t.leading_scale > 0 && t.leading_scale != scale)) {
          return Status::InvalidArgument(KernelName(k) + ": its output '" + t.name +
                                         "' cannot follow the symbolic size '" + dim.name + "'");
        }
        t.leading_scale = scale;
      }
    }
  }
  for (size_t t = 0; t < a.tensors.size(); ++t) TUNEFARM_RETURN_IF_ERROR(resolve_view(int(t)));
  for (int out : a.outputs) {
    const runtime::ArtifactTensor& t = a.tensors[size_t(out)];
    const runtime::ArtifactTensor& base = t.view_of >= 0 ? a.tensors[size_t(t.view_of)] : t;
    if (t.leading_scale == 0 && base.leading_scale > 0) {
      return Status::InvalidArgument("output '" + t.name + "' cannot follow the symbolic size '" + dim.name + "'");
    }
  }
  return Status::OK();
}

}  // namespace tunefarm::lowering
