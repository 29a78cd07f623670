// OpTemplate: a tunable operator = a compute definition + a schedule parameterized by knobs.
//
// Each template validates workloads (InvalidArgument naming the bad parameter), defines the
// config space for a (workload, target), picks a heuristic fallback config that is good without
// tuning, and instantiates the tensors + schedule for one config. Templates are stateless
// singletons listed once in the template table (schedule/template_table.h, FindTemplate).
#ifndef TUNEFARM_COMPILER_SCHEDULE_OP_TEMPLATE_H_
#define TUNEFARM_COMPILER_SCHEDULE_OP_TEMPLATE_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/te/schedule.h"
#include "tunefarm/compiler/config_space.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload.h"

namespace tunefarm::compiler {

// What each kernel argument is for; the order of KernelDef::args is the C ABI order.
// kScale: an int8 kernel's requantization multipliers, one per output channel (Epilogue's
// Requantize); kZeroPoint: its input's zero point where it is computed at run time;
// kCompensation: what an int8 kernel multiplying raw uint8 activations by int8 weights with the
// dot-product instructions adds per output channel, -(input zero point) * the channel's weight sum
// (Int8DotProducts, templates/template_util.h). kSize: the one-element int64 a kernel over a symbolic
// size reads it from, appended last (te::LeadingExtent).
enum class BufferRole { kInput, kWeight, kBias, kResidual, kSlope, kScale, kZeroPoint, kCompensation, kOutput, kSize };
const char* BufferRoleName(BufferRole role);

struct KernelDef {
  std::unique_ptr<te::Schedule> schedule;
  std::vector<ir::Tensor> args;
  std::vector<BufferRole> roles;
  // GPU templates: the config's auto_unroll_max_step (passes/auto_unroll.h).
  int64_t auto_unroll_max_step = 0;
  // Winograd templates: the output tile m their weights argument is transformed for
  // (WinogradWeightTransform, with the weights' last dimension as oc_block); 0 for the others,
  // whose weights are packed 3x3 (or larger) filters.
  int winograd_tile = 0;
  // Int8 dot-product kernels (template_util.h's Int8FormOf): the weights per int32 word of their
  // weight argument, 4 int8 bytes or 2 int16 halves; 0 for weights stored one per element.
  int weight_word = 0;
};

class OpTemplate {
 public:
  virtual ~OpTemplate() = default;
  virtual const char* name() const = 0;
  virtual Status Check(const Workload& w) const = 0;
  // Precondition: Check(w) passed.
  virtual ConfigSpace Space(const Workload& w, const Target& t) const = 0;
  virtual Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const = 0;
  virtual KernelDef Instantiate(const Workload& w, const Epilogue& e, const Config& c, const Target& t) const = 0;
  // Untuned speed: the fallback config's speed relative to the fallback of the operator's default
  // implementation (1 for a default), as measured by bench_kernels --template (bench/RESULTS.md).
  // The model compiler runs the implementation with the highest one where no records exist.
  virtual double UntunedSpeedup(const Workload&, const Target&) const { return 1.0; }
  // The NCHW[x]c channel blocks a config reads its input in and writes its output in ({0, 0}: plain
  // layouts). The model compiler's layout planning (model/lowering/plan_layouts.h) weighs a config's
  // time against the layout changes its blocks cost between neighbours.
  struct Blocks {
    int64_t in = 0, out = 0;
    bool operator==(const Blocks& o) const { return in == o.in && out == o.out; }
  };
  virtual Blocks ActivationBlocks(const Workload&, const Config&) const { return {}; }
  // Whether the config's parallel loop has work for every core (template_util.h,
  // ChunksAloneSuffice); the tuner proposes only configs that do (ParallelismFilter).
  virtual bool FeedsEveryCore(const Workload&, const Config&) const { return true; }
};

// The number of vector accumulators a target can keep in registers for a tile (x86-64 AVX-512 and
// AArch64: 32 vector registers; AVX2 and ARMv7 NEON: 16), minus those weights and inputs need.
int MaxAccumulators(const Target& t);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_SCHEDULE_OP_TEMPLATE_H_
