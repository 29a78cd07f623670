// Cross-thread reductions on the GPU (a reduce axis bound to threadIdx.x): lowered to warp
// shuffles and, across warps, one shared-memory exchange (passes/lower_thread_allreduce.h).
// Checked by emulating the lowered kernel on the CPU for every block width from a part of a warp
// to 1024 threads, by the PTX it becomes, and by the errors for reductions it cannot lower.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "compiler/codegen/codegen_nvptx.h"
#include "compiler/codegen/object_emitter.h"
#include "compiler/passes/lower.h"
#include "compiler/te/schedule.h"
#include "tunefarm/compiler/kernel.h"

namespace tunefarm::compiler {
namespace {

struct RowReduction {
  ir::Tensor x, out;
  std::unique_ptr<te::Schedule> schedule;
};

// out[r] = sum (or max) over k of x[r, k]: rows on blockIdx.x x threadIdx.y (`rows_per_block`),
// k (`width`) on threadIdx.x, or on `reduce_kind` when given.
RowReduction MakeRowReduction(int64_t rows, int64_t width, int64_t rows_per_block, bool is_max,
                              ir::ForKind reduce_kind = ir::ForKind::kGpuThreadX) {
  RowReduction r;
  r.x = te::Placeholder("x", {rows, width});
  auto k = te::MakeIterVar("k", width, true);
  r.out = te::ComputeReduce("rowred", {rows}, is_max ? te::ReduceKind::kMax : te::ReduceKind::kSum, {k},
                            [&](const std::vector<ir::Expr>& i) {
                              return te::Read(r.x, {i[0], te::AxisExpr(k)});
                            });
  r.schedule = std::make_unique<te::Schedule>(std::vector<ir::Tensor>{r.out});
  te::Stage& st = (*r.schedule)[r.out];
  auto [rb, rt] = st.split(st.axes[0], rows_per_block);
  st.reorder({rb, rt, st.reduce_axes[0]});
  st.bind(rb, ir::ForKind::kGpuBlockX);
  st.bind(rt, reduce_kind == ir::ForKind::kGpuThreadY ? ir::ForKind::kGpuThreadX : ir::ForKind::kGpuThreadY);
  st.bind(st.reduce_axes[0], reduce_kind);
  return r;
}

Target Cuda(const std::string& arch = "sm_80") { return *ParseTarget("cuda -arch=" + arch); }

TEST(CudaReduction, EveryBlockWidthMatchesTheSerialReductionWhenEmulated) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t width : {2, 8, 32, 64, 128, 512, 1024}) {
    for (bool is_max : {false, true}) {
      // 7 rows, 2 per block when they fit: the last block's second row is guarded off and must
      // still take part in the exchange.
      const int64_t per_block = width <= 512 ? 2 : 1, rows = 7;
      RowReduction r = MakeRowReduction(rows, width, per_block, is_max);
      Target emulated = Cuda();
      emulated.emulated = true;
      auto func = passes::Lower(*r.schedule, {r.x, r.out}, "rowred", emulated, passes::StepList::kGpuOnHost);
      ASSERT_TRUE(func.ok()) << func.status().ToString();
      auto jit = JitCompile({KernelSource{*func, "{}"}}, HostTarget());
      ASSERT_TRUE(jit.ok()) << jit.status().ToString();
      auto fn = (*jit)->Lookup("rowred");
      ASSERT_TRUE(fn.ok());
      std::vector<float> x(size_t(rows * width)), out(size_t(rows), 1e30f);
      for (float& v : x) v = dist(rng);
      void* args[] = {x.data(), out.data()};
      ASSERT_EQ((*fn)(args), 0);
      for (int64_t row = 0; row < rows; ++row) {
        double expect = is_max ? -1e30 : 0.0;
        for (int64_t k = 0; k < width; ++k) {
          const double v = x[size_t(row * width + k)];
          expect = is_max ? std::max(expect, v) : expect + v;
        }
        EXPECT_NEAR(out[size_t(row)], expect, 1e-5)
            << "width " << width << (is_max ? " max" : " sum") << " row " << row;
      }
    }
  }
}

TEST(CudaReduction, BecomesWarpShufflesAndOneSharedExchangeAcrossWarps) {
  for (int64_t width : {32, 256}) {
    RowReduction r = MakeRowReduction(8, width, 2, false);
    const Target target = Cuda("sm_80");
    auto func = passes::Lower(*r.schedule, {r.x, r.out}, "rowred", target, passes::StepList::kGpu);
    ASSERT_TRUE(func.ok()) << func.status().ToString();
    auto ptx = EmitPtx({KernelSource{*func, "{}"}}, target);
    ASSERT_TRUE(ptx.ok()) << ptx.status().ToString();
    EXPECT_NE(ptx->find("shfl.sync.bfly.b32"), std::string::npos) << *ptx;
    EXPECT_NE(ptx->find("activemask"), std::string::npos);
    // One warp needs no barrier; 8 warps exchange their totals through shared memory once.
    EXPECT_EQ(ptx->find("bar.sync") != std::string::npos, width > 32) << *ptx;
    const std::string ptxas = FindPtxas();
    if (!ptxas.empty()) {
      auto report = RunPtxas(ptxas, *ptx, "sm_80");
      ASSERT_TRUE(report.ok()) << report.status().ToString();
    }
  }
}

TEST(CudaReduction, ReductionsItCannotLowerSayWhy) {
  RowReduction odd = MakeRowReduction(8, 48, 2, false);
  auto func = passes::Lower(*odd.schedule, {odd.x, odd.out}, "odd", Cuda(), passes::StepList::kGpu);
  ASSERT_FALSE(func.ok());
  EXPECT_EQ(func.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(func.status().message().find("runs over 48 threads of threadIdx.x: it needs a power of two"),
            std::string::npos)
      << func.status().ToString();

  RowReduction along_y = MakeRowReduction(8, 32, 2, false, ir::ForKind::kGpuThreadY);
  func = passes::Lower(*along_y.schedule, {along_y.x, along_y.out}, "along_y", Cuda(), passes::StepList::kGpu);
  ASSERT_FALSE(func.ok());
  EXPECT_NE(func.status().message().find("runs along threadIdx.y: only threadIdx.x"), std::string::npos)
      << func.status().ToString();
}

}  // namespace
}  // namespace tunefarm::compiler
