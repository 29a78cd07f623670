#include "compiler/te/schedule.h"

#include <algorithm>
#include <functional>
#include <set>

#include "compiler/ir/ir_util.h"
#include "compiler/ir/ir_visitor.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::te {

std::vector<Tensor> ReadTensors(const Expr& body) {
  std::vector<Tensor> out;
  ir::PreOrderVisit(ir::Evaluate::Make(body), [&](const Expr& e) {
    if (const auto* p = e.as<ir::ProducerLoad>()) {
      if (std::find(out.begin(), out.end(), p->tensor) == out.end()) out.push_back(p->tensor);
    }
  });
  return out;
}

size_t Stage::LeafIndex(const IterVar& iv) const {
  auto it = std::find(leaf_order.begin(), leaf_order.end(), iv);
  TUNEFARM_CHECK_MSG(it != leaf_order.end(), ("not a leaf of " + tensor->name + ": " + iv->var->name).c_str());
  return size_t(it - leaf_order.begin());
}

std::pair<IterVar, IterVar> Stage::split(const IterVar& iv, int64_t factor) {
  TUNEFARM_CHECK(factor >= 1);
  size_t pos = LeafIndex(iv);
  IterVar outer = MakeIterVar(iv->var->name + ".o", (iv->extent + factor - 1) / factor, iv->is_reduce);
  IterVar inner = MakeIterVar(iv->var->name + ".i", factor, iv->is_reduce);
  IterVarRelation r{IterVarRelation::kSplit, iv, outer, inner, nullptr, factor};
  relations.push_back(r);
  leaf_order[pos] = outer;
  leaf_order.insert(leaf_order.begin() + long(pos) + 1, inner);
  return {outer, inner};
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner) {
  size_t po = LeafIndex(outer), pi = LeafIndex(inner);
  TUNEFARM_CHECK_MSG(pi == po + 1, "fuse needs adjacent leaves, outer first");
  TUNEFARM_CHECK(outer->is_reduce == inner->is_reduce);
  IterVar fused = MakeIterVar(outer->var->name + "." + inner->var->name, outer->extent * inner->extent,
                              outer->is_reduce);
  relations.push_back({IterVarRelation::kFuse, nullptr, outer, inner, fused, 0});
  leaf_order[po] = fused;
  leaf_order.erase(leaf_order.begin() + long(pi));
  return fused;
}

void Stage::reorder(const std::vector<IterVar>& order) {
  std::vector<size_t> positions;
  for (const auto& iv : order) positions.push_back(LeafIndex(iv));
  std::set<size_t> unique(positions.begin(), positions.end());
  TUNEFARM_CHECK_MSG(unique.size() == positions.size(), "reorder lists a leaf twice");
  std::sort(positions.begin(), positions.end());
  for (size_t i = 0; i < order.size(); ++i) leaf_order[positions[i]] = order[i];
}

void Stage::annotate(const IterVar& iv, ir::ForKind kind) {
  LeafIndex(iv);
  annotations[iv.get()] = kind;
}

void Stage::compute_at(Stage& consumer, const IterVar& iv) {
  consumer.LeafIndex(iv);
  attach = AttachKind::kAt;
  attach_stage = &consumer;
  attach_ivar = iv;
}

namespace {
std::unique_ptr<Stage> MakeStage(const Tensor& t) {
  auto s = std::make_unique<Stage>();
  s->tensor = t;
  s->body = t->body;
  s->axes = t->axes;
  s->reduce_axes = t->reduce_axes;
  s->reduce = t->reduce;
  s->leaf_order = t->axes;
  s->leaf_order.insert(s->leaf_order.end(), t->reduce_axes.begin(), t->reduce_axes.end());
  return s;
}
}  // namespace

Schedule::Schedule(std::vector<Tensor> outputs) : outputs_(std::move(outputs)) {
  std::set<const ir::TensorNode*> visited;
  std::function<void(const Tensor&)> visit = [&](const Tensor& t) {
    if (t->is_placeholder || !visited.insert(t.get()).second) return;
    for (const Tensor& in : ReadTensors(t->body)) visit(in);
    stages_.push_back(MakeStage(t));
  };
  for (const Tensor& t : outputs_) visit(t);
}

Stage& Schedule::operator[](const Tensor& t) {
  for (auto& s : stages_) {
    if (s->tensor == t) return *s;
  }
  TUNEFARM_CHECK_MSG(false, ("no stage for tensor " + t->name).c_str());
  return *stages_.front();
}

Tensor Schedule::cache_write(const Tensor& t) {
  Stage& orig = (*this)[t];
  TUNEFARM_CHECK_MSG(orig.relations.empty(), "cache_write must come before other primitives");
  auto cache = std::make_shared<ir::TensorNode>();
  cache->name = t->name + ".local";
  cache->shape = t->shape;
  cache->dtype = t->dtype;
  cache->is_placeholder = false;
  ir::VarMap remap;
  for (size_t d = 0; d < orig.axes.size(); ++d) {
    cache->axes.push_back(MakeIterVar(cache->name + "." + orig.axes[d]->var->name, orig.axes[d]->extent, false));
    remap[orig.axes[d]->var.get()] = AxisExpr(cache->axes.back());
  }
  cache->reduce_axes = orig.reduce_axes;
  cache->reduce = orig.reduce;
  cache->body = ir::Substitute(orig.body, remap);
  Tensor cache_tensor = cache;

  auto cache_stage = MakeStage(cache_tensor);
  std::vector<Expr> idx;
  for (const auto& a : orig.axes) idx.push_back(AxisExpr(a));
  orig.body = Read(cache_tensor, idx);
  orig.reduce_axes.clear();
  orig.reduce = ReduceKind::kNone;
  orig.leaf_order = orig.axes;

  auto pos = std::find_if(stages_.begin(), stages_.end(), [&](const auto& s) { return s.get() == &orig; });
  stages_.insert(pos, std::move(cache_stage));
  return cache_tensor;
}

}  // namespace tunefarm::te
