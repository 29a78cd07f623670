#include "compiler/frontend/node_order.h"

#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace tunefarm::frontend {
namespace {

using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

// Every value name a node reads: its inputs, and what the nodes of its subgraphs (If branches, and
// theirs) read, since a branch may read any value of the graphs around it.
void NamesRead(const onnx::NodeProto& node, std::unordered_set<std::string>* names) {
  for (const std::string& in : node.input()) {
    if (!in.empty()) names->insert(in);
  }
  for (const auto& a : node.attribute()) {
    if (a.has_g()) {
      for (const auto& inner : a.g().node()) NamesRead(inner, names);
    }
    for (const auto& g : a.graphs()) {
      for (const auto& inner : g.node()) NamesRead(inner, names);
    }
  }
}

std::string Describe(const onnx::NodeProto& n) {
  const std::string name = !n.name().empty() ? n.name() : n.output_size() ? n.output(0) : std::string("?");
  return "'" + name + "' (" + n.op_type() + ")";
}

}  // namespace

Result<std::vector<int>> NodeOrder(const Nodes& nodes, const std::string& where) {
  const int count = nodes.size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < count; ++i) {
    for (const std::string& out : nodes[i].output()) {
      if (!out.empty()) producer.emplace(out, i);  // a second producer of a name is the importer's error
    }
  }
  std::vector<std::vector<int>> readers(static_cast<size_t>(count));
  std::vector<int> waiting_on(size_t(count), 0);
  for (int i = 0; i < count; ++i) {
    std::unordered_set<std::string> names;
    NamesRead(nodes[i], &names);
    std::unordered_set<int> producers;
    for (const std::string& name : names) {
      auto it = producer.find(name);
      if (it != producer.end()) producers.insert(it->second);
    }
    for (int p : producers) {
      readers[size_t(p)].push_back(i);
      ++waiting_on[size_t(i)];
    }
  }
  // Kahn's algorithm taking the earliest ready node first: a sorted list comes out unchanged.
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < count; ++i) {
    if (waiting_on[size_t(i)] == 0) ready.push(i);
  }
  std::vector<int> order;
  order.reserve(size_t(count));
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int r : readers[size_t(i)]) {
      if (--waiting_on[size_t(r)] == 0) ready.push(r);
    }
  }
  if (int(order.size()) == count) return order;
  // What is left waits on itself: walk back from one of its nodes through an unsorted producer until
  // a node repeats; the nodes from there on are a cycle.
  std::vector<std::vector<int>> producers_of(static_cast<size_t>(count));
  for (int p = 0; p < count; ++p) {
    for (int r : readers[size_t(p)]) producers_of[size_t(r)].push_back(p);
  }
  int at = 0;
  while (waiting_on[size_t(at)] == 0) ++at;
  std::vector<int> path;
  std::unordered_map<int, size_t> seen;
  while (seen.emplace(at, path.size()).second) {
    path.push_back(at);
    for (int p : producers_of[size_t(at)]) {
      if (waiting_on[size_t(p)] > 0) {
        at = p;
        break;
      }
    }
  }
  // path[j + 1] produces what path[j] reads: from `at` back down the path is the direction data flows.
  std::string cycle = Describe(nodes[at]);
  for (size_t k = path.size(); k-- > seen[at];) cycle += " -> " + Describe(nodes[path[k]]);
  return Status::InvalidArgument(where + " has a cycle: " + cycle + " (each feeds the next)");
}

}  // namespace tunefarm::frontend
