// The kernel IR: construction invariants, printer, structural equality/hash, visitor and mutator.
#include <gtest/gtest.h>

#include "compiler/ir/ir_equality.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/ir_util.h"
#include "compiler/ir/ir_visitor.h"

namespace tunefarm::ir {
namespace {

TEST(IR, OperatorsBroadcastAndPromote) {
  Var x = MakeVar("x");
  Expr e = AsExpr(x) * 2 + 1;
  EXPECT_EQ(e.type(), Type::Int(64));
  EXPECT_EQ(ToString(e), "((x * 2) + 1)");
  Expr f = Expr(1.5f) + 2;  // int immediate meets float
  EXPECT_EQ(f.type(), Type::Float(32));
  Expr v = Ramp::Make(AsExpr(x), Expr(1), 4) + AsExpr(x);  // scalar meets vector
  EXPECT_EQ(v.type(), Type::Int(64, 4));
  EXPECT_EQ(ToString(v), "(ramp(x, 1, 4) + x4(x))");
  EXPECT_TRUE((AsExpr(x) < 3).type().is_bool());
}

TEST(IR, PrinterShowsLoopsAndStores) {
  Var i = MakeVar("i"), buf = MakeVar("buf", Type::Handle());
  Stmt s = For::Make(i, Expr(0), Expr(8), ForKind::kParallel,
                     Store::Make(buf, Load::Make(Type::Float(32), buf, AsExpr(i)) + 1.0f, AsExpr(i)));
  EXPECT_EQ(ToString(s), "parallel (i, 0, 8) {\n  buf[i] = (buf[i] + 1.0f)\n}\n");
}

TEST(IR, StructuralEqualityIsUpToRenaming) {
  auto make = [](const char* name) {
    Var i = MakeVar(name), buf = MakeVar("b", Type::Handle());
    return std::make_pair(For::Make(i, Expr(0), Expr(4), ForKind::kSerial, Store::Make(buf, Expr(1.0f), AsExpr(i) * 2)),
                          buf);
  };
  auto [a, ba] = make("i");
  auto [b, bb] = make("j");
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
  Var k = MakeVar("k");
  Stmt c = For::Make(k, Expr(0), Expr(5), ForKind::kSerial, Store::Make(ba, Expr(1.0f), AsExpr(k) * 2));
  EXPECT_FALSE(StructuralEqual(a, c));  // extent differs
  Stmt d = For::Make(k, Expr(0), Expr(4), ForKind::kUnrolled, Store::Make(ba, Expr(1.0f), AsExpr(k) * 2));
  EXPECT_FALSE(StructuralEqual(a, d));  // kind differs
  // Deep equality does not rename free variables.
  Var x = MakeVar("x"), y = MakeVar("x");
  EXPECT_TRUE(ExprDeepEqual(AsExpr(x) + 1, AsExpr(x) + 1));
  EXPECT_FALSE(ExprDeepEqual(AsExpr(x) + 1, AsExpr(y) + 1));
}

TEST(IR, MutatorKeepsUnchangedSubtrees) {
  Var x = MakeVar("x"), y = MakeVar("y");
  Expr e = (AsExpr(x) + 1) * (AsExpr(y) + 2);
  class Nothing : public IRMutator {};
  Nothing m;
  EXPECT_TRUE(m.Mutate(e).same_as(e));
  Expr sub = Substitute(e, {{y.get(), Expr(5)}});
  EXPECT_FALSE(sub.same_as(e));
  EXPECT_EQ(ToString(sub), "((x + 1) * (5 + 2))");
  // The untouched left operand is the very same node.
  EXPECT_TRUE(sub.as<Mul>()->a.same_as(e.as<Mul>()->a));
}

TEST(IR, VisitorSeesEveryNode) {
  Var x = MakeVar("x");
  Expr e = select(AsExpr(x) > 0, AsExpr(x) * 2, min(AsExpr(x), 7));
  int vars = 0, imms = 0;
  PreOrderVisit(Evaluate::Make(e), [&](const Expr& n) {
    vars += n.as<VarNode>() != nullptr;
    imms += n.as<IntImm>() != nullptr;
  });
  EXPECT_EQ(vars, 3);
  EXPECT_EQ(imms, 3);
  EXPECT_TRUE(UsesVar(e, x.get()));
}

TEST(IR, BlocksFlatten) {
  Var b = MakeVar("b", Type::Handle());
  Stmt s1 = Store::Make(b, Expr(1.0f), Expr(0)), s2 = Store::Make(b, Expr(2.0f), Expr(1));
  Stmt nested = Block::Make({Block::Make({s1, s2}), Stmt(), s1});
  ASSERT_NE(nested.as<Block>(), nullptr);
  EXPECT_EQ(nested.as<Block>()->stmts.size(), 3u);
  EXPECT_TRUE(Block::Make({s1}).same_as(s1));
}

}  // namespace
}  // namespace tunefarm::ir
