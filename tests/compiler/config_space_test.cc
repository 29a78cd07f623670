// Config spaces: knob kinds, stable mixed-radix indices, JSON round trips, filters, errors.
#include "tunefarm/compiler/config_space.h"

#include <gtest/gtest.h>

#include <map>

#include "tunefarm/compiler/kernel.h"

namespace tunefarm::compiler {
namespace {

TEST(ConfigSpace, SplitPolicies) {
  ConfigSpace s("test");
  s.DefineSplit("f", 12, 2, SplitPolicy::kFactors);
  s.DefineSplit("p", 12, 2, SplitPolicy::kPower2);
  s.DefineSplit("v", 12, 3, SplitPolicy::kVerbose, 4);
  EXPECT_EQ(s.knobs()[0].candidates.size(), 6u);  // 1,2,3,4,6,12
  for (const auto& c : s.knobs()[0].candidates) EXPECT_EQ(c[0] * c[1], 12);
  // power2: inner 1,2,4,8; outer rounds up (12 / 8 -> 2: non-divisible allowed)
  EXPECT_EQ(s.knobs()[1].candidates.size(), 4u);
  EXPECT_EQ(s.knobs()[1].candidates.back(), (std::vector<int64_t>{2, 8}));
  for (const auto& c : s.knobs()[2].candidates) EXPECT_EQ(c.size(), 3u);
}

TEST(ConfigSpace, IndexIsMixedRadixFirstKnobLeastSignificant) {
  ConfigSpace s("test");
  s.DefineOther("a", {10, 20, 30});
  s.DefineAnnotate("b", {"none", "unroll"});
  EXPECT_EQ(s.size(), 6);
  auto c = s.Get(4);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->Int("a"), 20);               // 4 % 3 = 1
  EXPECT_EQ(c->Annotation("b"), "unroll");  // 4 / 3 = 1
  EXPECT_EQ(c->ToJson(), R"({"index":4,"knobs":{"a":[20],"b":"unroll"}})");
  auto back = s.FromJson(c->ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->index(), 4);
}

TEST(ConfigSpace, ReorderKnobs) {
  ConfigSpace s("test");
  s.DefineReorder("order", {{0, 1, 2}, {2, 1, 0}});
  auto c = s.Get(1);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->Get("order"), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(c->ToJson(), R"({"index":1,"knobs":{"order":[2,1,0]}})");
}

TEST(ConfigSpace, ErrorsNameTheProblem) {
  ConfigSpace s("conv2d_nchwc|... on x86");
  s.DefineOther("a", {1, 2});
  auto out = s.Get(9001);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(out.status().message(), "config index 9001 out of range [0, 2) for conv2d_nchwc|... on x86");
  EXPECT_FALSE(s.Get(-1).ok());
  auto bad = s.FromJson("{not json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("malformed config JSON"), std::string::npos);
  auto unknown = s.FromJson(R"({"knobs":{"zzz":[1]}})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("knob 'zzz' is not part of"), std::string::npos);
  auto not_candidate = s.FromJson(R"({"knobs":{"a":[7]}})");
  ASSERT_FALSE(not_candidate.ok());
  EXPECT_NE(not_candidate.status().message().find("not a candidate"), std::string::npos);
}

TEST(ConfigSpace, FiltersRestrictValidPoints) {
  ConfigSpace s("test");
  s.DefineOther("a", {1, 2, 3, 4});
  s.DefineOther("b", {1, 2, 3, 4});
  s.AddFilter([](const Config& c) { return c.Int("a") * c.Int("b") <= 4; });
  EXPECT_EQ(s.size(), 16);
  EXPECT_EQ(s.CountValid(), 8);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 50; ++i) {
    auto c = s.RandomValid(rng);
    ASSERT_TRUE(c.ok());
    EXPECT_LE(c->Int("a") * c->Int("b"), 4);
  }
}

TEST(ConfigSpace, TemplateSpacesAreStableAndFallbacksValid) {
  Target host = HostTarget();
  for (const Workload& w :
       {Conv2dWorkload(1, 64, 56, 56, 64, 3, 3, 1, 1), Conv2dWorkload(1, 144, 56, 56, 144, 3, 3, 2, 1, 1, 144),
        DenseWorkload(1, 512, 1000), DenseWorkload(1, 512, 1000, false)}) {
    auto s1 = GetConfigSpace(w, host);
    auto s2 = GetConfigSpace(w, host);
    ASSERT_TRUE(s1.ok()) << s1.status().ToString();
    EXPECT_EQ(s1->size(), s2->size());
    EXPECT_GT(s1->CountValid(), 10) << w.Key();
    auto fb = FallbackConfigIndex(w, host);
    ASSERT_TRUE(fb.ok()) << fb.status().ToString();
    EXPECT_TRUE(s1->IsValid(*s1->Get(*fb))) << w.Key();
    EXPECT_EQ(s1->Get(*fb)->ToJson(), s2->Get(*fb)->ToJson());
  }
}

std::string FallbackKnob(const Workload& w, const std::string& knob) {
  auto space = GetConfigSpace(w, HostTarget());
  auto index = FallbackConfigIndex(w, HostTarget());
  if (!space.ok() || !index.ok()) return "error";
  auto config = space->Get(*index);
  return config.ok() ? config->Annotation(knob) : "error";
}

// Where the conv does few FMAs per input element a padded copy costs about as much as the conv:
// the fallback reads the window with bounds checks (bench_kernels: depthwise 1.3-2.7x faster).
TEST(ConfigSpace, FallbackPadsInlineWhereTheConvDoesFewFmasPerInputElement) {
  EXPECT_EQ(FallbackKnob(Conv2dWorkload(1, 144, 56, 56, 144, 3, 3, 1, 1, 1, 144), "pad_at"), "inline");  // depthwise
  EXPECT_EQ(FallbackKnob(Conv2dWorkload(1, 96, 112, 112, 96, 3, 3, 2, 1, 1, 96), "pad_at"), "inline");
  EXPECT_EQ(FallbackKnob(Conv2dWorkload(1, 3, 224, 224, 32, 3, 3, 2, 1), "pad_at"), "inline");  // MobileNetV2's stem
  EXPECT_EQ(FallbackKnob(Conv2dWorkload(1, 3, 224, 224, 64, 7, 7, 2, 3), "pad_at"), "root");    // ResNet's stem
  EXPECT_EQ(FallbackKnob(Conv2dWorkload(1, 64, 56, 56, 64, 3, 3, 1, 1), "pad_at"), "root");
  EXPECT_EQ(FallbackKnob(Conv2dWorkload(1, 64, 56, 56, 128, 1, 1, 1, 0), "pad_at"), "none");
}

// A kernel whose work is below te::kMinParallelWork runs on one thread; the same kind of kernel
// with enough work gets its parallel loop.
TEST(ConfigSpace, SmallOperatorsRunSeriallyLargeOnesInParallel) {
  EXPECT_EQ(FallbackKnob(DenseWorkload(1, 16, 16), "parallel"), "none");
  EXPECT_EQ(FallbackKnob(DenseWorkload(1, 512, 1000), "parallel"), "o");
  auto lowered = [](const Workload& w) {
    KernelSpec spec;
    spec.workload = w;
    spec.target = HostTarget();
    auto ir = LoweredIR(spec);
    return ir.ok() ? *ir : ir.status().ToString();
  };
  const std::string tiny = lowered(Conv2dWorkload(1, 16, 4, 4, 16, 1, 1, 1, 0));  // 4,096 FMAs
  EXPECT_EQ(tiny.find("parallel ("), std::string::npos) << tiny;
  EXPECT_EQ(tiny.find("error"), std::string::npos) << tiny;
  const std::string big = lowered(Conv2dWorkload(1, 64, 56, 56, 64, 1, 1, 1, 0));
  EXPECT_NE(big.find("parallel ("), std::string::npos) << big;
}

// Channel chunks alone as the parallel loop: not proposed by the tuner where they are too few to
// feed the cores and rows could be fused in (MobileNetV2's stem: one chunk of 32 channels, 1.11x at
// 2 threads tuned), but still valid, so records of such configs apply.
TEST(ConfigSpace, TheTunerProposesNoParallelLoopOfTooFewChannelChunks) {
  auto accepted_by_option = [](const Workload& w) {
    auto space = GetConfigSpace(w, HostTarget());
    std::map<std::string, int64_t> accepted, valid;
    if (!space.ok()) return std::make_pair(accepted, valid);
    auto feeds_every_core = ParallelismFilter(w);
    for (int64_t i = 0; i < space->size(); ++i) {
      auto c = space->Get(i);
      if (!c.ok() || !space->IsValid(*c)) continue;
      ++valid[c->Annotation("parallel")];
      if (feeds_every_core(*c)) ++accepted[c->Annotation("parallel")];
    }
    return std::make_pair(accepted, valid);
  };
  auto [stem, stem_valid] = accepted_by_option(Conv2dWorkload(1, 3, 224, 224, 32, 3, 3, 2, 1));
  EXPECT_EQ(stem["oc"], 0);
  EXPECT_GT(stem_valid["oc"], 0) << "records of such configs stay valid";
  EXPECT_EQ(stem["oc_oh"], stem_valid["oc_oh"]);
  // 1280 output channels: "oc" alone has enough chunks with any block.
  auto [wide, wide_valid] = accepted_by_option(Conv2dWorkload(1, 320, 7, 7, 1280, 1, 1, 1, 0));
  EXPECT_EQ(wide["oc"], wide_valid["oc"]);
  auto [depthwise, depthwise_valid] = accepted_by_option(Conv2dWorkload(1, 32, 112, 112, 32, 3, 3, 1, 1, 1, 32));
  EXPECT_EQ(depthwise["c"], 0);
  EXPECT_GT(depthwise["c_oh"], 0);
}

}  // namespace
}  // namespace tunefarm::compiler
