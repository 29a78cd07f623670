// Optimize: the graph pipeline, as an ordered list of named passes gated by opt level. Both
// `tunefarm compile` (CompileGraph) and task extraction (`tunefarm tasks`, `tune`) run it, so the
// tasks a user tunes are exactly the tunable kernels the compiler emits.
//
//   pass               level  what
//   infer_shapes       0      dtypes and shapes; folds shape arithmetic (operator registry)
//   fold_constants     1      evaluates nodes on constants (a transposed weight becomes a constant)
//   fold_batch_norm    1      BatchNormalization after Conv -> the conv's weights and bias
//   fuse_epilogues     2      conv/dense + bias + residual + activation -> one node
//   remove_dead_nodes  0      what no output needs
//
// Like passes::Lower (compiler/passes/lower.h) it can dump the graph after a named pass and time
// every pass. Layout planning (level 3) happens in LowerGraph.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_PIPELINE_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_PIPELINE_H_

#include <ostream>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/model/passes/fold_constants.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::compiler {

struct GraphPassTiming {
  std::string pass;
  double milliseconds;
  int changed;  // nodes rewritten, folded or removed (-1: not counted)
};

struct OptimizeOptions {
  // Prints the graph after the pass with this name ("all": after every pass) to dump.
  std::string dump_after;
  std::ostream* dump = nullptr;
  std::vector<GraphPassTiming>* timings = nullptr;
  // Evaluates nodes on constants for fold_constants (opt level >= 1); the model compiler hands in
  // its own (HostConstantEvaluator, model/compile_graph.h). Without one, nothing is folded.
  graph::ConstantEvaluator evaluate_constants;
};

// The pass names in order, as dump_after accepts them.
const std::vector<std::string>& GraphPassNames();

Status Optimize(graph::Graph* g, int opt_level, const Target& target, const OptimizeOptions& options = {});

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_PIPELINE_H_
