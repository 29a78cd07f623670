// Models: loading (ONNX files), graph optimization and task extraction.
//
// A Task is one distinct tunable workload of a model on a target with one implementation of it
// (workload.Key() + workload.implementation), with how often the model runs it: what `tunefarm
// tasks` lists and the tuner tunes. An operator with several implementations (dense: dense_pack
// and dense_nopack) gives one task per implementation, all with the same workload key; the
// compiler runs whichever has the fastest record.
#ifndef TUNEFARM_COMPILER_MODEL_H_
#define TUNEFARM_COMPILER_MODEL_H_

#include <optional>
#include <string>
#include <vector>

#include "tunefarm/compiler/input_shape.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::compiler {

struct Task {
  Workload workload;
  int count = 0;                   // occurrences in the model
  double flops = 0;                // per occurrence
  int64_t config_space_size = 0;   // on the target
  std::vector<std::string> nodes;  // the model nodes that run it
  // Another implementation of nodes whose default is a different task (its FLOPs are already
  // counted there: sum only the defaults for the model's total).
  bool alternative = false;
  // When alternative: the nodes' default task.
  std::optional<Workload> default_workload;
};

// Loads MODEL (an .onnx path or a zoo name such as resnet-18), runs the compiler's graph pipeline
// and lowering at opt_level (as `tunefarm compile -O` does; default 3) without generating code,
// and lists the plan's tunable kernels as tasks in first-occurrence order: exactly the workloads
// `compile` would look up in the records. Errors name the model and node.
// input_shapes fix the inputs the model leaves symbolic, as compile's do.
Result<std::vector<Task>> ExtractTasks(const std::string& model, const Target& target, int opt_level = 3,
                                       const std::vector<InputShape>& input_shapes = {});

// What importing MODEL holds in memory beyond its file: the weights it names as external data
// (their declared sizes, as the importer stores them). 0 for a zoo model or one whose weights are
// inside the file; an error where an .onnx path cannot be read or parsed.
Result<uint64_t> ModelExternalDataBytes(const std::string& model);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_MODEL_H_
