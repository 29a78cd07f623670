#include "compiler/model/lower_graph.h"

#include "compiler/model/lowering/lower_context.h"
#include "compiler/model/lowering/plan_layouts.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::compiler {

Result<ModelPlan> LowerGraph(const graph::Graph& g, const Target& target, const LowerGraphOptions& options) {
  TUNEFARM_CHECK_MSG(options.backend != nullptr, "LowerGraph needs the target's backend");
  if (!options.plan_layouts || !options.configs) return lowering::LowerContext(g, target, options).Run();
  lowering::LayoutFlow flow;
  lowering::LowerContext first(g, target, options);  // its warnings are the model's: no second pass repeats them
  first.RecordFlow(&flow);
  TUNEFARM_ASSIGN_OR_RETURN(ModelPlan per_node, first.Run());
  bool any_record = false;
  for (const auto& site : flow.sites)
    any_record = any_record || site.per_node.source == runtime::ConfigOrigin::kRecords;
  if (!any_record) return per_node;  // nothing measured to plan with
  TUNEFARM_ASSIGN_OR_RETURN(lowering::LayoutPlan layouts, lowering::PlanLayouts(g, target, *options.configs, flow));
  lowering::LowerContext second(g, target, options);
  second.UsePlan(&layouts.choices);
  TUNEFARM_ASSIGN_OR_RETURN(ModelPlan plan, second.Run());
  plan.layouts = layouts.summary;
  return plan;
}

}  // namespace tunefarm::compiler
