// Graph-level layout planning (compiler/model/lowering/plan_layouts.h): a convolution's fastest record
// loses to a slower one when its channel block would cost a layout change next to its neighbour,
// and wins when the change is cheaper than the difference; either way the model computes the same.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>

#include "common/onnx_builder.h"
#include "common/run_artifact.h"
#include "compiler/config_sources.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/frontend/zoo.h"
#include "compiler/model/compile_graph.h"
#include "compiler/model/extract_tasks.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm::compiler {
namespace {

using tunefarm::testing::OnnxBuilder;

// x [1, 16, 8, 8] -> a = relu(conv1x1 16->32) -> y = relu(conv1x1 32->32 (a) + a): the second
// convolution reads `a` as its input and as its fused residual.
graph::Graph ResidualPair(std::vector<float>* x) {
  OnnxBuilder b(13);
  b.Input("x", {1, 16, 8, 8});
  std::vector<float> w1(32 * 16), w2(32 * 32);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = float(int(i % 7) - 3) * 0.0625f;
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = float(int(i % 5) - 2) * 0.0625f;
  b.Floats("w1", {32, 16, 1, 1}, w1);
  b.Floats("w2", {32, 32, 1, 1}, w2);
  b.Node("Conv", {"x", "w1"}, {"c1"});
  b.Node("Relu", {"c1"}, {"a"});
  b.Node("Conv", {"a", "w2"}, {"c2"});
  b.Node("Add", {"c2", "a"}, {"s"});
  b.Node("Relu", {"s"}, {"y"});
  b.Output("y");
  x->resize(16 * 64);
  for (size_t i = 0; i < x->size(); ++i) (*x)[i] = float(int(i % 11) - 5) * 0.25f;
  auto g = frontend::ImportOnnxBytes(b.Bytes(), "pair");
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return std::move(*g);
}

// A valid config of w whose channel blocks are (in, out); -1 when the space has none.
int64_t ConfigWithBlocks(const Workload& w, int64_t in, int64_t out) {
  auto space = GetConfigSpace(w, HostTarget());
  for (int64_t i = 0; i < space->size(); ++i) {
    auto c = space->Get(i);
    if (c.ok() && space->IsValid(*c) && c->Inner("tile_ic") == in && c->Inner("tile_oc") == out) return i;
  }
  return -1;
}

int64_t FallbackBlock(const Workload& w, const char* knob) {
  auto space = GetConfigSpace(w, HostTarget());
  return space->Get(*FallbackConfigIndex(w, HostTarget()))->Inner(knob);
}

struct Compiled {
  runtime::Artifact artifact;
  CompileStats stats;
  int layout_changes = 0;
};

Compiled Compile(const graph::Graph& g, const ConfigSource* records, int opt_level = 3) {
  CompileOptions o;
  o.warn = [](const std::string&) {};
  o.configs = records;
  o.opt_level = opt_level;
  Compiled c;
  auto artifact = CompileGraph(g, "pair", HostTarget(), o, &c.stats);
  EXPECT_TRUE(artifact.ok()) << artifact.status().ToString();
  if (!artifact.ok()) return c;
  c.artifact = std::move(*artifact);
  for (const auto& k : c.artifact.kernels) c.layout_changes += k.op == "layout_transform";
  return c;
}

TEST(LayoutPlanning, TradesAKernelsSpeedAgainstTheLayoutChangesItsBlockCosts) {
  std::vector<float> x;
  const graph::Graph g = ResidualPair(&x);
  auto tasks = ExtractTasks(g, "pair", HostTarget(), 3);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 2u);
  const Workload first = (*tasks)[0].workload, second = (*tasks)[1].workload;
  ASSERT_EQ(first.conv.in_channels, 16);
  // The blocks the fallbacks agree on, and another output block for the first convolution.
  const int64_t in_block = FallbackBlock(first, "tile_ic"), block = FallbackBlock(first, "tile_oc");
  ASSERT_EQ(FallbackBlock(second, "tile_ic"), block);
  std::optional<int64_t> other;
  for (int64_t b : {int64_t(8), int64_t(16), int64_t(32)}) {
    if (b != block && ConfigWithBlocks(first, in_block, b) >= 0) other = b;
  }
  ASSERT_TRUE(other) << "the first convolution's space offers only block " << block;
  const int64_t first_other = ConfigWithBlocks(first, in_block, *other),
                first_same = ConfigWithBlocks(first, in_block, block);
  const int64_t second_same = ConfigWithBlocks(second, block, block);
  ASSERT_GE(first_same, 0);
  ASSERT_GE(second_same, 0);
  // `a` is 8 KiB: changing its layout is estimated at a few microseconds.
  const std::vector<float> reference = tunefarm::testing::RunArtifact(Compile(g, nullptr, 0).artifact, x);
  ASSERT_EQ(reference.size(), 32u * 64u);

  for (double slower_by : {0.0005, 0.5}) {
    SCOPED_TRACE("the same-block record is slower by " + std::to_string(slower_by) + " ms");
    tunefarm::testing::FixedConfigs records;
    records.Add(first, first_other, 1.0);
    records.Add(first, first_same, 1.0 + slower_by);
    records.Add(second, second_same, 1.0);
    Compiled planned = Compile(g, &records);
    ASSERT_TRUE(planned.stats.layouts.ran);
    EXPECT_EQ(planned.stats.layouts.planned, 2);
    const bool keep_block = slower_by < 0.001;
    EXPECT_EQ(planned.stats.layouts.changed, keep_block ? 1 : 0);
    EXPECT_LE(planned.stats.layouts.planned_ms, planned.stats.layouts.per_node_ms);
    if (keep_block) {
      EXPECT_LT(planned.stats.layouts.planned_transform_ms, planned.stats.layouts.per_node_transform_ms);
    } else {
      EXPECT_EQ(planned.stats.layouts.planned_transform_ms, planned.stats.layouts.per_node_transform_ms);
    }
    int64_t first_config = -1;
    for (const auto& k : planned.artifact.kernels) {
      if (k.workload == first.ImplementationKey()) first_config = k.config_index;
    }
    EXPECT_EQ(first_config, keep_block ? first_same : first_other);
    // The input's change to the first block, and the output's to plain NCHW, either way; `a`'s
    // change back to the second convolution's block only when the fast record won.
    const int base = planned.layout_changes - (keep_block ? 0 : 1);
    EXPECT_EQ(base, Compile(g, nullptr).layout_changes);
    const std::vector<float> y = tunefarm::testing::RunArtifact(std::move(planned.artifact), x);
    ASSERT_EQ(y.size(), reference.size());
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], reference[i], 1e-4f * (1 + std::fabs(reference[i]))) << i;
  }
}

// One record in an otherwise untuned model: the stem convolution with another input block than
// its fallback's reads the image through a layout change, and the rest stays as it was.
TEST(LayoutPlanning, OneRecordAmongFallbacks) {
  auto g = frontend::LoadModel("squeezenet-1.1");
  ASSERT_TRUE(g.ok());
  auto tasks = ExtractTasks(*g, "squeezenet", HostTarget(), 3);
  ASSERT_TRUE(tasks.ok());
  const Workload w = (*tasks)[0].workload;
  auto space = GetConfigSpace(w, HostTarget());
  const int64_t fallback = *FallbackConfigIndex(w, HostTarget());
  int64_t index = -1;
  for (int64_t i = 0; i < space->size() && index < 0; ++i) {
    auto c = space->Get(i);
    if (c.ok() && space->IsValid(*c) && i != fallback) index = i;
  }
  ASSERT_GE(index, 0);
  tunefarm::testing::FixedConfigs records;
  records.Add(w, index, 0.5);
  Compiled planned = Compile(*g, &records);
  EXPECT_TRUE(planned.stats.layouts.ran);
  EXPECT_EQ(planned.stats.layouts.planned, 1);
}

TEST(LayoutPlanning, WithoutRecordsNothingIsPlanned) {
  std::vector<float> x;
  const graph::Graph g = ResidualPair(&x);
  tunefarm::testing::FixedConfigs empty;
  EXPECT_FALSE(Compile(g, &empty).stats.layouts.ran);
  EXPECT_FALSE(Compile(g, nullptr).stats.layouts.ran);
}

// Every task of a zoo model gets records of random valid configs (any channel blocks) at random
// times: the plan mixes blocks, so layout changes sit between convolutions, depthwise ones and
// concatenations, and the model still computes what its unoptimized compile does.
TEST(ModelCompile, PlannedLayoutsWithRandomRecordsMatchTheUnoptimizedCompile) {
  runtime::Executor::SetNumThreads(2);
  int changed = 0;
  for (const char* name : {"squeezenet-1.1", "mobilenet-v2", "resnet-18"}) {
    auto g = frontend::LoadModel(name);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    if (!g->nodes.empty() && g->nodes.back().op_type == "Softmax") g->outputs = {g->nodes.back().inputs[0]};
    auto tasks = ExtractTasks(*g, name, HostTarget(), 3);
    ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
    std::mt19937 rng(11);
    tunefarm::testing::FixedConfigs records;
    for (const Task& task : *tasks) {
      auto space = GetConfigSpace(task.workload, HostTarget());
      ASSERT_TRUE(space.ok());
      for (int added = 0, tries = 0; added < 4 && tries < 10000; ++tries) {
        const int64_t index = std::uniform_int_distribution<int64_t>(0, space->size() - 1)(rng);
        auto cfg = space->Get(index);
        if (!cfg.ok() || !space->IsValid(*cfg)) continue;
        records.Add(task.workload, index, std::uniform_real_distribution<double>(0.01, 0.2)(rng));
        ++added;
      }
    }
    Compiled planned = Compile(*g, &records);
    ASSERT_TRUE(planned.stats.layouts.ran) << name;
    EXPECT_LE(planned.stats.layouts.planned_ms, planned.stats.layouts.per_node_ms + 1e-9) << name;
    changed += planned.stats.layouts.changed;
    Compiled reference = Compile(*g, nullptr, 0);
    const auto& in = reference.artifact.tensors[size_t(reference.artifact.inputs[0])];
    std::vector<float> x(size_t(in.num_elements()));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : x) v = dist(rng);
    std::vector<float> y = tunefarm::testing::RunArtifact(std::move(planned.artifact), x);
    std::vector<float> r = tunefarm::testing::RunArtifact(std::move(reference.artifact), x);
    ASSERT_EQ(y.size(), r.size()) << name;
    double diff = 0, mag = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      diff = std::max(diff, double(std::fabs(y[i] - r[i])));
      mag = std::max(mag, double(std::fabs(r[i])));
    }
    std::printf("%s: %d of %d tunable nodes planned off their fastest record, %d layout changes; max rel error %.3g\n",
                name, planned.stats.layouts.changed, planned.stats.layouts.planned, planned.layout_changes, diff / mag);
    EXPECT_LE(diff / mag, 1e-4) << name;
  }
  EXPECT_GT(changed, 0) << "random records should make the plan differ from per-node choices somewhere";
}

}  // namespace
}  // namespace tunefarm::compiler
