// Fuzz target: the ONNX importer on model bytes (no external data: base directory empty). It
// imports or returns a Status; it never throws, spins or allocates without bound.
#include "common/onnx_builder.h"
#include "compiler/frontend/onnx_importer.h"
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tunefarm::frontend::ImportOnnxBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz input");
  return 0;
}

namespace tunefarm::fuzz {

std::vector<std::string> Seeds() {
  using testing::AttrInt;
  using testing::AttrInts;
  auto conv = [](const std::vector<int64_t>& pads, const std::string& input) {
    testing::OnnxBuilder b(13);
    b.Input(input, {1, 1, 4, 4});
    b.Floats("w", {1, 1, 1, 1}, {1.0f});
    b.Node("Conv", {input, "w"}, {"y"}, {AttrInts("pads", pads)});
    b.Output("y");
    return b.Bytes();
  };
  testing::OnnxBuilder cnn(18);
  cnn.Input("x", {1, 3, 8, 8});
  cnn.Floats("w", {4, 3, 3, 3}, std::vector<float>(108, 0.5f));
  cnn.Node("Conv", {"x", "w"}, {"c"}, {AttrInts("pads", {1, 1, 1, 1})});
  cnn.Node("Relu", {"c"}, {"r"}, {});
  cnn.Node("GlobalAveragePool", {"r"}, {"g"}, {});
  cnn.Node("Flatten", {"g"}, {"y"}, {AttrInt("axis", 1)});
  cnn.Output("y");
  return {cnn.Bytes(),
          conv({0, 0, 0, 0}, "x"),
          conv({int64_t(1) << 40, 0, 0, 0}, "x"),  // pads 2^40 (used to spin for hours)
          conv({-3, 0, 0, 0}, "x"),                // negative pads
          conv({0, 0, 0, 0}, "caf\xe9"),           // a tensor name that is not UTF-8 (used to abort)
          ""};
}

}  // namespace tunefarm::fuzz
