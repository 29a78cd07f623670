#include "compiler/passes/schedule_ops.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <utility>

#include "compiler/arith/linear_form.h"
#include "compiler/ir/gpu_intrinsics.h"
#include "compiler/ir/ir_equality.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_util.h"
#include "compiler/ir/ir_visitor.h"
#include "compiler/passes/simplify.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::passes {
namespace {

// The tensor-expression vocabulary this pass reads (te/tensor.h, te/schedule.h).
using ir::Expr;
using ir::IterVar;
using ir::IterVarNode;
using ir::ReduceKind;
using ir::Stmt;
using ir::Tensor;
using ir::Type;
using te::AttachKind;
using te::IterVarRelation;
using te::Placeholder;
using te::Schedule;
using te::Stage;

struct Region {
  std::vector<Expr> mins;
  std::vector<int64_t> extents;
  std::vector<ir::RegionFold> folds;  // empty, or per dimension (ProducerRealize's)
};

Region FullRegion(const Tensor& t) {
  Region r;
  for (int64_t s : t->shape) {
    r.mins.push_back(Expr(0));
    r.extents.push_back(s);
  }
  return r;
}

Expr Identity(ReduceKind kind, Type t) {
  if (kind == ReduceKind::kMax && t.is_float()) return ir::FloatImm::Make(t, -std::numeric_limits<float>::infinity());
  if (kind == ReduceKind::kMax) {
    return ir::IntImm::Make(t, t.code == Type::kUInt ? 0 : -(int64_t(1) << (t.bits - 1)));
  }
  const double identity = kind == ReduceKind::kProd ? 1.0 : 0.0;
  return t.is_float() ? ir::FloatImm::Make(t, identity) : ir::IntImm::Make(t, int64_t(identity));
}

Expr Combine(ReduceKind kind, const Expr& acc, const Expr& value) {
  switch (kind) {
    case ReduceKind::kSum:
      return acc + value;
    case ReduceKind::kProd:
      return acc * value;
    case ReduceKind::kMax:
    case ReduceKind::kNone:
      break;
  }
  return ir::max(acc, value);
}

struct ThreadLoop {
  const ir::VarNode* var;
  int64_t extent;
};

// What a stage's nest exposes to the stages attached inside it: its body in terms of its leaf
// loop variables, and the extents of those loops.
struct NestContext {
  Expr body;
  std::unordered_map<const IterVarNode*, int64_t> ext;
};

class StageLowering {
 public:
  explicit StageLowering(const Schedule& sch) : sch_(sch) {}

  // The nest that computes `region` of stage s (attached stages of s are emitted inside). A root
  // stage that follows a symbolic size (te::LeadingExtent) computes its axis `rows_axis` only below
  // `rows`, a run-time value at most that axis's extent: the loops derived from the axis get
  // run-time extents where whole tiles can be skipped, and one guard keeps the rest exact.
  Stmt MakeNest(const Stage& s, const Region& region, const Expr& rows = Expr(), size_t rows_axis = 0) {
    std::unordered_map<const IterVarNode*, int64_t> ext;
    for (size_t d = 0; d < s.axes.size(); ++d) ext[s.axes[d].get()] = region.extents[d];
    for (const auto& r : s.reduce_axes) ext[r.get()] = r->extent;
    for (const auto& rel : s.relations) {
      if (rel.kind == IterVarRelation::kSplit) {
        int64_t p = ext.at(rel.parent.get());
        int64_t inner = std::min(rel.factor, p);
        ext[rel.inner.get()] = inner;
        ext[rel.outer.get()] = (p + inner - 1) / inner;
      } else {
        ext[rel.fused.get()] = ext.at(rel.outer.get()) * ext.at(rel.inner.get());
      }
    }

    // Run-time extents: the following axis's, the outer loop of a split of it (whole tiles), a fusion
    // whose outer loop has one. Inner loops keep their static extents (register tiles, vectors).
    std::unordered_map<const IterVarNode*, Expr> runtime_ext;
    if (rows.defined()) runtime_ext[s.axes[rows_axis].get()] = rows;
    for (const auto& rel : s.relations) {
      if (rel.kind == IterVarRelation::kSplit) {
        auto p = runtime_ext.find(rel.parent.get());
        const int64_t in = ext.at(rel.inner.get());
        if (p != runtime_ext.end() && ext.at(rel.outer.get()) > 1) {
          runtime_ext[rel.outer.get()] = (p->second + Expr(in - 1)) / Expr(in);
        }
      } else if (runtime_ext.count(rel.outer.get()) && !runtime_ext.count(rel.inner.get())) {
        runtime_ext[rel.fused.get()] = runtime_ext.at(rel.outer.get()) * Expr(ext.at(rel.inner.get()));
      }
    }

    std::unordered_map<const IterVarNode*, Expr> val;
    // A loop of extent 1 contributes index 0; substituting it now keeps region inference affine.
    for (const auto& leaf : s.leaf_order) {
      val[leaf.get()] = ext.at(leaf.get()) == 1 ? Expr(0) : ir::AsExpr(leaf->var);
    }
    std::vector<Expr> guards;
    for (auto it = s.relations.rbegin(); it != s.relations.rend(); ++it) {
      if (it->kind == IterVarRelation::kSplit) {
        int64_t p = ext.at(it->parent.get()), in = ext.at(it->inner.get()), out = ext.at(it->outer.get());
        val[it->parent.get()] = val.at(it->outer.get()) * Expr(in) + val.at(it->inner.get());
        if (in * out > p) guards.push_back(val.at(it->parent.get()) < Expr(p));
      } else {
        int64_t in = ext.at(it->inner.get());
        Expr f = val.at(it->fused.get());
        val[it->outer.get()] = f / Expr(in);
        val[it->inner.get()] = f % Expr(in);
      }
    }

    if (rows.defined()) guards.push_back(val.at(s.axes[rows_axis].get()) < rows);

    ir::VarMap subst;
    std::vector<Expr> indices;
    for (size_t d = 0; d < s.axes.size(); ++d) {
      Expr local = val.at(s.axes[d].get());
      if (!region.folds.empty() && region.folds[d].folded()) {  // block-strided: skip the gaps
        const ir::RegionFold& f = region.folds[d];
        local = (local / Expr(f.block)) * Expr(f.stride) + local % Expr(f.block);
      }
      Expr idx = passes::Simplify(region.mins[d] + local);
      indices.push_back(idx);
      subst[s.axes[d]->var.get()] = idx;
      // An attached region may overhang the domain (a relaxed tail tile): never compute outside.
      bool full = ir::IsConstInt(region.mins[d], 0) && region.extents[d] <= s.tensor->shape[d];
      if (!full) guards.push_back(idx < Expr(s.tensor->shape[d]));
      // A region's start may lie below 0 (a window starting left of the tensor); on GPUs, where
      // such regions are staged in shared memory, never compute there. Simplify drops the guard
      // wherever the loop ranges prove it.
      if (!full && in_gpu_kernel_) guards.push_back(idx >= Expr(0));
    }
    for (const auto& r : s.reduce_axes) subst[r->var.get()] = val.at(r.get());
    Expr body = ir::Substitute(s.body, subst);

    const NestContext ctx{body, ext};
    Stmt update, init;
    if (s.reduce == ReduceKind::kNone) {
      update = ir::ProducerStore::Make(s.tensor, body, indices);
    } else {
      Expr acc = te::Read(s.tensor, indices);
      Expr combined = Combine(s.reduce, acc, body);
      update = ir::ProducerStore::Make(s.tensor, combined, indices);
      init = ir::ProducerStore::Make(s.tensor, Identity(s.reduce, s.tensor->dtype), indices);
    }

    const size_t n = s.leaf_order.size();
    std::unordered_map<const ir::VarNode*, int> leaf_pos;
    for (size_t i = 0; i < n; ++i) leaf_pos[s.leaf_order[i]->var.get()] = int(i);
    auto position_of = [&](const Expr& g) {
      int pos = -1;
      ir::PreOrderVisit(ir::Evaluate::Make(g), [&](const Expr& e) {
        if (const auto* v = e.as<ir::VarNode>()) {
          auto it = leaf_pos.find(v);
          if (it != leaf_pos.end()) pos = std::max(pos, it->second);
        }
      });
      return pos;
    };
    std::vector<int> guard_pos;
    guard_pos.reserve(guards.size());
    for (const Expr& g : guards) guard_pos.push_back(position_of(g));
    // In a GPU kernel every guard sits right around the store: a guard further out could enclose
    // an attached shared-memory fetch and its barriers, which all threads of a block must reach.
    if (in_gpu_kernel_) {
      for (int& p : guard_pos) p = int(n) - 1;
    }

    int first_reduce = -1;
    for (size_t i = 0; i < n; ++i) {
      if (s.leaf_order[i]->is_reduce) {
        first_reduce = int(i);
        break;
      }
    }
    // A reduce loop bound to GPU threads is a cross-thread reduction: each thread contributes its
    // value and every thread receives the total (ThreadAllReduce), so there is no init and the
    // store writes the total. All threads must reach the all-reduce, so the guards go around the
    // store, and a guarded-off thread contributes the identity: its operand is computed under
    // the guards into a register first (never a read outside the tensor).
    if (first_reduce >= 0 && in_gpu_kernel_) {
      const IterVar& leaf = s.leaf_order[size_t(first_reduce)];
      auto ann = s.annotations.find(leaf.get());
      if (ann != s.annotations.end() && ir::IsGpuThreadLoop(ann->second)) {
        TUNEFARM_CHECK_MSG(
            s.reduce_axes.size() == 1 && s.reduce_axes[0] == leaf,
            ("stage " + s.tensor->name + ": a reduction bound to GPU threads needs one unsplit reduce axis").c_str());
        TUNEFARM_CHECK_MSG(
            s.reduce != ReduceKind::kProd,
            ("stage " + s.tensor->name + ": cross-thread reductions sum or take the max, not a product").c_str());
        const bool is_max = s.reduce == ReduceKind::kMax;
        const int dim = ir::GpuDimension(ann->second);
        ir::Var total = ir::MakeVar(s.tensor->name + ".total", body.type());
        Stmt store = ir::ProducerStore::Make(s.tensor, ir::AsExpr(total), indices);
        for (const Expr& g : guards) store = ir::IfThenElse::Make(g, store, Stmt(), /*likely=*/true);
        if (guards.empty()) {
          update = ir::LetStmt::Make(total, ir::ThreadAllReduce(is_max, body, dim), store);
        } else {
          Tensor operand = Placeholder(s.tensor->name + ".operand", {1}, s.tensor->dtype);
          Stmt compute = ir::ProducerStore::Make(operand, body, {Expr(0)});
          for (const Expr& g : guards) compute = ir::IfThenElse::Make(g, compute, Stmt(), /*likely=*/true);
          Stmt reduce = ir::LetStmt::Make(total, ir::ThreadAllReduce(is_max, te::Read(operand, {Expr(0)}), dim), store);
          update = ir::ProducerRealize::Make(
              operand, {Expr(0)}, {1},
              ir::Block::Make(
                  {ir::ProducerStore::Make(operand, Identity(s.reduce, s.tensor->dtype), {Expr(0)}), compute, reduce}),
              ir::MemoryScope::kLocal);
        }
        guards.clear();
        guard_pos.clear();
        first_reduce = -1;  // no init
      }
    }

    auto wrap_guards = [&](Stmt stmt, int pos, bool data_only) {
      for (size_t g = 0; g < guards.size(); ++g) {
        if (guard_pos[g] != pos) continue;
        if (data_only && UsesReduceVar(s, guards[g])) continue;
        stmt = ir::IfThenElse::Make(guards[g], stmt, Stmt(), /*likely=*/true);
      }
      return stmt;
    };
    auto make_for = [&](const IterVar& leaf, Stmt stmt) {
      auto ann = s.annotations.find(leaf.get());
      ir::ForKind kind = ann == s.annotations.end() ? ir::ForKind::kSerial : ann->second;
      auto runtime = runtime_ext.find(leaf.get());
      Expr extent = runtime == runtime_ext.end() ? Expr(ext.at(leaf.get())) : runtime->second;
      return ir::For::Make(leaf->var, Expr(0), extent, kind, std::move(stmt));
    };

    // The reduction's init nest: the data-parallel leaves inside the first reduce loop.
    Stmt init_nest;
    if (first_reduce >= 0) {
      init_nest = init;
      for (int l = int(n) - 1; l >= first_reduce; --l) {
        init_nest = wrap_guards(init_nest, l, /*data_only=*/true);
        if (!s.leaf_order[l]->is_reduce) init_nest = make_for(s.leaf_order[l], init_nest);
      }
    }

    Stmt stmt = update;
    for (int l = int(n) - 1; l >= 0; --l) {
      stmt = wrap_guards(stmt, l, false);
      stmt = EmitAttached(s, l, stmt, ctx);
      stmt = make_for(s.leaf_order[l], stmt);
      if (l == first_reduce) stmt = ir::Block::Make({init_nest, stmt});
    }
    stmt = wrap_guards(stmt, -1, false);
    return stmt;
  }

  Stmt LowerAll() {
    std::vector<const Stage*> roots;
    for (const auto& st : sch_.stages()) {
      if (st->attach == AttachKind::kRoot && !st->inlined) roots.push_back(st.get());
    }
    const std::optional<te::LeadingExtent>& leading = sch_.leading_extent();
    const ir::Var size = ir::MakeVar(leading ? leading->size->name : "size");
    Stmt program;
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) {
      const Stage* s = *it;
      Region full = FullRegion(s->tensor);
      in_gpu_kernel_ = false;
      for (const auto& [iv, kind] : s->annotations) in_gpu_kernel_ = in_gpu_kernel_ || ir::IsGpuLoop(kind);
      Expr rows;
      size_t rows_axis = 0;
      if (leading) {
        auto follow = leading->follows.find(s->tensor.get());
        if (follow != leading->follows.end()) {
          rows = Expr(follow->second.scale) * ir::AsExpr(size);
          rows_axis = size_t(follow->second.axis);
        }
      }
      Stmt nest = MakeNest(*s, full, rows, rows_axis);
      program = program.defined() ? ir::Block::Make({nest, program}) : nest;
      if (!IsOutput(s->tensor)) {
        program = ir::ProducerRealize::Make(s->tensor, full.mins, full.extents, program, s->scope);
      }
    }
    if (leading) {
      // Clamped to the range: a size tensor written wrong can never make a loop leave the storage.
      Expr given = te::Read(leading->size, {Expr(0)});
      program = ir::LetStmt::Make(size, ir::max(ir::min(given, Expr(leading->max)), Expr(leading->min)), program);
    }
    return program;
  }

 private:
  bool IsOutput(const Tensor& t) const {
    const auto& outs = sch_.outputs();
    return std::find(outs.begin(), outs.end(), t) != outs.end();
  }

  static bool UsesReduceVar(const Stage& s, const Expr& e) {
    return ir::UsesVar(e, [&](const ir::VarNode* v) {
      for (const auto& leaf : s.leaf_order) {
        if (leaf->is_reduce && leaf->var.get() == v) return true;
      }
      return false;
    });
  }

  // Wraps stmt (the body of s's leaf loop l) with the stages attached at that loop.
  Stmt EmitAttached(const Stage& s, int l, Stmt stmt, const NestContext& ctx) {
    const IterVar& leaf = s.leaf_order[l];
    const auto& stages = sch_.stages();
    // The thread loops around the attach point: s's own down to l, and those around s.
    std::vector<ThreadLoop> threads = thread_loops_;
    for (int i = 0; i <= l; ++i) {
      auto ann = s.annotations.find(s.leaf_order[size_t(i)].get());
      if (ann != s.annotations.end() && ir::IsGpuThreadLoop(ann->second)) {
        threads.push_back({s.leaf_order[size_t(i)]->var.get(), ctx.ext.at(s.leaf_order[size_t(i)].get())});
      }
    }
    // Producers come earlier in stage order; emit the last one innermost so earlier ones
    // (which later ones may read) are computed first. Shared-memory fetches at one loop share
    // their barriers: every fetch, one barrier, the readers, one barrier before the next round
    // overwrites the buffers.
    std::vector<const Stage*> attached;
    for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
      const Stage& c = **it;
      if (c.attach == AttachKind::kAt && c.attach_stage == &s && c.attach_ivar == leaf && !c.inlined)
        attached.push_back(&c);
    }
    std::vector<ThreadLoop> saved = thread_loops_;
    arith::VarBounds saved_bounds = outer_bounds_;
    thread_loops_ = threads;
    for (const auto& leaf : s.leaf_order) outer_bounds_[leaf->var.get()] = {0, ctx.ext.at(leaf.get()) - 1};
    auto emit = [&](const Stage* c) {
      const bool shared = c->scope == ir::MemoryScope::kShared;
      // A thread's registers hold exactly its outputs, also when virtual threads spread them out.
      const bool foldable = in_gpu_kernel_ && c->scope == ir::MemoryScope::kLocal;
      Region region = InferRegion(c->tensor, s, l, ctx, shared ? threads : std::vector<ThreadLoop>{}, foldable);
      Stmt nest = MakeNest(*c, region);
      stmt = ir::ProducerRealize::Make(c->tensor, region.mins, region.extents, ir::Block::Make({nest, stmt}), c->scope,
                                       region.folds);
    };
    // Stages in registers or global memory first (innermost), so they too run after the barrier
    // that ends the shared fetches.
    bool any_shared = false;
    for (const Stage* c : attached) {
      if (c->scope == ir::MemoryScope::kShared) {
        any_shared = true;
      } else {
        emit(c);
      }
    }
    if (any_shared) {
      stmt = ir::Block::Make(
          {ir::Barrier::Make(ir::MemoryScope::kShared), stmt, ir::Barrier::Make(ir::MemoryScope::kShared)});
    }
    for (const Stage* c : attached) {
      if (c->scope == ir::MemoryScope::kShared) emit(c);
    }
    thread_loops_ = saved;
    outer_bounds_ = saved_bounds;
    return stmt;
  }

  // The region of `producer` that consumer s reads inside its leaf loop l, as mins (in terms of
  // the loops outside l) and constant extents; relaxed over `threads` too (a shared buffer holds
  // what every thread of the block reads).
  Region InferRegion(const Tensor& producer, const Stage& s, int l, const NestContext& ctx,
                     const std::vector<ThreadLoop>& threads, bool foldable = false) {
    Region full = FullRegion(producer);
    std::vector<std::vector<Expr>> accesses;
    ir::PreOrderVisit(ir::Evaluate::Make(ctx.body), [&](const Expr& e) {
      if (const auto* p = e.as<ir::ProducerLoad>(); p && p->tensor == producer) accesses.push_back(p->indices);
    });
    if (accesses.empty()) return full;

    std::unordered_map<const ir::VarNode*, int64_t> ranging;
    for (size_t i = size_t(l) + 1; i < s.leaf_order.size(); ++i) {
      ranging[s.leaf_order[i]->var.get()] = ctx.ext.at(s.leaf_order[i].get());
    }
    for (const ThreadLoop& t : threads) ranging[t.var] = t.extent;
    arith::VarBounds ranging_bounds;
    for (const auto& [v, e] : ranging) ranging_bounds[v] = {0, e - 1};

    Region out;
    out.folds.assign(producer->shape.size(), ir::RegionFold{});
    for (size_t d = 0; d < producer->shape.size(); ++d) {
      bool ok = true;
      Expr sym;
      int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
      // The ranging terms (coefficient, extent) of a single affine access: what a fold needs.
      std::vector<std::pair<int64_t, int64_t>> strided;
      bool affine = true;
      for (const auto& acc : accesses) {
        // With the loop ranges, divisions such as a grouped conv's (f / channels_per_group)
        // resolve to the group's loop and the region stays one group wide.
        arith::LinearForm lf = arith::ToLinearForm(passes::Simplify(acc[d], outer_bounds_));
        arith::LinearForm rest;
        int64_t a_lo = lf.constant, a_hi = lf.constant;
        for (const auto& t : lf.terms) {
          const auto* v = t.atom.as<ir::VarNode>();
          auto it = v ? ranging.find(v) : ranging.end();
          const bool uses_ranging = ir::UsesVar(t.atom, [&](const ir::VarNode* u) { return ranging.count(u) > 0; });
          const bool uses_other = ir::UsesVar(t.atom, [&](const ir::VarNode* u) { return ranging.count(u) == 0; });
          if (it != ranging.end()) {
            int64_t span = t.coeff * (it->second - 1);
            a_lo += std::min<int64_t>(0, span);
            a_hi += std::max<int64_t>(0, span);
            strided.emplace_back(t.coeff, it->second);
          } else if (uses_ranging && !uses_other) {
            // Non-affine in ranging variables only (a folded region's (i / b) * s + i % b): its
            // interval bounds the footprint.
            affine = false;
            arith::IntBound b = arith::BoundOf(t.atom * Expr(t.coeff), ranging_bounds);
            if (!b.bounded()) {
              ok = false;
            } else {
              a_lo += b.lo;
              a_hi += b.hi;
            }
          } else if (uses_ranging) {
            ok = false;  // non-affine in a ranging variable mixed with outer ones
          } else {
            rest.AddTerm(t.atom, t.coeff);
          }
        }
        Expr this_sym = arith::FromLinearForm(rest);
        if (!sym.defined()) {
          sym = this_sym;
        } else if (!ir::ExprDeepEqual(sym, this_sym)) {
          ok = false;
        }
        lo = std::min(lo, a_lo);
        hi = std::max(hi, a_hi);
      }
      int64_t extent = hi - lo + 1;
      bool sym_zero = ir::IsConstInt(sym, 0);
      // Virtual threads: one access reading `count` blocks of `block` consecutive indices that lie
      // `stride` apart; the region holds just those (ProducerRealize's fold).
      ir::RegionFold fold;
      if (foldable && ok && affine && accesses.size() == 1) {
        std::sort(strided.begin(), strided.end());
        // A lone ranging term of stride > 1 is blocks of one (an inner tile of 1 leaves no term).
        if (strided.size() == 1) strided.insert(strided.begin(), {1, 1});
        if (strided.size() == 2) {
          const auto [c0, e0] = strided[0];
          const auto [c1, e1] = strided[1];
          if (c0 == 1 && e0 > 0 && c1 > e0 && e1 > 1) fold = {c1, e0};
        }
      }
      if (!ok || extent >= producer->shape[d] || (sym_zero && lo < 0)) {
        out.mins.push_back(Expr(0));
        out.extents.push_back(producer->shape[d]);
      } else if (fold.folded()) {
        out.mins.push_back(passes::Simplify(sym + Expr(lo)));
        out.extents.push_back(strided[1].second * fold.block);
        out.folds[d] = fold;
      } else {
        out.mins.push_back(passes::Simplify(sym + Expr(lo)));
        out.extents.push_back(extent);
      }
    }
    return out;
  }

  const Schedule& sch_;
  // While a nest is built: the GPU thread loops around it, and whether its root is a GPU kernel.
  std::vector<ThreadLoop> thread_loops_;
  bool in_gpu_kernel_ = false;
  // The ranges of every loop around the attach point being inferred (for Simplify's proofs).
  arith::VarBounds outer_bounds_;
};

}  // namespace

Stmt ScheduleOps(const Schedule& schedule) { return StageLowering(schedule).LowerAll(); }

}  // namespace tunefarm::passes
