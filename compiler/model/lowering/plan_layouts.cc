#include "compiler/model/lowering/plan_layouts.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "compiler/schedule/template_table.h"
#include "tunefarm/compiler/kernel.h"

namespace tunefarm::lowering {
namespace {

// Records per implementation the planner reads: enough to hold the best of every block pair of
// a tuned task (a task's records are a few dozen to a few hundred trials).
constexpr int kRecordsPlanned = 512;
// The dynamic programming's state limit; past it the cheapest states are kept (a beam).
constexpr size_t kMaxStates = 4096;
// Layout-change kernels copy one tensor into another blocking: about 8 GB/s here (resnet-18's
// 56x56x64 change took 0.10 ms, its 3x224x224 input's 0.17 ms), plus a kernel launch.
constexpr double kLayoutChangeBytesPerMs = 8e6;
constexpr double kLayoutChangeLaunchMs = 0.002;

using Blocks = compiler::OpTemplate::Blocks;

struct Candidate {
  LowerContext::Choice choice;
  Blocks blocks;
  double ms = 0;
};

// Where a value's block comes from: fixed by the graph, or the input or output block of the
// candidate a site picks.
struct Ref {
  enum Kind { kFixed, kSiteIn, kSiteOut };
  Kind kind = kFixed;
  int site = -1;
  int64_t block = 0;
  auto Tie() const { return std::make_tuple(int(kind), site, block); }
  bool operator==(const Ref& o) const { return Tie() == o.Tie(); }
};

// A read that costs a layout change when the block it has differs from the block it wants.
struct Edge {
  Ref have, want;
  double ms = 0;
};

struct Problem {
  std::vector<std::vector<Candidate>> candidates;  // per site
  std::vector<int> per_node;                       // per site: the per-node choice's candidate
  std::vector<Edge> edges;
};

int64_t BlockOf(const Ref& r, const Problem& p, const std::vector<int>& pick) {
  if (r.kind == Ref::kFixed) return r.block;
  const Blocks& b = p.candidates[size_t(r.site)][size_t(pick[size_t(r.site)])].blocks;
  return r.kind == Ref::kSiteIn ? b.in : b.out;
}

// Blocks 0 and 1 are the same bytes (LowerContext::Get views one as the other).
bool SameLayout(int64_t a, int64_t b) { return a == b || (a <= 1 && b <= 1); }

double EdgeMs(const Edge& e, const Problem& p, const std::vector<int>& pick) {
  return SameLayout(BlockOf(e.have, p, pick), BlockOf(e.want, p, pick)) ? 0.0 : e.ms;
}

struct Totals {
  double kernels_ms = 0, transforms_ms = 0;
};

Totals Evaluate(const Problem& p, const std::vector<int>& pick) {
  Totals t;
  for (size_t s = 0; s < p.candidates.size(); ++s) t.kernels_ms += p.candidates[s][size_t(pick[s])].ms;
  for (const Edge& e : p.edges) t.transforms_ms += EdgeMs(e, p, pick);
  return t;
}

// Every (input block, output block) pair the records of a site's implementations offer, each with
// its fastest record; the per-node choice alone when there is no valid record.
Result<std::vector<Candidate>> SiteCandidates(const LayoutFlow::Site& site, const compiler::ConfigSource& configs,
                                              const compiler::Target& target, int* per_node) {
  std::map<std::pair<int64_t, int64_t>, Candidate> best;
  for (const compiler::Workload& w : site.implementations) {
    TUNEFARM_ASSIGN_OR_RETURN(const compiler::OpTemplate* tmpl, compiler::FindTemplate(w.implementation));
    if (!tmpl->Check(w).ok()) continue;
    const compiler::ConfigSpace space = tmpl->Space(w, target);
    TUNEFARM_ASSIGN_OR_RETURN(auto records, ValidRecords(configs, w, target, kRecordsPlanned));
    for (const compiler::BestConfig& r : records) {
      TUNEFARM_ASSIGN_OR_RETURN(compiler::Config cfg, space.Get(r.config_index));
      const Blocks b = tmpl->ActivationBlocks(w, cfg);
      auto [it, fresh] = best.try_emplace({b.in, b.out});
      if (!fresh && it->second.ms <= r.cost_ms) continue;
      it->second.choice = {w, r.config_index, runtime::ConfigOrigin::kRecords, site.per_node.candidates};
      it->second.blocks = b;
      it->second.ms = r.cost_ms;
    }
  }
  std::vector<Candidate> out;
  *per_node = -1;
  for (auto& [key, c] : best) {
    if (c.choice.workload.ImplementationKey() == site.per_node.workload.ImplementationKey() &&
        c.choice.config_index == site.per_node.config_index) {
      *per_node = int(out.size());
    }
    out.push_back(std::move(c));
  }
  if (*per_node >= 0) return out;
  // No record (the fallback), or a per-node record this pass did not see: the per-node choice
  // joins as a candidate of its own, at the best time known for its blocks.
  Candidate c;
  c.choice = site.per_node;
  TUNEFARM_ASSIGN_OR_RETURN(const compiler::OpTemplate* tmpl, compiler::FindTemplate(c.choice.workload.implementation));
  const compiler::ConfigSpace space = tmpl->Space(c.choice.workload, target);  // outlives cfg, which points into it
  TUNEFARM_ASSIGN_OR_RETURN(compiler::Config cfg, space.Get(c.choice.config_index));
  c.blocks = tmpl->ActivationBlocks(c.choice.workload, cfg);
  for (const Candidate& o : out) {
    if (o.blocks == c.blocks) c.ms = o.ms;
  }
  *per_node = int(out.size());
  out.push_back(std::move(c));
  return out;
}

// The reads between sites: each convolution's input and residual, and each binary op's second
// operand, against the block the value was computed in.
std::vector<Edge> FlowEdges(const graph::Graph& g, const LayoutFlow& flow, const std::map<int, int>& site_of_node) {
  std::vector<Ref> ref(g.values.size());
  for (size_t v = 0; v < g.values.size() && v < flow.home_block.size(); ++v) ref[v].block = flow.home_block[v];
  auto blocked = [&](int v) {
    return v >= 0 && !g.values[size_t(v)].constant && size_t(v) < flow.home_block.size() &&
           flow.home_block[size_t(v)] != 0;
  };
  std::vector<Edge> edges;
  std::set<std::tuple<int, int, int, int64_t>> seen;  // (value, wanted ref): one change per value and block
  auto read = [&](int v, const Ref& want) {
    if (v < 0 || g.values[size_t(v)].constant) return;
    const Ref& have = ref[size_t(v)];
    if (have == want || (have.kind == Ref::kFixed && want.kind == Ref::kFixed)) return;  // no choice changes these
    if (!seen.insert({v, int(want.kind), want.site, want.block}).second) return;
    const graph::Value& value = g.values[size_t(v)];
    double bytes = double(runtime::ElementSize(ToElementType(value.dtype)));
    for (int64_t d : value.shape) bytes *= double(d);
    edges.push_back({have, want, LayoutChangeMs(bytes)});
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const graph::Node& n = g.nodes[i];
    auto site = site_of_node.find(int(i));
    if (site != site_of_node.end()) {
      if (!n.inputs.empty()) read(n.inputs[0], {Ref::kSiteIn, site->second, 0});
      if (n.inputs.size() > 3) read(n.inputs[3], {Ref::kSiteOut, site->second, 0});  // the fused residual
      for (int o : n.outputs) ref[size_t(o)] = {Ref::kSiteOut, site->second, 0};
      continue;
    }
    // A layout-keeping op (element-wise, pooling) computes in its first blocked input's block and
    // changes the others' to it.
    int primary = -1;
    for (int v : n.inputs) {
      if (blocked(v)) {
        primary = v;
        break;
      }
    }
    if (primary < 0) continue;
    bool keeps = false;
    for (int o : n.outputs) {
      if (o >= 0 && size_t(o) < flow.home_block.size() &&
          flow.home_block[size_t(o)] == flow.home_block[size_t(primary)]) {
        ref[size_t(o)] = ref[size_t(primary)];
        keeps = true;
      }
    }
    if (!keeps) continue;  // a plain-layout reader: its change costs the same whatever the block
    for (int v : n.inputs) {
      if (v != primary && blocked(v)) read(v, ref[size_t(primary)]);
    }
  }
  return edges;
}

// Dynamic programming over the sites in graph order. A state is the picks of the sites still
// joined by an edge to a later one; each step extends every state by each candidate of the next
// site, adds its time and the edges it closes, and merges states that agree on what is left.
std::vector<int> Solve(const Problem& p, bool* exact) {
  const size_t n = p.candidates.size();
  std::vector<std::vector<const Edge*>> closing(n);  // edges whose later site is s
  std::vector<size_t> last_use(n);
  for (size_t s = 0; s < n; ++s) last_use[s] = s;
  for (const Edge& e : p.edges) {
    int a = e.have.kind == Ref::kFixed ? -1 : e.have.site, b = e.want.kind == Ref::kFixed ? -1 : e.want.site;
    const int later = std::max(a, b), earlier = std::min(a, b);
    closing[size_t(later)].push_back(&e);
    if (earlier >= 0) last_use[size_t(earlier)] = std::max(last_use[size_t(earlier)], size_t(later));
  }
  struct State {
    std::vector<int> pick;
    double cost = 0;
  };
  std::vector<State> states(1, State{std::vector<int>(n, -1), 0.0});
  for (size_t k = 0; k < n; ++k) {
    std::map<std::vector<int>, State> merged;
    for (const State& st : states) {
      for (size_t d = 0; d < p.candidates[k].size(); ++d) {
        State next = st;
        next.pick[k] = int(d);
        next.cost += p.candidates[k][d].ms;
        for (const Edge* e : closing[k]) next.cost += EdgeMs(*e, p, next.pick);
        std::vector<int> key;
        for (size_t j = 0; j <= k; ++j) key.push_back(last_use[j] > k ? next.pick[j] : -1);
        auto [it, fresh] = merged.try_emplace(std::move(key), next);
        if (!fresh && next.cost < it->second.cost) it->second = std::move(next);
      }
    }
    states.clear();
    for (auto& [key, st] : merged) states.push_back(std::move(st));
    if (states.size() > kMaxStates) {
      std::nth_element(states.begin(), states.begin() + kMaxStates, states.end(),
                       [](const State& a, const State& b) { return a.cost < b.cost; });
      states.resize(kMaxStates);
      *exact = false;
    }
  }
  const auto best =
      std::min_element(states.begin(), states.end(), [](const State& a, const State& b) { return a.cost < b.cost; });
  return best->pick;
}

}  // namespace

double LayoutChangeMs(double bytes) { return kLayoutChangeLaunchMs + 2 * bytes / kLayoutChangeBytesPerMs; }

Result<LayoutPlan> PlanLayouts(const graph::Graph& g, const compiler::Target& target,
                               const compiler::ConfigSource& configs, const LayoutFlow& flow) {
  Problem p;
  LayoutPlan plan;
  std::map<int, int> site_of_node;
  for (const LayoutFlow::Site& site : flow.sites) {
    int per_node = -1;
    TUNEFARM_ASSIGN_OR_RETURN(auto candidates, SiteCandidates(site, configs, target, &per_node));
    if (site.per_node.source == runtime::ConfigOrigin::kRecords) plan.summary.planned++;
    site_of_node[site.node] = int(p.candidates.size());
    p.candidates.push_back(std::move(candidates));
    p.per_node.push_back(per_node);
  }
  p.edges = FlowEdges(g, flow, site_of_node);
  std::vector<int> pick = p.candidates.empty() ? std::vector<int>() : Solve(p, &plan.summary.exact);
  const Totals per_node = Evaluate(p, p.per_node);
  Totals planned = Evaluate(p, pick);
  if (planned.kernels_ms + planned.transforms_ms > per_node.kernels_ms + per_node.transforms_ms) {
    pick = p.per_node;  // only where the beam lost the optimum
    planned = per_node;
  }
  plan.summary.ran = true;
  plan.summary.per_node_ms = per_node.kernels_ms + per_node.transforms_ms;
  plan.summary.per_node_transform_ms = per_node.transforms_ms;
  plan.summary.planned_ms = planned.kernels_ms + planned.transforms_ms;
  plan.summary.planned_transform_ms = planned.transforms_ms;
  for (size_t s = 0; s < flow.sites.size(); ++s) {
    plan.choices[flow.sites[s].node] = p.candidates[s][size_t(pick[s])].choice;
    if (pick[s] != p.per_node[s]) plan.summary.changed++;
  }
  return plan;
}

}  // namespace tunefarm::lowering
