// Lowering passes, each as before/expected pairs compared by structural equality.
#include <gtest/gtest.h>

#include <sstream>

#include "compiler/ir/ir_equality.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/passes/lower.h"
#include "compiler/passes/partition_loops.h"
#include "compiler/passes/remove_no_ops.h"
#include "compiler/passes/simplify.h"
#include "compiler/passes/storage_flatten.h"
#include "compiler/passes/unroll_loops.h"
#include "compiler/passes/vectorize_loops.h"
#include "compiler/te/schedule.h"

namespace tunefarm::passes {
namespace {

using namespace ir;  // NOLINT(google-build-using-namespace)

#define EXPECT_IR_EQ(actual, expected)                                                \
  EXPECT_TRUE(StructuralEqual(actual, expected)) << "actual:\n"                       \
                                                 << ToString(actual) << "expected:\n" \
                                                 << ToString(expected)

Stmt Loop(const Var& v, int64_t extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return For::Make(v, Expr(0), Expr(extent), kind, std::move(body));
}
Expr F(const Var& buf, Expr index) { return Load::Make(Type::Float(32), buf, std::move(index)); }

TEST(Simplify, FoldsConstantsAndCancelsOffsets) {
  Var x = MakeVar("x"), o = MakeVar("o");
  EXPECT_IR_EQ(Simplify((AsExpr(x) + 3) - 3), AsExpr(x));
  EXPECT_IR_EQ(Simplify(Expr(2) * 3 + 4), Expr(10));
  EXPECT_IR_EQ(Simplify((AsExpr(o) * 12 + AsExpr(x)) - AsExpr(o) * 12), AsExpr(x));
  EXPECT_IR_EQ(Simplify(Expr(7) / 2), Expr(3));
  EXPECT_IR_EQ(Simplify(Expr(-7) / 2), Expr(-4));  // floor division
  EXPECT_IR_EQ(Simplify(Expr(-7) % 2), Expr(1));   // floor modulo
}

TEST(Simplify, UsesLoopRangesForDivModAndGuards) {
  Var o = MakeVar("o"), i = MakeVar("i"), b = MakeVar("b", Type::Handle());
  // Inside i in [0, 16): (o*16 + i) / 16 == o and (o*16 + i) % 16 == i; i < 16 always holds.
  Expr idx = AsExpr(o) * 16 + AsExpr(i);
  Stmt before = Loop(i, 16, IfThenElse::Make(AsExpr(i) < 16, Store::Make(b, Expr(1.0f), idx / 16 + idx % 16)));
  Stmt expected = Loop(i, 16, Store::Make(b, Expr(1.0f), AsExpr(o) + AsExpr(i)));
  EXPECT_IR_EQ(Simplify(before), expected);
}

TEST(Simplify, DropsTrivialLoopsAndBranches) {
  Var i = MakeVar("i"), j = MakeVar("j"), b = MakeVar("b", Type::Handle());
  Stmt one = Loop(i, 1, Store::Make(b, Expr(1.0f), AsExpr(i) + 5));
  EXPECT_IR_EQ(Simplify(one), Store::Make(b, Expr(1.0f), Expr(5)));
  Stmt dead = Loop(j, 4, IfThenElse::Make(AsExpr(j) > 10, Store::Make(b, Expr(1.0f), AsExpr(j))));
  EXPECT_TRUE(IsNoOp(Simplify(dead)));
}

// docs/passes.md: a pass returns the same node when nothing changed, integer arithmetic included.
TEST(Simplify, ReturnsTheSameNodeForUnchangedArithmetic) {
  Var x = MakeVar("x"), y = MakeVar("y"), b = MakeVar("b", Type::Handle());
  for (Expr e : {AsExpr(x) + 3, AsExpr(x) * 4 + AsExpr(y), AsExpr(x) - AsExpr(y), AsExpr(x) * AsExpr(y)}) {
    Expr once = Simplify(e);
    EXPECT_TRUE(Simplify(once).same_as(once)) << ToString(once);
  }
  Stmt store = Simplify(Store::Make(b, Expr(1.0f), AsExpr(x) * 8 + 3));
  EXPECT_TRUE(Simplify(store).same_as(store)) << ToString(store);
}

// GPU block and thread loops are kept even with one iteration: codegen binds them to indices.
TEST(Simplify, KeepsGpuLoopsOfExtentOne) {
  Var i = MakeVar("i"), b = MakeVar("b", Type::Handle());
  for (ForKind kind : {ForKind::kGpuBlockX, ForKind::kGpuBlockY, ForKind::kGpuThreadX, ForKind::kGpuThreadY}) {
    Stmt loop = Loop(i, 1, Store::Make(b, Expr(1.0f), AsExpr(i)), kind);
    const For* f = Simplify(loop).as<For>();
    ASSERT_NE(f, nullptr) << ForKindName(kind);
    EXPECT_EQ(f->kind, kind);
  }
}

TEST(Simplify, VectorAlgebra) {
  Var x = MakeVar("x");
  Expr e = Broadcast::Make(AsExpr(x) * 16, 16) + Ramp::Make(Expr(0), Expr(1), 16);
  EXPECT_IR_EQ(Simplify(e), Ramp::Make(AsExpr(x) * 16, Expr(1), 16));
  Expr m = Ramp::Make(AsExpr(x), Expr(1), 4) * Broadcast::Make(Expr(4), 4);
  EXPECT_IR_EQ(Simplify(m), Ramp::Make(AsExpr(x) * 4, Expr(4), 4));
}

TEST(UnrollLoops, ReplicatesBodies) {
  Var i = MakeVar("i"), b = MakeVar("b", Type::Handle());
  Stmt before = Loop(i, 3, Store::Make(b, Expr(0.0f), AsExpr(i) * 2), ForKind::kUnrolled);
  Stmt expected = Block::Make({Store::Make(b, Expr(0.0f), Expr(0) * 2), Store::Make(b, Expr(0.0f), Expr(1) * 2),
                               Store::Make(b, Expr(0.0f), Expr(2) * 2)});
  EXPECT_IR_EQ(UnrollLoops(before), expected);
  Var j = MakeVar("j");
  Stmt serial = Loop(j, 3, Store::Make(b, Expr(0.0f), AsExpr(j)));
  EXPECT_TRUE(UnrollLoops(serial).same_as(serial));
}

TEST(VectorizeLoops, DenseLoadsAndStoresBecomeRamps) {
  Var i = MakeVar("i"), a = MakeVar("a", Type::Handle()), c = MakeVar("c", Type::Handle()), x = MakeVar("x");
  Stmt before =
      Loop(i, 8, Store::Make(c, F(a, AsExpr(x) * 8 + AsExpr(i)) + F(a, AsExpr(x)), AsExpr(i)), ForKind::kVectorized);
  Expr ramp = Ramp::Make(AsExpr(x) * 8, Expr(1), 8);
  Stmt expected = Store::Make(
      c, Load::Make(Type::Float(32), a, ramp) + Broadcast::Make(Load::Make(Type::Float(32), a, AsExpr(x)), 8),
      Ramp::Make(Expr(0), Expr(1), 8));
  EXPECT_IR_EQ(Simplify(VectorizeLoops(before)), expected);
}

TEST(VectorizeLoops, FallsBackToSerialOnLaneDependentBranch) {
  Var i = MakeVar("i"), c = MakeVar("c", Type::Handle());
  Stmt body = IfThenElse::Make(AsExpr(i) < 5, Store::Make(c, Expr(1.0f), AsExpr(i)));
  Stmt before = Loop(i, 8, body, ForKind::kVectorized);
  EXPECT_IR_EQ(VectorizeLoops(before), Loop(i, 8, body, ForKind::kSerial));
}

TEST(PartitionLoops, PeelsTheGuardedTail) {
  // for o in [0, 5): for i in [0, 12): if likely(o*12 + i < 56) c[o*12+i] = 1
  Var o = MakeVar("o"), i = MakeVar("i"), c = MakeVar("c", Type::Handle());
  Expr idx = AsExpr(o) * 12 + AsExpr(i);
  Stmt guarded = IfThenElse::Make(idx < 56, Store::Make(c, Expr(1.0f), idx), Stmt(), true);
  Stmt before = Loop(o, 5, Loop(i, 12, guarded));
  Stmt after = PartitionLoops(before);
  // Main part: o in [0, 4) with no guard. Tail: o = 4, i in [0, 8) with no guard either.
  Var o2 = MakeVar("o"), i2 = MakeVar("i"), i3 = MakeVar("i");
  Stmt expected = Block::Make({Loop(o2, 4, Loop(i2, 12, Store::Make(c, Expr(1.0f), AsExpr(o2) * 12 + AsExpr(i2)))),
                               Loop(i3, 8, Store::Make(c, Expr(1.0f), AsExpr(i3) + 48))});
  EXPECT_IR_EQ(after, expected);
}

TEST(StorageFlatten, RealizesBecomeOffsetAllocations) {
  te::Tensor in = te::Placeholder("in", {4, 8});
  te::Tensor t = te::Compute("t", {4, 8}, [&](const std::vector<Expr>& i) { return te::Read(in, i); });
  Var buf_in = MakeVar("in", Type::Handle()), y = MakeVar("y");
  // realize t([y, 2], [0, 8]) { t(y + 1, 3) = in(y + 1, 3) }
  Stmt before =
      ProducerRealize::Make(t, {AsExpr(y), Expr(0)}, {2, 8},
                            ProducerStore::Make(t, te::Read(in, {AsExpr(y) + 1, Expr(3)}), {AsExpr(y) + 1, Expr(3)}));
  Stmt after = Simplify(StorageFlatten(before, {{in, buf_in}}));
  ASSERT_NE(after.as<Allocate>(), nullptr);
  Var tb = after.as<Allocate>()->buffer;
  Stmt expected = Allocate::Make(tb, Type::Float(32), 16,
                                 Store::Make(tb, Load::Make(Type::Float(32), buf_in, AsExpr(y) * 8 + 11), Expr(11)));
  EXPECT_IR_EQ(after, expected);
}

// A realize's memory scope reaches its allocation; scopes and barriers print and compare.
TEST(StorageFlatten, KeepsTheMemoryScope) {
  te::Tensor t = te::Compute("t", {8}, [&](const std::vector<Expr>&) { return Expr(1.0f); });
  Var y = MakeVar("y");
  Stmt body = Block::Make({ProducerStore::Make(t, Expr(1.0f), {AsExpr(y)}), Barrier::Make(MemoryScope::kShared)});
  Stmt flat = StorageFlatten(ProducerRealize::Make(t, {Expr(0)}, {8}, body, MemoryScope::kShared), {});
  const Allocate* a = flat.as<Allocate>();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->scope, MemoryScope::kShared);
  const std::string text = ToString(flat);
  EXPECT_NE(text.find("scope=shared"), std::string::npos) << text;
  EXPECT_NE(text.find("barrier(shared)"), std::string::npos) << text;
  Stmt global = Allocate::Make(a->buffer, a->element_type, a->size, a->body);
  EXPECT_FALSE(StructuralEqual(flat, global));
  EXPECT_TRUE(
      StructuralEqual(flat, Allocate::Make(a->buffer, a->element_type, a->size, a->body, MemoryScope::kShared)));
}

TEST(RemoveNoOps, DropsEmptyLoopsAndUnusedAllocations) {
  Var i = MakeVar("i"), b = MakeVar("b", Type::Handle()), unused = MakeVar("u", Type::Handle());
  Stmt keep = Store::Make(b, Expr(1.0f), Expr(0));
  Stmt before = Allocate::Make(unused, Type::Float(32), 4, Block::Make({Loop(i, 4, Evaluate::Make(Expr(0))), keep}));
  EXPECT_IR_EQ(RemoveNoOps(before), keep);
}

TEST(Lower, DumpsAfterNamedPassesAndTimesEveryPass) {
  te::Tensor a = te::Placeholder("a", {16});
  te::Tensor b = te::Compute("b", {16}, [&](const std::vector<Expr>& i) { return te::Read(a, i) * 2.0f; });
  te::Schedule s({b});
  s[b].vectorize(s[b].axes[0]);
  std::ostringstream dump;
  std::vector<PassTiming> timings;
  LoweredFunc f =
      Lower(s, {a, b}, "double_it", compiler::HostTarget(), StepList::kCpu, {"storage_flatten", &dump, &timings, ""})
          .value();
  EXPECT_NE(dump.str().find("after storage_flatten"), std::string::npos);
  EXPECT_NE(dump.str().find("vectorized (b.i, 0, 16)"), std::string::npos) << dump.str();
  const std::vector<std::string> names = LoweringPassNames(StepList::kCpu);
  ASSERT_EQ(timings.size(), names.size());
  for (size_t i = 0; i < timings.size(); ++i) EXPECT_EQ(timings[i].pass, names[i]);
  // Final form: one dense vector store.
  EXPECT_EQ(ToString(f.body), "b[ramp(0, 1, 16)] = (a[ramp(0, 1, 16)] * x16(2.0f))\n");
}

}  // namespace
}  // namespace tunefarm::passes
