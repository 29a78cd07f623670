#include "compiler/schedule/template_table.h"

#include "tunefarm/compiler/winograd.h"

namespace tunefarm::compiler {

const OpTemplate* Conv2dTemplate();
const OpTemplate* DepthwiseConv2dTemplate();
const OpTemplate* Conv2dWinogradTemplate();
const OpTemplate* DensePackTemplate();
const OpTemplate* DenseNoPackTemplate();
const OpTemplate* BatchMatmulTemplate();
const OpTemplate* Conv2dCudaTemplate();
const OpTemplate* DepthwiseConv2dCudaTemplate();
const OpTemplate* Conv2dWinogradCudaTemplate();
const OpTemplate* DenseCudaTemplate();
const OpTemplate* DenseSmallBatchCudaTemplate();
const OpTemplate* BatchMatmulCudaTemplate();

namespace {

bool IsDepthwise(const Workload& w) {
  const Conv2dParams& c = w.conv;
  return c.groups > 1 && c.groups == c.in_channels && c.out_channels == c.in_channels;
}
bool IsNotDepthwise(const Workload& w) { return !IsDepthwise(w); }
bool Always(const Workload&) { return true; }
bool AppliesWinograd(const Workload& w) { return IsWinogradConv(w.conv); }

}  // namespace

const std::vector<TemplateRow>& TemplateTable() {
  using K = TargetKind;
  using P = WeightPacking;
  static const std::vector<TemplateRow> kRows = {
      {Conv2dTemplate, OpKind::kConv2d, K::kLlvm, IsNotDepthwise, P::kConvBlocked},
      {DepthwiseConv2dTemplate, OpKind::kConv2d, K::kLlvm, IsDepthwise, P::kDepthwiseBlocked},
      // 3x3 stride 1: Winograd does 2.25-5x fewer multiplications, direct has no transforms and
      // reads fewer weights; both tuned (which wins depends on the channels and the image size).
      {Conv2dWinogradTemplate, OpKind::kConv2d, K::kLlvm, AppliesWinograd, P::kWinograd},
      // Packed weights (vectors along the output features) and weights as stored (vectors along k):
      // which is faster depends on the shape and the machine, so both are tuned.
      {DensePackTemplate, OpKind::kDense, K::kLlvm, Always, P::kDense},
      {DenseNoPackTemplate, OpKind::kDense, K::kLlvm, Always, P::kDense},
      {BatchMatmulTemplate, OpKind::kBatchMatmul, K::kLlvm, Always, P::kNone},
      {Conv2dCudaTemplate, OpKind::kConv2d, K::kCuda, IsNotDepthwise, P::kConvAsStored},
      {DepthwiseConv2dCudaTemplate, OpKind::kConv2d, K::kCuda, IsDepthwise, P::kConvAsStored},
      // 3x3 stride 1: Winograd does fewer multiplications, direct has no transforms; both tuned.
      {Conv2dWinogradCudaTemplate, OpKind::kConv2d, K::kCuda, AppliesWinograd, P::kWinograd},
      // Shared-memory tiles, and at small batch a cross-thread reduction per dot product: which is
      // faster depends on the shape, so both are tuned where both apply.
      {DenseCudaTemplate, OpKind::kDense, K::kCuda, Always, P::kDense},
      {DenseSmallBatchCudaTemplate, OpKind::kDense, K::kCuda, Always, P::kDense},
      {BatchMatmulCudaTemplate, OpKind::kBatchMatmul, K::kCuda, Always, P::kNone},
  };
  return kRows;
}

Result<const TemplateRow*> FindTemplateRow(const std::string& name) {
  std::string known;
  for (const TemplateRow& r : TemplateTable()) {
    if (name == r.get()->name()) return &r;
    known += (known.empty() ? "" : ", ") + std::string(r.get()->name());
  }
  return Status::NotFound("unknown template '" + name + "'; known: " + known);
}

Result<const OpTemplate*> FindTemplate(const std::string& name) {
  TUNEFARM_ASSIGN_OR_RETURN(const TemplateRow* row, FindTemplateRow(name));
  return row->get();
}

std::vector<Workload> Implementations(const Workload& w, const Target& target) {
  std::vector<Workload> out;
  for (const TemplateRow& r : TemplateTable()) {
    if (r.op != w.op || r.target_kind != target.kind || !r.applies(w)) continue;
    Workload impl = w;
    impl.implementation = r.get()->name();
    if (r.get()->Check(impl).ok()) out.push_back(std::move(impl));
  }
  return out;
}

Status CheckImplementation(const Workload& w, const Target& target) {
  std::string same_kind;
  for (const TemplateRow& r : TemplateTable()) {
    if (r.op != w.op || r.target_kind != target.kind) continue;
    if (w.implementation == r.get()->name()) return Status::OK();
    same_kind += (same_kind.empty() ? "" : ", ") + std::string(r.get()->name());
  }
  return Status::InvalidArgument("template '" + w.implementation + "' does not compute " + OpKindName(w.op) +
                                 " on target kind '" + TargetKindName(target.kind) + "'" +
                                 (same_kind.empty() ? std::string() : "; its templates: " + same_kind));
}

}  // namespace tunefarm::compiler
