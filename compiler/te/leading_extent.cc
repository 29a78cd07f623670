#include "compiler/te/leading_extent.h"

#include <optional>
#include <string>

#include "compiler/ir/ir_visitor.h"

namespace tunefarm::te {
namespace {

// Whether index `e` is `axis` itself, possibly clamped into a tensor of `rows` rows
// (max(min(axis, c), 0) with c >= rows - 1 reads the same rows wherever axis < rows).
bool IsOwnRow(ir::Expr e, const IterVar& axis, int64_t rows) {
  while (true) {
    if (const auto* mx = e.as<ir::Max>()) {
      if (ir::IsConstInt(mx->b, 0)) {
        e = mx->a;
        continue;
      }
      if (ir::IsConstInt(mx->a, 0)) {
        e = mx->b;
        continue;
      }
      return false;
    }
    if (const auto* mn = e.as<ir::Min>()) {
      const int64_t* cb = ir::AsConstInt(mn->b);
      const int64_t* ca = ir::AsConstInt(mn->a);
      if (cb && *cb >= rows - 1) {
        e = mn->a;
        continue;
      }
      if (ca && *ca >= rows - 1) {
        e = mn->b;
        continue;
      }
      return false;
    }
    break;
  }
  const auto* v = e.as<ir::VarNode>();
  return v && v == axis->var.get();
}

}  // namespace

Status InferLeadingExtent(Schedule* schedule, LeadingExtent leading) {
  // Producers come first in stage order, but a cache_write stage may follow its reader; a few
  // rounds settle it.
  for (size_t round = 0; round <= schedule->stages().size(); ++round) {
    bool changed = false;
    for (const auto& stage : schedule->stages()) {
      if (stage->inlined || leading.follows.count(stage->tensor.get())) continue;
      std::optional<LeadingExtent::Follow> follows;
      std::string problem;
      ir::PreOrderVisit(ir::Evaluate::Make(stage->body), [&](const ir::Expr& e) {
        const auto* load = e.as<ir::ProducerLoad>();
        if (!load || !problem.empty()) return;
        auto it = leading.follows.find(load->tensor.get());
        if (it == leading.follows.end()) return;
        const LeadingExtent::Follow read = it->second;
        const int64_t slices = read.scale * leading.max;
        int axis = -1;
        for (size_t d = 0; d < stage->axes.size() && axis < 0; ++d) {
          if (size_t(read.axis) < load->indices.size() &&
              IsOwnRow(load->indices[size_t(read.axis)], stage->axes[d], slices)) {
            axis = int(d);
          }
        }
        if (axis < 0) {
          problem = "reads '" + load->tensor->name + "' at another row than its own";
        } else if (follows && (follows->axis != axis || follows->scale != read.scale)) {
          problem = "reads tensors that follow the size at different axes or scales";
        } else {
          follows = LeadingExtent::Follow{axis, read.scale};
        }
      });
      if (problem.empty() && follows && stage->tensor->shape[size_t(follows->axis)] < follows->scale * leading.max) {
        problem = "has fewer rows (" + std::to_string(stage->tensor->shape[size_t(follows->axis)]) +
                  ") than the tensors it reads";
      }
      if (!problem.empty()) {
        return Status::InvalidArgument("stage '" + stage->tensor->name + "' " + problem +
                                       " (a reduction over dimension 0, a shifted or strided row): its dimension 0 "
                                       "cannot follow the symbolic size");
      }
      if (follows) {
        leading.follows[stage->tensor.get()] = *follows;
        changed = true;
      }
    }
    if (!changed) break;
  }
  schedule->set_leading_extent(std::move(leading));
  return Status::OK();
}

}  // namespace tunefarm::te
