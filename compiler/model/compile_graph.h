// CompileGraph: the model compiler from an imported graph on (CompileModel = LoadModel + this).
// Tests use it directly to compile graphs whose inputs they adjust (ONNX backend tests).
#ifndef TUNEFARM_COMPILER_MODEL_COMPILE_GRAPH_H_
#define TUNEFARM_COMPILER_MODEL_COMPILE_GRAPH_H_

#include "compiler/graph/graph.h"
#include "tunefarm/compiler/compile.h"

namespace tunefarm::compiler {

Result<runtime::Artifact> CompileGraph(graph::Graph g, const std::string& model_name, const Target& target,
                                       const CompileOptions& options, CompileStats* stats = nullptr);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_MODEL_COMPILE_GRAPH_H_
