// The GPU's exp, log and tanh (passes/lower_gpu_math.h) against float64: a kernel lowered for
// CUDA is run on the CPU by emulation (the same formulas the PTX computes) over every float32
// value of a sweep across each function's range, and its PTX is checked to need no libdevice.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "compiler/codegen/codegen_nvptx.h"
#include "compiler/codegen/object_emitter.h"
#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/passes/lower.h"
#include "compiler/te/schedule.h"
#include "tunefarm/compiler/kernel.h"

namespace tunefarm::compiler {
namespace {

Target Cuda() { return *ParseTarget("cuda -arch=sm_80"); }
Target CudaEmulated() { return *ParseTarget("cuda -arch=sm_80 -emulate=host"); }

// out[i] = fn(x[i]) on 128-thread blocks, for `n` values.
struct MathKernel {
  ir::Tensor x, out;
  std::unique_ptr<te::Schedule> schedule;
};
MathKernel MakeMathKernel(int64_t n, const std::function<ir::Expr(const ir::Expr&)>& fn) {
  MathKernel k;
  k.x = te::Placeholder("x", {n});
  k.out = te::Compute("out", {n}, [&](const std::vector<ir::Expr>& i) { return fn(te::Read(k.x, {i[0]})); });
  k.schedule = std::make_unique<te::Schedule>(std::vector<ir::Tensor>{k.out});
  te::Stage& st = (*k.schedule)[k.out];
  auto [blocks, threads] = st.split(st.axes[0], 128);
  st.bind(blocks, ir::ForKind::kGpuBlockX);
  st.bind(threads, ir::ForKind::kGpuThreadX);
  return k;
}
ir::Expr Named(const char* name, const ir::Expr& v) { return ir::Call::Make(ir::Type::Float(32), name, {v}); }

// fn over `inputs`, lowered for CUDA and emulated on this CPU.
std::vector<float> RunEmulatedExpr(const std::function<ir::Expr(const ir::Expr&)>& math,
                                   const std::vector<float>& inputs) {
  MathKernel k = MakeMathKernel(int64_t(inputs.size()), math);
  auto func = passes::Lower(*k.schedule, {k.x, k.out}, "math", CudaEmulated(), passes::StepList::kGpuOnHost);
  EXPECT_TRUE(func.ok()) << func.status().ToString();
  if (!func.ok()) return {};
  auto jit = JitCompile({KernelSource{*func, "{}"}}, HostTarget());
  EXPECT_TRUE(jit.ok()) << jit.status().ToString();
  if (!jit.ok()) return {};
  auto fn = (*jit)->Lookup("math");
  EXPECT_TRUE(fn.ok());
  std::vector<float> x = inputs, out(inputs.size(), 12345.0f);
  void* args[] = {x.data(), out.data()};
  EXPECT_EQ((*fn)(args), 0);
  return out;
}
std::vector<float> RunEmulated(const char* name, const std::vector<float>& inputs) {
  return RunEmulatedExpr([&](const ir::Expr& v) { return Named(name, v); }, inputs);
}

// Distance in float32 units in the last place between a result and the exact (float64) value:
// |got - exact| / ulp(exact rounded to float32), ulp of the smallest normal below it.
double UlpError(float got, double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0.0 : 1e30;
  if (std::isinf(exact)) return got == float(exact) ? 0.0 : 1e30;
  const float rounded = float(exact);
  if (std::isinf(rounded)) return std::isinf(got) && (got > 0) == (exact > 0) ? 0.0 : 1e30;
  const double magnitude = std::max(std::fabs(double(rounded)), double(std::numeric_limits<float>::min()));
  const double ulp = std::ldexp(1.0, std::ilogb(magnitude) - 23);
  return std::fabs(double(got) - exact) / ulp;
}

// `count` floats spread evenly over [lo, hi] in value, plus every power-of-two boundary's neighbours.
std::vector<float> Sweep(double lo, double hi, int count) {
  std::vector<float> v;
  for (int i = 0; i <= count; ++i) v.push_back(float(lo + (hi - lo) * i / count));
  return v;
}

struct Accuracy {
  double max_ulp = 0;
  float worst_input = 0;
};
Accuracy Measure(const char* name, const std::vector<float>& inputs, double (*exact)(double)) {
  std::vector<float> got = RunEmulated(name, inputs);
  Accuracy a;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = UlpError(got[i], exact(double(inputs[i])));
    if (e > a.max_ulp) a = {e, inputs[i]};
  }
  return a;
}

// Every float32 bit pattern with the given step between lo and hi (both positive or both negative).
std::vector<float> EveryNth(float lo, float hi, uint32_t step) {
  uint32_t a, b;
  std::memcpy(&a, &lo, 4);
  std::memcpy(&b, &hi, 4);
  if (a > b) std::swap(a, b);
  std::vector<float> v;
  for (uint64_t bits = a; bits <= b; bits += step) {
    float f;
    const uint32_t u = uint32_t(bits);
    std::memcpy(&f, &u, 4);
    v.push_back(f);
  }
  return v;
}

TEST(GpuMath, ExpIsWithinTwoUlpOfFloat64AcrossItsRange) {
  // Down to the subnormal results and up to FLT_MAX; every 97th float of [1e-6, 88.7] and of the negatives.
  std::vector<float> in = Sweep(-103.9, 88.72, 200000);
  for (float f : EveryNth(1e-6f, 88.72f, 97)) {
    in.push_back(f);
    in.push_back(-f);
  }
  Accuracy a = Measure("exp", in, [](double x) { return std::exp(x); });
  EXPECT_LE(a.max_ulp, 2.0) << "worst at x = " << a.worst_input;
  std::printf("exp: max %.3f ulp (x = %.9g) over %zu inputs\n", a.max_ulp, double(a.worst_input), in.size());
}

TEST(GpuMath, LogIsWithinTwoUlpOfFloat64AcrossItsRange) {
  // Every 613th positive float from the smallest subnormal to FLT_MAX covers each binade densely.
  std::vector<float> in = EveryNth(std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(), 613);
  for (float f : Sweep(0.5, 2.0, 100000)) in.push_back(f);  // around 1, where log is smallest
  Accuracy a = Measure("log", in, [](double x) { return std::log(x); });
  EXPECT_LE(a.max_ulp, 2.0) << "worst at x = " << a.worst_input;
  std::printf("log: max %.3f ulp (x = %.9g) over %zu inputs\n", a.max_ulp, double(a.worst_input), in.size());
}

TEST(GpuMath, TanhIsWithinTwoUlpOfFloat64AcrossItsRange) {
  std::vector<float> in = EveryNth(1e-30f, 12.0f, 373);
  const size_t positive = in.size();
  for (size_t i = 0; i < positive; i += 3) in.push_back(-in[i]);
  Accuracy a = Measure("tanh", in, [](double x) { return std::tanh(x); });
  EXPECT_LE(a.max_ulp, 2.0) << "worst at x = " << a.worst_input;
  std::printf("tanh: max %.3f ulp (x = %.9g) over %zu inputs\n", a.max_ulp, double(a.worst_input), in.size());
}

TEST(GpuMath, SpecialValuesAreThoseOfTheCLibrary) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> in = {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, nan, 89.0f, -104.0f, 1e-45f, 3.4e38f, -3.4e38f};
  for (const char* name : {"exp", "log", "tanh"}) {
    std::vector<float> got = RunEmulated(name, in);
    ASSERT_EQ(got.size(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const float want = std::string(name) == "exp"   ? std::exp(in[i])
                         : std::string(name) == "log" ? std::log(in[i])
                                                      : std::tanh(in[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << name << "(" << in[i] << ") = " << got[i];
      } else if (std::isinf(want) || want == 0.0f) {
        EXPECT_EQ(got[i], want) << name << "(" << in[i] << ")";
      } else {
        EXPECT_LE(UlpError(got[i], std::string(name) == "exp"   ? std::exp(double(in[i]))
                                   : std::string(name) == "log" ? std::log(double(in[i]))
                                                                : std::tanh(double(in[i]))),
                  3.0)
            << name << "(" << in[i] << ") = " << got[i];
      }
    }
  }
}

// The functions the operators build from arithmetic (compiler/compute/elementwise.cc: no intrinsic,
// the same formulas on every target) against float64, lowered for the GPU and emulated: the
// error bound each one reaches over its usual range, stated in docs/cuda.md. Absolute error for
// the periodic functions (their zeros make ulps meaningless there), ulps elsewhere.
TEST(GpuMath, OperatorFunctionsBuiltFromArithmeticMeetTheirStatedBounds) {
  struct Case {
    compute::UnaryKind kind;
    const char* name;
    double lo, hi;
    double (*exact)(double);
    bool absolute;
    double bound;
  };
  const Case cases[] = {
      {compute::UnaryKind::kSin, "sin", -100.0, 100.0, [](double x) { return std::sin(x); }, true, 2e-7},
      {compute::UnaryKind::kCos, "cos", -100.0, 100.0, [](double x) { return std::cos(x); }, true, 2e-7},
      {compute::UnaryKind::kTan, "tan", -1.5, 1.5, [](double x) { return std::tan(x); }, false, 4.0},
      {compute::UnaryKind::kAtan, "atan", -1000.0, 1000.0, [](double x) { return std::atan(x); }, false, 3.0},
      {compute::UnaryKind::kAsin, "asin", -0.999, 0.999, [](double x) { return std::asin(x); }, false, 4.0},
      {compute::UnaryKind::kAcos, "acos", -0.999, 0.999, [](double x) { return std::acos(x); }, true, 5e-7},
      {compute::UnaryKind::kSinh, "sinh", -10.0, 10.0, [](double x) { return std::sinh(x); }, false, 4.0},
      {compute::UnaryKind::kCosh, "cosh", -10.0, 10.0, [](double x) { return std::cosh(x); }, false, 3.0},
      {compute::UnaryKind::kAsinh, "asinh", -100.0, 100.0, [](double x) { return std::asinh(x); }, false, 6.0},
      {compute::UnaryKind::kAtanh, "atanh", -0.99, 0.99, [](double x) { return std::atanh(x); }, true, 3e-7},
  };
  for (const Case& c : cases) {
    compute::UnaryParams p;
    p.kind = c.kind;
    const std::vector<float> in = Sweep(c.lo, c.hi, 100000);
    const std::vector<float> got = RunEmulatedExpr([&](const ir::Expr& v) { return compute::ApplyUnary(v, p); }, in);
    ASSERT_EQ(got.size(), in.size()) << c.name;
    double worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const double exact = c.exact(double(in[i]));
      const double e = c.absolute ? std::fabs(double(got[i]) - exact) : UlpError(got[i], exact);
      if (e > worst) {
        worst = e;
        worst_x = in[i];
      }
    }
    std::printf("%s on [%g, %g]: max %s %.3g (x = %.9g)\n", c.name, c.lo, c.hi, c.absolute ? "absolute error" : "ulp",
                worst, double(worst_x));
    EXPECT_LE(worst, c.bound) << c.name << " worst at x = " << worst_x;
  }
}

// exp, tanh and log with a fused use of each, as a Softmax/GELU/LogSoftmax epilogue would.
TEST(GpuMath, PtxNeedsNoLibdeviceAndAssembles) {
  MathKernel k = MakeMathKernel(1000, [](const ir::Expr& v) {
    return Named("exp", v) + Named("tanh", v) +
           Named("log", ir::Call::Make(ir::Type::Float(32), "fabs", {v}) + ir::Expr(1.0f));
  });
  const Target target = Cuda();
  auto func = passes::Lower(*k.schedule, {k.x, k.out}, "math", target, passes::StepList::kGpu);
  ASSERT_TRUE(func.ok()) << func.status().ToString();
  auto ptx = EmitPtx({KernelSource{*func, "{}"}}, target);
  ASSERT_TRUE(ptx.ok()) << ptx.status().ToString();
  EXPECT_NE(ptx->find(".entry math("), std::string::npos);
  EXPECT_EQ(ptx->find("__nv_"), std::string::npos) << "no libdevice function may be called";
  EXPECT_EQ(ptx->find("call"), std::string::npos) << "every function inline: " << *ptx;
  EXPECT_EQ(ptx->find(".extern"), std::string::npos) << *ptx;
  const std::string ptxas = FindPtxas();
  if (!ptxas.empty()) {
    auto report = RunPtxas(ptxas, *ptx, "sm_80");
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_GT(report->at("math").registers, 0);
    EXPECT_EQ(report->at("math").spill_store_bytes, 0);
  }
}

}  // namespace
}  // namespace tunefarm::compiler
