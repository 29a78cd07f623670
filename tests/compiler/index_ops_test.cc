// The indexed operators' forms the ONNX backend data leaves out (compiler/compute/index.cc):
// ScatterElements' mul, max and min reductions over duplicate indices, on float32 and on int32
// (whose reductions' identities must be int32's own extremes), checked by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "common/onnx_builder.h"
#include "common/run_artifact.h"

namespace tunefarm {
namespace {

using testing::AttrInt;
using testing::AttrString;
using testing::OnnxBuilder;

// ScatterElements(x, [0, 0, 2], updates) with `reduction`, computed in float32 or (cast there and
// back) int32.
std::vector<float> Scatter(const std::string& reduction, const std::vector<float>& x, const std::vector<float>& updates,
                           bool int32) {
  OnnxBuilder b(18);
  b.Input("x", {3});
  b.Ints("idx", {0, 0, 2});
  b.Floats("updates", {3}, updates);
  if (int32) {
    b.Node("Cast", {"x"}, {"xi"}, {AttrInt("to", 6)});
    b.Node("Cast", {"updates"}, {"ui"}, {AttrInt("to", 6)});
    b.Node("ScatterElements", {"xi", "idx", "ui"}, {"yi"}, {AttrString("reduction", reduction)});
    b.Node("Cast", {"yi"}, {"y"}, {AttrInt("to", 1)});
  } else {
    b.Node("ScatterElements", {"x", "idx", "updates"}, {"y"}, {AttrString("reduction", reduction)});
  }
  b.Output("y");
  auto artifact = testing::CompileOnnxBytes(b.Bytes(), "scatter");
  if (!artifact.ok()) {
    ADD_FAILURE() << artifact.status().message();
    return {};
  }
  return testing::RunArtifact(std::move(*artifact), x);
}

TEST(IndexOps, ScatterElementsReducesDuplicateIndices) {
  const std::vector<float> x = {1, 5, 3}, updates = {4, -2, 7};
  for (bool int32 : {false, true}) {
    SCOPED_TRACE(int32 ? "int32" : "float32");
    EXPECT_EQ(Scatter("none", x, {4, 9, 7}, int32), (std::vector<float>{4 + 9, 5, 7}));  // duplicates add
    EXPECT_EQ(Scatter("add", x, updates, int32), (std::vector<float>{1 + 4 - 2, 5, 3 + 7}));
    EXPECT_EQ(Scatter("mul", x, updates, int32), (std::vector<float>{1 * 4 * -2, 5, 3 * 7}));
    EXPECT_EQ(Scatter("max", x, updates, int32), (std::vector<float>{4, 5, 7}));
    EXPECT_EQ(Scatter("min", x, updates, int32), (std::vector<float>{-2, 5, 3}));
    // All negative: a max whose identity were 0 would give 0.
    EXPECT_EQ(Scatter("max", {-10, -10, -10}, {-5, -7, -20}, int32), (std::vector<float>{-5, -10, -10}));
    EXPECT_EQ(Scatter("min", {10, 10, 10}, {5, 7, 20}, int32), (std::vector<float>{5, 10, 10}));
  }
}

}  // namespace
}  // namespace tunefarm
