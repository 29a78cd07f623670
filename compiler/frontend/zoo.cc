#include "compiler/frontend/zoo.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>

#include "compiler/frontend/input_shapes.h"
#include "compiler/frontend/onnx_importer.h"

namespace tunefarm::frontend {
namespace {

using graph::Attribute;
using graph::ConstantData;
using graph::DataType;

// Builds graphs node by node; weights come from a fixed-seed generator, so every build of a
// model has the same weights on every machine.
class Builder {
 public:
  explicit Builder(uint64_t seed) : state_(seed) {
    g_.opset = 13;
    graph::Value in;
    in.name = "data";
    in.shape = {1, 3, 224, 224};
    in.shape_known = true;
    g_.inputs.push_back(g_.AddValue(in));
  }
  int input() const { return g_.inputs[0]; }

  int Conv(int x, int64_t in_ch, int64_t out_ch, int64_t k, int64_t stride, int64_t pad, int64_t groups = 1,
           bool bias = false) {
    std::string name = Name("conv");
    int64_t fan_in = in_ch / groups * k * k, fan_out = out_ch / groups * k * k;
    std::vector<int> in = {x, Xavier(name + ".weight", {out_ch, in_ch / groups, k, k}, fan_in, fan_out)};
    if (bias) in.push_back(Fill(name + ".bias", {out_ch}, 0.0f));
    int y = Op("Conv", name, in);
    SetInts(y, "kernel_shape", {k, k});
    SetInts(y, "strides", {stride, stride});
    SetInts(y, "pads", {pad, pad, pad, pad});
    SetInt(y, "group", groups);
    return y;
  }
  int BatchNorm(int x, int64_t ch) {
    std::string name = Name("bn");
    return Op("BatchNormalization", name,
              {x, Fill(name + ".gamma", {ch}, 1.0f), Fill(name + ".beta", {ch}, 0.0f), Fill(name + ".mean", {ch}, 0.0f),
               Fill(name + ".var", {ch}, 1.0f)});
  }
  int Relu(int x) { return Op("Relu", Name("relu"), {x}); }
  int Relu6(int x) {
    std::string name = Name("relu6");
    return Op("Clip", name, {x, Fill(name + ".min", {}, 0.0f), Fill(name + ".max", {}, 6.0f)});
  }
  int ConvBn(int x, int64_t in_ch, int64_t out_ch, int64_t k, int64_t stride, int64_t pad, int64_t groups = 1) {
    return BatchNorm(Conv(x, in_ch, out_ch, k, stride, pad, groups), out_ch);
  }
  int Add(int a, int b) { return Op("Add", Name("add"), {a, b}); }
  int MaxPool(int x, int64_t k, int64_t stride, int64_t pad, bool ceil_mode = false) {
    int y = Op("MaxPool", Name("maxpool"), {x});
    SetInts(y, "kernel_shape", {k, k});
    SetInts(y, "strides", {stride, stride});
    SetInts(y, "pads", {pad, pad, pad, pad});
    SetInt(y, "ceil_mode", ceil_mode ? 1 : 0);
    return y;
  }
  int GlobalAvgPool(int x) { return Op("GlobalAveragePool", Name("gap"), {x}); }
  int Flatten(int x) {
    int y = Op("Flatten", Name("flatten"), {x});
    SetInt(y, "axis", 1);
    return y;
  }
  int Dense(int x, int64_t in, int64_t out) {
    std::string name = Name("dense");
    int y = Op("Gemm", name, {x, Xavier(name + ".weight", {out, in}, in, out), Fill(name + ".bias", {out}, 0.0f)});
    SetInt(y, "transB", 1);
    return y;
  }
  int Concat(const std::vector<int>& xs) {
    int y = Op("Concat", Name("concat"), xs);
    SetInt(y, "axis", 1);
    return y;
  }
  graph::Graph Finish(int out) {
    int y = Op("Softmax", "softmax", {out});
    SetInt(y, "axis", 1);
    g_.outputs = {y};
    return std::move(g_);
  }

 private:
  std::string Name(const char* kind) { return std::string(kind) + std::to_string(counter_++); }
  int Op(const std::string& op, const std::string& name, std::vector<int> inputs) {
    graph::Node n;
    n.name = name;
    n.op_type = op;
    n.inputs = std::move(inputs);
    graph::Value v;
    v.name = name;
    v.producer = int(g_.nodes.size());
    n.outputs = {g_.AddValue(v)};
    g_.nodes.push_back(std::move(n));
    return g_.nodes.back().outputs[0];
  }
  graph::Node& NodeOf(int value) { return g_.nodes[size_t(g_.values[size_t(value)].producer)]; }
  void SetInt(int value, const char* name, int64_t v) {
    Attribute a;
    a.kind = Attribute::kInt;
    a.i = v;
    NodeOf(value).attrs[name] = a;
  }
  void SetInts(int value, const char* name, std::vector<int64_t> v) {
    Attribute a;
    a.kind = Attribute::kInts;
    a.ints = std::move(v);
    NodeOf(value).attrs[name] = a;
  }
  int Fill(const std::string& name, std::vector<int64_t> shape, float v) {
    ConstantData c{DataType::kFloat32, std::move(shape), {}, {}};
    c.f32.assign(size_t(c.num_elements()), v);
    return g_.AddConstant(name, std::move(c));
  }
  // Xavier uniform (relay.testing's default initializer): U(-a, a), a = sqrt(6 / (fan_in + fan_out)).
  int Xavier(const std::string& name, std::vector<int64_t> shape, int64_t fan_in, int64_t fan_out) {
    ConstantData c{DataType::kFloat32, std::move(shape), {}, {}};
    c.f32.resize(size_t(c.num_elements()));
    const float a = float(std::sqrt(6.0 / double(fan_in + fan_out)));
    for (float& x : c.f32) x = a * (2.0f * Uniform() - 1.0f);
    return g_.AddConstant(name, std::move(c));
  }
  // splitmix64: fast, and the same sequence everywhere.
  float Uniform() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return float(z >> 40) / float(1 << 24);
  }

  graph::Graph g_;
  uint64_t state_;
  int counter_ = 0;
};

graph::Graph ResNet(int depth) {
  Builder b{uint64_t(depth)};
  const bool bottleneck = depth >= 50;
  const std::vector<int> blocks = depth == 18 ? std::vector<int>{2, 2, 2, 2} : std::vector<int>{3, 4, 6, 3};
  int x = b.Relu(b.ConvBn(b.input(), 3, 64, 7, 2, 3));
  x = b.MaxPool(x, 3, 2, 1);
  int64_t in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    int64_t width = 64 << stage, out = bottleneck ? width * 4 : width;
    for (int i = 0; i < blocks[size_t(stage)]; ++i) {
      int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
      int shortcut = x;
      if (stride != 1 || in != out) shortcut = b.ConvBn(x, in, out, 1, stride, 0);
      int y;
      if (bottleneck) {
        y = b.Relu(b.ConvBn(x, in, width, 1, 1, 0));
        y = b.Relu(b.ConvBn(y, width, width, 3, stride, 1));
        y = b.ConvBn(y, width, out, 1, 1, 0);
      } else {
        y = b.Relu(b.ConvBn(x, in, width, 3, stride, 1));
        y = b.ConvBn(y, width, width, 3, 1, 1);
      }
      x = b.Relu(b.Add(y, shortcut));
      in = out;
    }
  }
  return b.Finish(b.Dense(b.Flatten(b.GlobalAvgPool(x)), in, 1000));
}

graph::Graph MobileNetV1() {
  Builder b(101);
  int x = b.Relu(b.ConvBn(b.input(), 3, 32, 3, 2, 1));
  const int64_t cfg[][2] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},  {512, 2}, {512, 1},
                            {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
  int64_t in = 32;
  for (const auto& c : cfg) {
    x = b.Relu(b.ConvBn(x, in, in, 3, c[1], 1, in));  // depthwise
    x = b.Relu(b.ConvBn(x, in, c[0], 1, 1, 0));       // pointwise
    in = c[0];
  }
  return b.Finish(b.Dense(b.Flatten(b.GlobalAvgPool(x)), in, 1000));
}

graph::Graph MobileNetV2() {
  Builder b(102);
  int x = b.Relu6(b.ConvBn(b.input(), 3, 32, 3, 2, 1));
  const int64_t cfg[][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                            {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};  // expansion, channels, repeats, stride
  int64_t in = 32;
  for (const auto& c : cfg) {
    for (int64_t i = 0; i < c[2]; ++i) {
      int64_t stride = i == 0 ? c[3] : 1, hidden = in * c[0];
      int y = x;
      if (c[0] != 1) y = b.Relu6(b.ConvBn(y, in, hidden, 1, 1, 0));
      y = b.Relu6(b.ConvBn(y, hidden, hidden, 3, stride, 1, hidden));
      y = b.ConvBn(y, hidden, c[1], 1, 1, 0);
      x = (stride == 1 && in == c[1]) ? b.Add(y, x) : y;
      in = c[1];
    }
  }
  x = b.Relu6(b.ConvBn(x, in, 1280, 1, 1, 0));
  return b.Finish(b.Dense(b.Flatten(b.GlobalAvgPool(x)), 1280, 1000));
}

graph::Graph Vgg16() {
  Builder b(16);
  const int64_t cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};  // 0 = pool
  int x = b.input();
  int64_t in = 3;
  for (int64_t c : cfg) {
    if (c == 0) {
      x = b.MaxPool(x, 2, 2, 0);
    } else {
      x = b.Relu(b.Conv(x, in, c, 3, 1, 1, 1, /*bias=*/true));
      in = c;
    }
  }
  x = b.Relu(b.Dense(b.Flatten(x), 512 * 7 * 7, 4096));
  x = b.Relu(b.Dense(x, 4096, 4096));
  return b.Finish(b.Dense(x, 4096, 1000));
}

graph::Graph SqueezeNet11() {
  Builder b(11);
  int x = b.MaxPool(b.Relu(b.Conv(b.input(), 3, 64, 3, 2, 0, 1, true)), 3, 2, 0, true);
  int64_t in = 64;
  auto fire = [&](int64_t squeeze, int64_t expand) {
    int s = b.Relu(b.Conv(x, in, squeeze, 1, 1, 0, 1, true));
    int e1 = b.Relu(b.Conv(s, squeeze, expand, 1, 1, 0, 1, true));
    int e3 = b.Relu(b.Conv(s, squeeze, expand, 3, 1, 1, 1, true));
    x = b.Concat({e1, e3});
    in = 2 * expand;
  };
  fire(16, 64);
  fire(16, 64);
  x = b.MaxPool(x, 3, 2, 0, true);
  fire(32, 128);
  fire(32, 128);
  x = b.MaxPool(x, 3, 2, 0, true);
  fire(48, 192);
  fire(48, 192);
  fire(64, 256);
  fire(64, 256);
  x = b.Relu(b.Conv(x, in, 1000, 1, 1, 0, 1, true));
  return b.Finish(b.Flatten(b.GlobalAvgPool(x)));
}

}  // namespace

const std::vector<std::string>& ZooModelNames() {
  static const std::vector<std::string> kNames = {"resnet-18",    "resnet-34", "resnet-50",     "mobilenet-v1",
                                                  "mobilenet-v2", "vgg-16",    "squeezenet-1.1"};
  return kNames;
}

bool IsZooModel(const std::string& name) {
  const auto& names = ZooModelNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

Result<graph::Graph> ZooModel(const std::string& name) {
  if (name == "resnet-18") return ResNet(18);
  if (name == "resnet-34") return ResNet(34);
  if (name == "resnet-50") return ResNet(50);
  if (name == "mobilenet-v1") return MobileNetV1();
  if (name == "mobilenet-v2") return MobileNetV2();
  if (name == "vgg-16") return Vgg16();
  if (name == "squeezenet-1.1") return SqueezeNet11();
  std::string known;
  for (const auto& n : ZooModelNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::NotFound("unknown zoo model '" + name + "' (known: " + known + ")");
}

namespace {

Result<graph::Graph> LoadGraph(const std::string& model) {
  struct stat st;
  if (stat(model.c_str(), &st) == 0) return ImportOnnxFile(model);
  if (IsZooModel(model)) return ZooModel(model);
  std::string known;
  for (const auto& n : ZooModelNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::NotFound("model '" + model + "' is neither a file nor a zoo model (" + known + ")");
}

}  // namespace

Result<graph::Graph> LoadModel(const std::string& model, const std::vector<compiler::InputShape>& input_shapes) {
  TUNEFARM_ASSIGN_OR_RETURN(graph::Graph g, LoadGraph(model));
  TUNEFARM_RETURN_IF_ERROR(ApplyInputShapes(&g, input_shapes).WithContext("model " + model));
  return g;
}

}  // namespace tunefarm::frontend
