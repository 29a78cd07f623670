// ExtractTasks on an already imported graph (tests compile graphs they build or adjust; the
// public entry point, tunefarm/compiler/model.h, loads the model first).
#ifndef TUNEFARM_COMPILER_MODEL_EXTRACT_TASKS_H_
#define TUNEFARM_COMPILER_MODEL_EXTRACT_TASKS_H_

#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "tunefarm/compiler/model.h"

namespace tunefarm::compiler {

Result<std::vector<Task>> ExtractTasks(graph::Graph g, const std::string& model, const Target& target, int opt_level);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_MODEL_EXTRACT_TASKS_H_
