// The template table: every schedule template, once, with the operator it implements, the target
// kind it runs on, when it applies, and how a model's constant weights are laid out for it (TVM's
// op strategy and template registry in one list). Lookup by name (FindTemplate), the
// implementations of an operator on a target (Implementations) and the checks that a template
// runs on a target all read this table; nothing else names a template.
//
// A node's workload (operators/node_workload) names the operator and its parameters;
// Implementations lists every row of that operator on the target's kind that applies and whose
// template accepts the workload, in table order (the operator's default first). The model compiler
// looks up the records of each and runs the fastest recorded one (else the one whose fallback is
// estimated fastest, OpTemplate::UntunedSpeedup); task extraction lists each as a task.
//
// Adding an implementation (Winograd for 3x3 convolutions, a CUDA template) is one row here plus
// its template (schedule/templates/).
#ifndef TUNEFARM_COMPILER_SCHEDULE_TEMPLATE_TABLE_H_
#define TUNEFARM_COMPILER_SCHEDULE_TEMPLATE_TABLE_H_

#include <string>
#include <vector>

#include "compiler/schedule/op_template.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload.h"

namespace tunefarm::compiler {

// How the model compiler lays out a node's constant weights for the template's weight argument
// (operators/nn_ops.cc packs them; the template's KernelDef gives the block sizes).
enum class WeightPacking {
  kConvBlocked,       // [K/oc_bn, C/ic_bn, KH, KW, ic_bn, oc_bn]
  kDepthwiseBlocked,  // [K/oc_bn, KH, KW, oc_bn]
  kWinograd,          // transformed for the config's tile (KernelDef::winograd_tile)
  kConvAsStored,      // [K, C/groups, KH, KW]
  kDense,             // dense_pack [N/bn, K, bn] or as stored [N, K], from the argument's rank
  kNone,              // both operands are activations (batch_matmul)
};

struct TemplateRow {
  const OpTemplate* (*get)();  // the stateless singleton; get()->name() is the row's name
  OpKind op;
  TargetKind target_kind;
  bool (*applies)(const Workload& w);  // on the operator's parameters
  WeightPacking weights;
};

const std::vector<TemplateRow>& TemplateTable();

// The row of a template; NotFound naming the known templates when the name is unknown.
Result<const TemplateRow*> FindTemplateRow(const std::string& name);
Result<const OpTemplate*> FindTemplate(const std::string& name);

// w's operator on target: each row of that operator and the target's kind that applies and whose
// template accepts w, as w with `implementation` set, in table order. w's own implementation, if
// any, does not matter: its operator and parameters are what count.
std::vector<Workload> Implementations(const Workload& w, const Target& target);

// OK when `implementation` is a template of w's operator that runs on target's kind; else
// InvalidArgument naming the templates of that operator and kind (a CPU template asked for a CUDA
// target, or a dense template for a convolution).
Status CheckImplementation(const Workload& w, const Target& target);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_SCHEDULE_TEMPLATE_TABLE_H_
