// Schedule primitives: the loop nests ScheduleOps builds from them.
#include "compiler/te/schedule.h"

#include <gtest/gtest.h>

#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/passes/lower.h"
#include "compiler/passes/schedule_ops.h"
#include "compiler/passes/simplify.h"

namespace tunefarm::te {
namespace {

using ir::Expr;
using ir::operator+;
using ir::operator*;

TEST(Schedule, SplitReorderAnnotate) {
  Tensor a = Placeholder("A", {8, 12});
  Tensor b = Compute("B", {8, 12}, [&](const std::vector<Expr>& i) { return Read(a, i) + 1.0f; });
  Schedule s({b});
  Stage& st = s[b];
  auto [jo, ji] = st.split(st.axes[1], 4);
  st.reorder({jo, st.axes[0], ji});
  st.parallel(jo);
  st.vectorize(ji);
  EXPECT_EQ(ir::ToString(passes::Simplify(passes::ScheduleOps(s))),
            "parallel (B.j.o, 0, 3) {\n"
            "  for (B.i, 0, 8) {\n"
            "    vectorized (B.j.i, 0, 4) {\n"
            "      B(B.i, ((B.j.o * 4) + B.j.i)) = (A(B.i, ((B.j.o * 4) + B.j.i)) + 1.0f)\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(Schedule, NonDivisibleSplitIsGuarded) {
  Tensor a = Placeholder("A", {10});
  Tensor b = Compute("B", {10}, [&](const std::vector<Expr>& i) { return Read(a, i); });
  Schedule s({b});
  s[b].split(s[b].axes[0], 4);
  std::string text = ir::ToString(passes::Simplify(passes::ScheduleOps(s)));
  EXPECT_NE(text.find("for (B.i.o, 0, 3)"), std::string::npos) << text;
  EXPECT_NE(text.find("if (likely((((B.i.o * 4) + B.i.i) < 10)))"), std::string::npos) << text;
}

TEST(Schedule, FuseCombinesLoops) {
  Tensor a = Placeholder("A", {3, 5});
  Tensor b = Compute("B", {3, 5}, [&](const std::vector<Expr>& i) { return Read(a, i); });
  Schedule s({b});
  auto f = s[b].fuse(s[b].axes[0], s[b].axes[1]);
  EXPECT_EQ(f->extent, 15);
  std::string text = ir::ToString(passes::ScheduleOps(s));
  EXPECT_NE(text.find("for (B.i.B.j, 0, 15)"), std::string::npos) << text;
  EXPECT_NE(text.find("(B.i.B.j / 5)"), std::string::npos) << text;
  EXPECT_NE(text.find("(B.i.B.j % 5)"), std::string::npos) << text;
}

TEST(Schedule, ComputeAtRealizesOnlyTheRegionTheConsumerReads) {
  // out[i] = tmp[i] + tmp[i + 2]; tmp computed inside out's outer loop of a split by 4.
  Tensor a = Placeholder("A", {20});
  Tensor tmp = Compute("tmp", {18}, [&](const std::vector<Expr>& i) { return Read(a, i) * 2.0f; });
  Tensor out = Compute("out", {16}, [&](const std::vector<Expr>& i) { return Read(tmp, i) + Read(tmp, {i[0] + 2}); });
  Schedule s({out});
  auto [o, in] = s[out].split(s[out].axes[0], 4);
  s[tmp].compute_at(s[out], o);
  std::string text = ir::ToString(passes::Simplify(passes::ScheduleOps(s)));
  // 4 outputs read tmp[o*4 .. o*4 + 5]: a 6-element region at o*4.
  EXPECT_NE(text.find("realize tmp([(out.i.o * 4), 6])"), std::string::npos) << text;
  EXPECT_NE(text.find("for (tmp.i, 0, 6)"), std::string::npos) << text;
}

TEST(Schedule, CacheWriteMakesAnAccumulatorStage) {
  Tensor a = Placeholder("A", {4, 8});
  auto k = MakeIterVar("k", 8, true);
  Tensor sum = ComputeReduce("S", {4}, ReduceKind::kSum, {k}, [&](const std::vector<Expr>& i) {
    return Read(a, {i[0], AxisExpr(k)});
  });
  Schedule s({sum});
  Tensor local = s.cache_write(sum);
  EXPECT_EQ(local->name, "S.local");
  ASSERT_EQ(s.stages().size(), 2u);
  EXPECT_EQ(s.stages()[0]->tensor, local);
  s[local].compute_at(s[sum], s[sum].axes[0]);
  std::string text = ir::ToString(passes::Simplify(passes::ScheduleOps(s)));
  EXPECT_NE(text.find("realize S.local([S.i, 1])"), std::string::npos) << text;
  EXPECT_NE(text.find("S.local(S.i) = 0.0f"), std::string::npos) << text;  // reduction init
  EXPECT_NE(text.find("S(S.i) = S.local(S.i)"), std::string::npos) << text;
}

}  // namespace
}  // namespace tunefarm::te
