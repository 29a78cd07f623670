// TrimDeadConvTaps (compiler/model/passes/trim_dead_conv_taps.h): convolutions whose outer taps read
// only padding compile to the smaller window and compute what the whole window computes (opt
// level 0, where the pass does not run).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <random>
#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "common/run_artifact.h"

namespace tunefarm {
namespace {

struct Case {
  int64_t size = 14, k = 3, dilation = 36, pad = 36, stride = 1;
  std::string window;  // the workload's window after trimming, as in its key ("R1x1")
};

void AddInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

onnx::ModelProto Model(const Case& c) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("aspp");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {int64_t(1), int64_t(8), c.size, c.size})
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {int64_t(16), int64_t(8), c.k, c.k}) w->add_dims(d);
  for (int64_t i = 0; i < 16 * 8 * c.k * c.k; ++i) w->add_float_data(dist(rng));
  auto* n = g->add_node();
  n->set_op_type("Conv");
  n->add_input("x");
  n->add_input("w");
  n->add_output("y");
  g->add_output()->set_name("y");
  AddInts(n, "dilations", {c.dilation, c.dilation});
  AddInts(n, "pads", {c.pad, c.pad, c.pad, c.pad});
  AddInts(n, "strides", {c.stride, c.stride});
  return m;
}

std::vector<float> CompileAndRun(const onnx::ModelProto& m, int opt_level, const std::vector<float>& x,
                                 std::string* workloads) {
  auto artifact = testing::CompileOnnxBytes(m.SerializeAsString(), "aspp", opt_level);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return {};
  for (const auto& k : artifact->kernels) *workloads += k.workload + " ";
  return testing::RunArtifact(std::move(*artifact), x);
}

TEST(TrimDeadConvTaps, TapsThatReadOnlyPaddingAreDroppedAndTheValuesStay) {
  const std::vector<Case> cases = {
      {14, 3, 36, 36, 1, "R1x1"},  // DeepLabV3's ASPP at dilation 36: only the centre tap reads the map
      {14, 3, 24, 24, 1, "R1x1"},  // ... and 24
      {14, 3, 12, 12, 1, "R3x3"},  // at 12 the outer taps reach the border: nothing to drop
      {14, 3, 14, 14, 1, "R1x1"},  // exactly the map's extent away
      {6, 5, 4, 8, 1, "R3x3"},     // the outermost taps of a 5x5 only: the pads shrink by one dilation
      {15, 3, 20, 20, 2, "R1x1"},  // strided
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("size " + std::to_string(c.size) + " k " + std::to_string(c.k) + " dilation " +
                 std::to_string(c.dilation) + " pad " + std::to_string(c.pad) + " stride " + std::to_string(c.stride));
    std::vector<float> x(size_t(8 * c.size * c.size));
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : x) v = dist(rng);
    const onnx::ModelProto m = Model(c);
    std::string whole, trimmed;
    const std::vector<float> reference = CompileAndRun(m, 0, x, &whole);
    const std::vector<float> y = CompileAndRun(m, 3, x, &trimmed);
    EXPECT_NE(trimmed.find("_" + c.window + "_"), std::string::npos) << trimmed;
    ASSERT_EQ(reference.size(), y.size());
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], reference[i], 1e-4f) << i;
  }
}

}  // namespace
}  // namespace tunefarm
