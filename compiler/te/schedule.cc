#include "compiler/te/schedule.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <set>

#include "compiler/ir/ir_mutator.h"
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
  leaf_order.insert(leaf_order.begin() + std::ptrdiff_t(pos) + 1, inner);
  return {outer, inner};
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner) {
  size_t po = LeafIndex(outer), pi = LeafIndex(inner);
  TUNEFARM_CHECK_MSG(pi == po + 1, "fuse needs adjacent leaves, outer first");
  TUNEFARM_CHECK(outer->is_reduce == inner->is_reduce);
  IterVar fused =
      MakeIterVar(outer->var->name + "." + inner->var->name, outer->extent * inner->extent, outer->is_reduce);
  relations.push_back({IterVarRelation::kFuse, nullptr, outer, inner, fused, 0});
  leaf_order[po] = fused;
  leaf_order.erase(leaf_order.begin() + std::ptrdiff_t(pi));
  return fused;
}

void Stage::reorder(const std::vector<IterVar>& order) {
  std::vector<size_t> positions;
  positions.reserve(order.size());
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

Tensor Schedule::cache_write(const Tensor& t, ir::MemoryScope scope) {
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
  cache_stage->scope = scope;
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

namespace {

// Rewrites reads of one tensor: to another tensor at the same indices, or (inline) to a definition.
class ReadRewriter : public ir::IRMutator {
 public:
  ReadRewriter(const Tensor& from, std::function<Expr(const std::vector<Expr>&)> to)
      : from_(from), to_(std::move(to)) {}
  using ir::IRMutator::Mutate;

 protected:
  Expr Visit_(const ir::ProducerLoad* op, const Expr& self) override {
    Expr e = ir::IRMutator::Visit_(op, self);
    const auto* load = e.as<ir::ProducerLoad>();
    return load->tensor == from_ ? to_(load->indices) : e;
  }

 private:
  Tensor from_;
  std::function<Expr(const std::vector<Expr>&)> to_;
};

const char* ScopeSuffix(ir::MemoryScope scope) {
  switch (scope) {
    case ir::MemoryScope::kShared:
      return ".shared";
    case ir::MemoryScope::kLocal:
      return ".local";
    case ir::MemoryScope::kGlobal:
      break;
  }
  return ".cache";
}

}  // namespace

Tensor Schedule::cache_read(const Tensor& t, ir::MemoryScope scope, const std::vector<Tensor>& readers) {
  auto cache = std::make_shared<ir::TensorNode>();
  cache->name = t->name + ScopeSuffix(scope);
  cache->shape = t->shape;
  cache->dtype = t->dtype;
  cache->is_placeholder = false;
  std::vector<Expr> idx;
  for (size_t d = 0; d < t->shape.size(); ++d) {
    cache->axes.push_back(MakeIterVar(cache->name + ".ax" + std::to_string(d), t->shape[d], false));
    idx.push_back(AxisExpr(cache->axes.back()));
  }
  cache->body = Read(t, idx);
  Tensor cache_tensor = cache;

  // The new stage goes right before the first reader, so producers still come first.
  size_t first_reader = stages_.size();
  ReadRewriter rewrite(t, [&](const std::vector<Expr>& i) { return Read(cache_tensor, i); });
  for (const Tensor& r : readers) {
    Stage& rs = (*this)[r];
    TUNEFARM_CHECK_MSG(rs.relations.empty(), "cache_read must come before the readers' other primitives");
    rs.body = rewrite.Mutate(rs.body);
    for (size_t i = 0; i < stages_.size(); ++i) {
      if (stages_[i].get() == &rs) first_reader = std::min(first_reader, i);
    }
  }
  auto stage = MakeStage(cache_tensor);
  stage->scope = scope;
  stages_.insert(stages_.begin() + std::ptrdiff_t(first_reader), std::move(stage));
  return cache_tensor;
}

void Schedule::compute_inline(const Tensor& t) {
  Stage& st = (*this)[t];
  TUNEFARM_CHECK_MSG(st.reduce == ReduceKind::kNone, "compute_inline of a reduction");
  const Expr body = st.body;
  const std::vector<IterVar> axes = st.axes;
  ReadRewriter rewrite(t, [&](const std::vector<Expr>& i) {
    ir::VarMap map;
    for (size_t d = 0; d < axes.size(); ++d) map[axes[d]->var.get()] = i[d];
    return ir::Substitute(body, map);
  });
  for (auto& s : stages_) {
    if (s.get() != &st) s->body = rewrite.Mutate(s->body);
  }
  st.inlined = true;
}

std::set<const ir::TensorNode*> TensorsRead(const Stage& s) {
  std::set<const ir::TensorNode*> reads;
  ir::PreOrderVisit(ir::Evaluate::Make(s.body), [&](const Expr& e) {
    if (const auto* p = e.as<ir::ProducerLoad>()) reads.insert(p->tensor.get());
  });
  return reads;
}

}  // namespace tunefarm::te
