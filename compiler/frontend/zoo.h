// The built-in model zoo (like TVM's relay.testing): standard image classifiers built in code with
// deterministic Xavier-uniform weights, batch-norm statistics at identity (gamma 1, beta 0,
// mean 0, var 1), input "data" [1, 3, 224, 224], output [1, 1000]. Addressed by name wherever a
// MODEL path is accepted.
#ifndef TUNEFARM_COMPILER_FRONTEND_ZOO_H_
#define TUNEFARM_COMPILER_FRONTEND_ZOO_H_

#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "tunefarm/compiler/input_shape.h"

namespace tunefarm::frontend {

// resnet-18, resnet-34, resnet-50, mobilenet-v1, mobilenet-v2, vgg-16, squeezenet-1.1.
const std::vector<std::string>& ZooModelNames();
bool IsZooModel(const std::string& name);
// NotFound listing the known names when `name` is not one of them.
Result<graph::Graph> ZooModel(const std::string& name);

// A file path -> the ONNX importer; a zoo name -> ZooModel; InvalidArgument/NotFound naming
// MODEL otherwise. Then the --input-shape values (ApplyInputShapes): every input leaves fixed.
Result<graph::Graph> LoadModel(const std::string& model, const std::vector<compiler::InputShape>& input_shapes = {});

}  // namespace tunefarm::frontend

#endif  // TUNEFARM_COMPILER_FRONTEND_ZOO_H_
