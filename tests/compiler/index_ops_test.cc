// The indexed operators' forms the ONNX backend data leaves out (compiler/ops/index.cc):
// ScatterElements' mul, max and min reductions over duplicate indices, checked by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/onnx_builder.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/model/compile_graph.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm {
namespace {

using testing::AttrString;
using testing::OnnxBuilder;

std::vector<float> Scatter(const std::string& reduction) {
  OnnxBuilder b(18);
  b.Input("x", {3});
  b.Ints("idx", {0, 0, 2});
  b.Floats("updates", {3}, {4, 2, 7});
  b.Node("ScatterElements", {"x", "idx", "updates"}, {"y"}, {AttrString("reduction", reduction)});
  b.Output("y");
  auto g = frontend::ImportOnnxBytes(b.Bytes(), "scatter");
  EXPECT_TRUE(g.ok()) << g.status().message();
  compiler::CompileOptions options;
  options.warn = [](const std::string&) {};
  auto artifact = compiler::CompileGraph(std::move(*g), "scatter", compiler::HostTarget(), options);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  auto ex = runtime::Executor::Load(std::move(*artifact));
  EXPECT_TRUE(ex.ok());
  const std::vector<float> x = {1, 5, 3};
  EXPECT_TRUE((*ex)->SetInput(0, x.data(), 12).ok());
  EXPECT_TRUE((*ex)->Run().ok());
  const float* y = static_cast<const float*>((*ex)->Output(0));
  return std::vector<float>(y, y + 3);
}

TEST(IndexOps, ScatterElementsReducesDuplicateIndices) {
  EXPECT_EQ(Scatter("add"), (std::vector<float>{1 + 4 + 2, 5, 3 + 7}));
  EXPECT_EQ(Scatter("mul"), (std::vector<float>{1 * 4 * 2, 5, 3 * 7}));
  EXPECT_EQ(Scatter("max"), (std::vector<float>{4, 5, 7}));
  EXPECT_EQ(Scatter("min"), (std::vector<float>{1, 5, 3}));
}

}  // namespace
}  // namespace tunefarm
