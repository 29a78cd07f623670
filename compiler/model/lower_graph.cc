#include "compiler/model/lower_graph.h"

#include "compiler/operators/lower_context.h"

namespace tunefarm::compiler {

Result<ModelPlan> LowerGraph(const graph::Graph& g, const Target& target, const LowerGraphOptions& options) {
  return operators::LowerContext(g, target, options).Run();
}

}  // namespace tunefarm::compiler
