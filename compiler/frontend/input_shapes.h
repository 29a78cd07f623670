// ApplyInputShapes: the --input-shape values given to a command, set on the loaded graph's inputs
// before its passes run (tunefarm/compiler/input_shape.h states the rules); then every input must
// have a fixed shape, else the error names each symbolic dimension and shows the flag to use.
#ifndef TUNEFARM_COMPILER_FRONTEND_INPUT_SHAPES_H_
#define TUNEFARM_COMPILER_FRONTEND_INPUT_SHAPES_H_

#include <vector>

#include "compiler/graph/graph.h"
#include "tunefarm/compiler/input_shape.h"

namespace tunefarm::frontend {

Status ApplyInputShapes(graph::Graph* g, const std::vector<compiler::InputShape>& shapes);

}  // namespace tunefarm::frontend

#endif  // TUNEFARM_COMPILER_FRONTEND_INPUT_SHAPES_H_
