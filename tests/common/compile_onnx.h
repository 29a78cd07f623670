// Compiles serialized ONNX bytes (built in a test) into an artifact: imported, then the whole
// model compiler at `opt_level`, for the host or for an sm_90 GPU with its kernels emulated on the
// CPU (so the artifact runs on the CPU executor either way); the compile's warning lines go to
// `warnings` when given. Pair with RunArtifact (common/run_artifact.h) to run it.
#ifndef TUNEFARM_TESTS_COMMON_COMPILE_ONNX_H_
#define TUNEFARM_TESTS_COMMON_COMPILE_ONNX_H_

#include <string>
#include <vector>

#include "compiler/frontend/onnx_importer.h"
#include "compiler/model/compile_graph.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::testing {

inline Result<runtime::Artifact> CompileOnnxBytes(const std::string& bytes, const std::string& name, int opt_level = 3,
                                                  bool emulated_gpu = false,
                                                  std::vector<std::string>* warnings = nullptr) {
  TUNEFARM_ASSIGN_OR_RETURN(graph::Graph g, frontend::ImportOnnxBytes(bytes, name));
  compiler::CompileOptions options;
  options.warn = [warnings](const std::string& line) {
    if (warnings) warnings->push_back(line);
  };
  options.opt_level = opt_level;
  const compiler::Target target =
      emulated_gpu ? *compiler::ParseTarget("cuda -arch=sm_90 -emulate=host") : compiler::HostTarget();
  return compiler::CompileGraph(std::move(g), name, target, options);
}

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_COMPILE_ONNX_H_
