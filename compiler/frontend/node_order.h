// NodeOrder: the order to import a graph's nodes in. ONNX requires the node list to be sorted
// topologically, and some converters do not sort it (a float16 converter appends its Casts at the
// end; ONNX Runtime sorts the graph itself), so the importer sorts it too: each node after every
// node producing a value it reads, directly or from inside its subgraphs (an If branch reading an
// outer value). The sort is stable: a list already in order keeps its order.
#ifndef TUNEFARM_COMPILER_FRONTEND_NODE_ORDER_H_
#define TUNEFARM_COMPILER_FRONTEND_NODE_ORDER_H_

#include <string>
#include <vector>

#include "tunefarm/runtime/result.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <onnx/onnx_pb.h>
#pragma GCC diagnostic pop

namespace tunefarm::frontend {

// Indices into `nodes` in an order where every producer precedes its readers (values produced by
// no node of the list -- inputs, initializers, outer values -- impose nothing). A cycle is
// InvalidArgument naming the nodes on it; `where` names the graph ("the main graph", "If 'x' then
// branch").
Result<std::vector<int>> NodeOrder(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                                   const std::string& where);

}  // namespace tunefarm::frontend

#endif  // TUNEFARM_COMPILER_FRONTEND_NODE_ORDER_H_
