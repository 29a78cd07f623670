// Compiling a model into a deployable artifact (what `tunefarm compile` does; TVM's relay.build
// + export_library).
//
// The pipeline: import (ONNX file or zoo name) -> shape inference -> graph optimizations by opt
// level -> lowering every node to kernels (tunable ones with the best config the ConfigSource
// knows, else the fallback config and one warning line per workload) -> LLVM -> one shared library
// for the target, linked with its toolchain -> runtime::Artifact.
//
// Opt levels (docs/architecture.md, "Model compiler"):
//   0  every node its own kernel, activations in NCHW between kernels (the reference); shape
//      chains are folded at every level (shapes are static)
//   1  + constant folding and batch-norm folding
//   2  + epilogue fusion (conv/dense + bias + residual add + activation in one kernel)
//   3  + layout planning: activations stay in NCHW[x]c between kernels that accept it
#ifndef TUNEFARM_COMPILER_COMPILE_H_
#define TUNEFARM_COMPILER_COMPILE_H_

#include <functional>
#include <string>
#include <vector>

#include "tunefarm/compiler/config_source.h"
#include "tunefarm/compiler/input_shape.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/artifact.h"

namespace tunefarm::compiler {

struct CompileOptions {
  int opt_level = 3;
  // Fixed shapes for graph inputs the model leaves symbolic (--input-shape NAME:DIMS).
  std::vector<InputShape> input_shapes;
  const ConfigSource* configs = nullptr;  // null: fallback configs only
  // The thread count the artifact is for (Artifact::threads, `run`'s default): configs should hold
  // records measured at it (tuner::RecordsConfigSource filters by it). 0: not stated.
  int threads = 0;
  // Receives each warning line (a workload without a record, an If branch that cannot run at the
  // given shapes); default: stderr.
  std::function<void(const std::string&)> warn;
  // Link through the target's gcc driver instead of binutils ld (see BuildOptions).
  bool toolchain_linker = false;
  // A CUDA target's artifact holds one PTX module and each kernel's launch (device "cuda"; ptxas,
  // when present, checks registers). An emulated one (Target::emulated, `-emulate=host`) gives an
  // artifact for this CPU: how the CUDA lowerings of a whole model are checked on a machine
  // without a GPU, against the CPU compile of the same graph.
};

struct CompileStats {
  int kernels = 0;
  int tunable_kernels = 0;
  int from_records = 0;
  // Per tunable node, in graph order: the implementation chosen (its template: direct or Winograd
  // convolution, packed or plain dense) and where its config came from.
  struct TunableNode {
    std::string node, implementation;
    runtime::ConfigOrigin config_origin = runtime::ConfigOrigin::kNone;
  };
  std::vector<TunableNode> tunable_nodes;
  // Graph-level layout planning (opt level 3 on CPUs, with records): how many convolutions had
  // records to plan with, how many got another config than their own fastest record to save
  // layout changes, and the estimated time of the tunable kernels plus layout changes both ways.
  struct LayoutPlanning {
    bool ran = false;
    bool exact = true;  // false when the planner's beam cut states (not seen on the zoo's models)
    int planned = 0, changed = 0;
    double per_node_ms = 0, planned_ms = 0, per_node_transform_ms = 0, planned_transform_ms = 0;
  };
  LayoutPlanning layouts;
  double optimize_ms = 0, lower_ms = 0, codegen_ms = 0, link_ms = 0, total_ms = 0;
};

Result<runtime::Artifact> CompileModel(const std::string& model, const Target& target, const CompileOptions& options,
                                       CompileStats* stats = nullptr);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_COMPILE_H_
