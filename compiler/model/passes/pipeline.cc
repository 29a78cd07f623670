#include "compiler/model/passes/pipeline.h"

#include <chrono>
#include <functional>

#include "compiler/model/passes/conv_transpose_as_conv.h"
#include "compiler/model/passes/fold_batch_norm.h"
#include "compiler/model/passes/fold_constants.h"
#include "compiler/model/passes/fuse_epilogues.h"
#include "compiler/model/passes/infer_shapes.h"
#include "compiler/model/passes/qdq_to_integer.h"
#include "compiler/model/passes/recognize_gelu.h"
#include "compiler/model/passes/recognize_layer_norm.h"
#include "compiler/model/passes/recurrent_input_projections.h"
#include "compiler/model/passes/remove_dead_nodes.h"
#include "compiler/model/passes/resolve_constant_ifs.h"
#include "compiler/model/passes/trim_dead_conv_taps.h"

namespace tunefarm::compiler {
namespace {

struct GraphPass {
  const char* name;
  int min_opt_level;
  std::function<Result<int>(graph::Graph*, const OptimizeOptions&)> run;
};

const std::vector<GraphPass>& Passes() {
  static const std::vector<GraphPass> kPasses = {
      {"infer_shapes", 0,
       [](graph::Graph* g, const OptimizeOptions&) -> Result<int> {
         TUNEFARM_RETURN_IF_ERROR(graph::InferShapes(g));
         return -1;
       }},
      // Right after inference (which folds the shape arithmetic most conditions are made of): the
      // other passes see only the branch a constant condition takes.
      {"resolve_constant_ifs", 0,
       [](graph::Graph* g, const OptimizeOptions&) -> Result<int> { return graph::ResolveConstantIfs(g); }},
      // Before batch-norm folding: a weight computed from constants (Transpose, Mul) must be a
      // constant for the conv it feeds to be folded and tuned.
      {"fold_constants", 1,
       [](graph::Graph* g, const OptimizeOptions& o) -> Result<int> {
         return o.evaluate_constants ? FoldConstants(g, o.evaluate_constants) : Result<int>(0);
       }},
      // After folding (the quantized weights and the bias path are constants), before the passes
      // that read float convolutions: a quantized chain becomes one integer node, an int8 task.
      {"qdq_to_integer", 1,
       [](graph::Graph* g, const OptimizeOptions&) -> Result<int> { return graph::QdqToInteger(g); }},
      // After folding (the weights must be constants), before epilogue fusion (the conv it makes
      // takes the bias and fuses like any other).
      {"conv_transpose_as_conv", 1, [](graph::Graph* g, const OptimizeOptions&) { return ConvTransposeAsConv(g); }},
      {"recurrent_input_projections", 1,
       [](graph::Graph* g, const OptimizeOptions&) { return RecurrentInputProjections(g); }},
      // After conv_transpose_as_conv, so the convolutions it makes are trimmed too.
      {"trim_dead_conv_taps", 1, [](graph::Graph* g, const OptimizeOptions&) { return TrimDeadConvTaps(g); }},
      {"fold_batch_norm", 1,
       [](graph::Graph* g, const OptimizeOptions&) -> Result<int> { return graph::FoldBatchNorm(g); }},
      // Before epilogue fusion: a recognized Gelu folds into the dense layer before it.
      {"recognize_gelu", 1,
       [](graph::Graph* g, const OptimizeOptions&) -> Result<int> { return graph::RecognizeGelu(g); }},
      {"recognize_layer_norm", 1,
       [](graph::Graph* g, const OptimizeOptions&) -> Result<int> { return graph::RecognizeLayerNorm(g); }},
      {"fuse_epilogues", 2,
       [](graph::Graph* g, const OptimizeOptions&) -> Result<int> { return graph::FuseEpilogues(g); }},
      {"remove_dead_nodes", 0,
       [](graph::Graph* g, const OptimizeOptions&) -> Result<int> { return graph::RemoveDeadNodes(g); }},
  };
  return kPasses;
}

}  // namespace

const std::vector<std::string>& GraphPassNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const GraphPass& p : Passes()) names.push_back(p.name);
    return names;
  }();
  return kNames;
}

Status Optimize(graph::Graph* g, int opt_level, const Target& target, const OptimizeOptions& options) {
  (void)target;  // the passes are target-independent today; GPU fusion will read it
  if (opt_level < 0 || opt_level > 3) {
    return Status::InvalidArgument("opt level " + std::to_string(opt_level) + " is not one of 0, 1, 2, 3");
  }
  for (const GraphPass& pass : Passes()) {
    if (opt_level < pass.min_opt_level) continue;
    const auto start = std::chrono::steady_clock::now();
    TUNEFARM_ASSIGN_OR_RETURN(int changed, pass.run(g, options));
    if (options.timings) {
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      options.timings->push_back({pass.name, ms, changed});
    }
    if (options.dump && (options.dump_after == "all" || options.dump_after == pass.name)) {
      *options.dump << "// ---- graph after " << pass.name << "\n" << g->ToString();
    }
  }
  return Status::OK();
}

}  // namespace tunefarm::compiler
