#include "compiler/schedule/strategy.h"

#include <algorithm>
#include <string>

#include "compiler/schedule/op_template.h"
#include "tunefarm/compiler/winograd.h"

namespace tunefarm::compiler {
namespace {

bool IsDepthwise(const Workload& w) {
  const Conv2dParams& c = w.conv;
  return c.groups > 1 && c.groups == c.in_channels && c.out_channels == c.in_channels;
}
bool IsNotDepthwise(const Workload& w) { return !IsDepthwise(w); }
bool Always(const Workload&) { return true; }
bool AppliesWinograd(const Workload& w) { return IsWinogradConv(w.conv); }

}  // namespace

const std::vector<StrategyRow>& StrategyTable() {
  static const std::vector<StrategyRow> kRows = {
      {"conv2d", TargetKind::kLlvm, "conv2d_nchwc", IsNotDepthwise},
      {"conv2d", TargetKind::kLlvm, "depthwise_conv2d_nchwc", IsDepthwise},
      // 3x3 stride 1: Winograd does 2.25-5x fewer multiplications, direct has no transforms and
      // reads fewer weights; both tuned (which wins depends on the channels and the image size).
      {"conv2d", TargetKind::kLlvm, "conv2d_nchwc_winograd", AppliesWinograd},
      // Packed weights (vectors along the output features) and weights as stored (vectors along k):
      // which is faster depends on the shape and the machine, so both are tuned.
      {"dense", TargetKind::kLlvm, "dense_pack", Always},
      {"dense", TargetKind::kLlvm, "dense_nopack", Always},
      {"batch_matmul", TargetKind::kLlvm, "batch_matmul", Always},
      {"conv2d", TargetKind::kCuda, "conv2d_nchw_cuda", IsNotDepthwise},
      {"conv2d", TargetKind::kCuda, "depthwise_conv2d_nchw_cuda", IsDepthwise},
      // 3x3 stride 1: Winograd does fewer multiplications, direct has no transforms; both tuned.
      {"conv2d", TargetKind::kCuda, "conv2d_nchw_winograd_cuda", AppliesWinograd},
      // Shared-memory tiles, and at small batch a cross-thread reduction per dot product: which is
      // faster depends on the shape, so both are tuned where both apply.
      {"dense", TargetKind::kCuda, "dense_cuda", Always},
      {"dense", TargetKind::kCuda, "dense_small_batch_cuda", Always},
      {"batch_matmul", TargetKind::kCuda, "batch_matmul_cuda", Always},
  };
  return kRows;
}

std::vector<Workload> Implementations(const Workload& w, const Target& target) {
  const auto& rows = StrategyTable();
  // The operator w computes, from its template's row on any target kind: a workload named by a
  // CPU template still names the operator and shapes a GPU implementation computes.
  auto own = std::find_if(rows.begin(), rows.end(), [&](const StrategyRow& r) { return w.template_name == r.template_name; });
  if (own == rows.end()) return {};
  std::vector<Workload> out;
  auto add = [&](const StrategyRow& r) {
    if (!r.applies(w)) return;
    Workload impl = w;
    impl.template_name = r.template_name;
    auto tmpl = FindTemplate(impl.template_name);
    if (tmpl.ok() && (*tmpl)->Check(impl).ok()) out.push_back(impl);
  };
  if (target.kind == own->target_kind) add(*own);  // w's own template first
  for (const StrategyRow& r : rows) {
    if (&r != &*own && std::string(r.op) == own->op && target.kind == r.target_kind) add(r);
  }
  return out;
}

Status CheckTemplateTarget(const std::string& template_name, const Target& target) {
  std::string same_kind;
  for (const StrategyRow& r : StrategyTable()) {
    if (target.kind != r.target_kind) continue;
    if (template_name == r.template_name) return Status::OK();
    same_kind += (same_kind.empty() ? "" : ", ") + std::string(r.template_name);
  }
  return Status::InvalidArgument("template '" + template_name + "' does not run on target kind '" + TargetKindName(target.kind) +
                                 "'" + (same_kind.empty() ? std::string() : "; its templates: " + same_kind));
}

}  // namespace tunefarm::compiler
