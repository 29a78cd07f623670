// CompileGraph: the model compiler from an imported graph on (CompileModel = LoadModel + this).
// Tests use it directly to compile graphs whose inputs they adjust (ONNX backend tests).
#ifndef TUNEFARM_COMPILER_MODEL_COMPILE_GRAPH_H_
#define TUNEFARM_COMPILER_MODEL_COMPILE_GRAPH_H_

#include "compiler/graph/graph.h"
#include "compiler/model/passes/fold_constants.h"
#include "tunefarm/compiler/compile.h"

namespace tunefarm::compiler {

Result<runtime::Artifact> CompileGraph(graph::Graph g, const std::string& model_name, const Target& target,
                                       const CompileOptions& options, CompileStats* stats = nullptr);

// How the model compiler folds constants (model/passes/fold_constants.h): a node compiled for the
// host at opt level 0 and run by the runtime executor, so folding computes what the kernel would.
graph::ConstantEvaluator HostConstantEvaluator();

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_MODEL_COMPILE_GRAPH_H_
