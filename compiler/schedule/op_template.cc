#include "compiler/schedule/op_template.h"


namespace tunefarm::compiler {

const OpTemplate* Conv2dTemplate();
const OpTemplate* DepthwiseConv2dTemplate();
const OpTemplate* DensePackTemplate();
const OpTemplate* DenseNoPackTemplate();
const OpTemplate* Conv2dCudaTemplate();
const OpTemplate* DepthwiseConv2dCudaTemplate();
const OpTemplate* DenseCudaTemplate();
const OpTemplate* DenseSmallBatchCudaTemplate();
const OpTemplate* Conv2dWinogradCudaTemplate();
const OpTemplate* Conv2dWinogradTemplate();
const OpTemplate* BatchMatmulTemplate();
const OpTemplate* BatchMatmulCudaTemplate();

const char* BufferRoleName(BufferRole role) {
  switch (role) {
    case BufferRole::kInput: return "input";
    case BufferRole::kWeight: return "weight";
    case BufferRole::kBias: return "bias";
    case BufferRole::kResidual: return "residual";
    case BufferRole::kSlope: return "slope";
    case BufferRole::kOutput: return "output";
  }
  return "?";
}

Result<const OpTemplate*> FindTemplate(const std::string& name) {
  // The compile-time table of templates (no global registry).
  const OpTemplate* const kTemplates[] = {Conv2dTemplate(),     DepthwiseConv2dTemplate(),     DensePackTemplate(),
                                          DenseNoPackTemplate(), Conv2dCudaTemplate(),          DepthwiseConv2dCudaTemplate(),
                                          DenseCudaTemplate(),     DenseSmallBatchCudaTemplate(),  Conv2dWinogradCudaTemplate(),
                                          Conv2dWinogradTemplate(), BatchMatmulTemplate(),       BatchMatmulCudaTemplate()};
  std::string known;
  for (const OpTemplate* t : kTemplates) {
    if (name == t->name()) return t;
    known += (known.empty() ? "" : ", ") + std::string(t->name());
  }
  return Status::NotFound("unknown template '" + name + "'; known: " + known);
}

int MaxAccumulators(const Target& t) {
  // Leave room for the weight vectors and the broadcast input.
  if (t.triple.rfind("x86_64", 0) == 0) return t.vector_lanes == 16 ? 28 : 12;
  if (t.triple.rfind("aarch64", 0) == 0) return 24;
  return 12;  // ARMv7 NEON: 16 q registers
}

}  // namespace tunefarm::compiler
