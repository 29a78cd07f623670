// ConvTransposeAsConv (compiler/model/passes/conv_transpose_as_conv.h): transposed convolutions with
// constant weights compile to a tunable conv2d plus DepthToSpace and Slice, and match a naive
// transposed convolution over strides, kernels, pads, output_padding, output_shape, groups and
// bias; the forms the identity does not cover (dilations) keep the direct kernel and match too.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm {
namespace {

struct Case {
  int64_t c = 3, o = 4, h = 5, w = 6, k = 3, s = 2;
  std::vector<int64_t> pads = {0, 0, 0, 0}, output_padding = {0, 0}, output_shape;
  int64_t group = 1, dilation = 1;
  bool bias = true;
  std::string Name() const {
    std::string n = "k" + std::to_string(k) + " s" + std::to_string(s) + " pads";
    for (int64_t p : pads) n += " " + std::to_string(p);
    n += " op " + std::to_string(output_padding[0]) + "," + std::to_string(output_padding[1]);
    if (!output_shape.empty())
      n += " output_shape " + std::to_string(output_shape[0]) + "x" + std::to_string(output_shape[1]);
    return n + " group " + std::to_string(group) + " dilation " + std::to_string(dilation) + (bias ? " bias" : "");
  }
};

// y[o, n] = bias[o] + sum over c, taps t with n + pad = i*s + t*d of x[c, i] w[c, o, t] (2-D).
std::vector<float> Reference(const Case& cs, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b, int64_t oh, int64_t ow, int64_t ph, int64_t pw) {
  const int64_t og = cs.o / cs.group, cg = cs.c / cs.group;
  std::vector<float> y(size_t(cs.o * oh * ow), 0.0f);
  for (int64_t o = 0; o < cs.o; ++o) {
    for (int64_t yh = 0; yh < oh; ++yh) {
      for (int64_t yw = 0; yw < ow; ++yw) {
        double acc = cs.bias ? b[size_t(o)] : 0.0;
        const int64_t g = o / og;
        for (int64_t c = g * cg; c < (g + 1) * cg; ++c) {
          for (int64_t th = 0; th < cs.k; ++th) {
            for (int64_t tw = 0; tw < cs.k; ++tw) {
              const int64_t nh = yh + ph - th * cs.dilation, nw = yw + pw - tw * cs.dilation;
              if (nh < 0 || nw < 0 || nh % cs.s || nw % cs.s || nh / cs.s >= cs.h || nw / cs.s >= cs.w) continue;
              acc += double(x[size_t((c * cs.h + nh / cs.s) * cs.w + nw / cs.s)]) *
                     w[size_t(((c * og + o % og) * cs.k + th) * cs.k + tw)];
            }
          }
        }
        y[size_t((o * oh + yh) * ow + yw)] = float(acc);
      }
    }
  }
  return y;
}

void AddInitializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<float>& v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float f : v) t->add_float_data(f);
}

void AddInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// Compiles at opt level 3 for the host (or an sm_90 GPU, emulated on the CPU), runs, and checks
// the values and whether a conv2d task computed them.
void Check(const Case& cs, bool gpu = false) {
  SCOPED_TRACE(cs.Name() + (gpu ? " on sm_90 (emulated)" : ""));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(size_t(cs.c * cs.h * cs.w)), w(size_t(cs.c * (cs.o / cs.group) * cs.k * cs.k)), b(size_t(cs.o));
  for (auto* v : {&x, &w, &b}) {
    for (float& f : *v) f = dist(rng);
  }
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("ct");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {int64_t(1), cs.c, cs.h, cs.w})
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  AddInitializer(g, "w", {cs.c, cs.o / cs.group, cs.k, cs.k}, w);
  auto* n = g->add_node();
  n->set_name("up");
  n->set_op_type("ConvTranspose");
  n->add_input("x");
  n->add_input("w");
  if (cs.bias) {
    AddInitializer(g, "b", {cs.o}, b);
    n->add_input("b");
  }
  n->add_output("y");
  g->add_output()->set_name("y");
  AddInts(n, "strides", {cs.s, cs.s});
  AddInts(n, "dilations", {cs.dilation, cs.dilation});
  AddInts(n, "output_padding", cs.output_padding);
  if (cs.output_shape.empty())
    AddInts(n, "pads", cs.pads);
  else
    AddInts(n, "output_shape", cs.output_shape);
  auto* group = n->add_attribute();
  group->set_name("group");
  group->set_type(onnx::AttributeProto::INT);
  group->set_i(cs.group);

  auto artifact = testing::CompileOnnxBytes(m.SerializeAsString(), "ct", 3, gpu);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  bool as_conv = false;
  for (const auto& k : artifact->kernels) as_conv = as_conv || k.workload.find("conv2d") != std::string::npos;
  auto ex = runtime::Executor::Load(std::move(*artifact));
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  ASSERT_TRUE((*ex)->SetInput(0, x.data(), x.size() * 4).ok());
  ASSERT_TRUE((*ex)->Run().ok());
  const auto& shape = (*ex)->outputs()[0].shape;
  ASSERT_EQ(shape.size(), 4u);
  // The begin pads as ONNX derives them from output_shape (SAME_UPPER-like split of the total).
  int64_t ph = cs.pads[0], pw = cs.pads[1];
  if (!cs.output_shape.empty()) {
    const int64_t natural = cs.s * (cs.h - 1) + cs.output_padding[0] + (cs.k - 1) * cs.dilation + 1;
    const int64_t total = natural - cs.output_shape[0];
    ph = pw = total - (total >= 0 ? total / 2 : -((1 - total) / 2));
  }
  // The identity covers undilated windows whose cropped output lies inside the phases' extent,
  // (in + ceil(k / s) - 1) * s; output_padding can reach past it.
  const int64_t taps = (cs.k + cs.s - 1) / cs.s;
  const bool expect_conv = cs.dilation == 1 && ph >= 0 && ph + shape[2] <= (cs.h + taps - 1) * cs.s &&
                           pw + shape[3] <= (cs.w + taps - 1) * cs.s;
  EXPECT_EQ(as_conv, expect_conv) << "the rewrite " << (expect_conv ? "did not apply" : "applied where it must not");
  const std::vector<float> ref = Reference(cs, x, w, b, shape[2], shape[3], ph, pw);
  const float* y = static_cast<const float*>((*ex)->Output(0));
  double worst = 0, scale = 1e-6;
  for (size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, double(std::fabs(y[i] - ref[i])));
    scale = std::max(scale, double(std::fabs(ref[i])));
  }
  EXPECT_LE(worst / scale, 1e-5);
}

TEST(ConvTransposeAsConv, MatchesANaiveTransposedConvolutionOverItsForms) {
  for (int64_t s : {1, 2, 3}) {
    for (int64_t k : {1, 2, 3, 4, 5}) {
      Case cs;
      cs.s = s;
      cs.k = k;
      Check(cs);
      cs.pads = {k / 2, (k - 1) / 2, (k - 1) / 2, k / 2};  // asymmetric cropping
      cs.bias = (k % 2) == 0;
      Check(cs);
      if (s > 1) {
        cs.output_padding = {s - 1, 0};
        Check(cs);
      }
    }
  }
  Case same;
  same.k = 4;
  same.s = 2;
  same.pads = {1, 1, 1, 1};  // the GAN/decoder form: exactly 2x up-sampling
  Check(same);
  Case shaped;
  shaped.output_shape = {10, 12};
  Check(shaped);
  // The CUDA conv2d templates take the rewritten form too.
  Check(same, /*gpu=*/true);
  Case unet;  // k = s: a 1x1 convolution and the interleave
  unet.k = 2;
  Check(unet, /*gpu=*/true);
}

TEST(ConvTransposeAsConv, GroupedWindowsAreConvTasksTooAndDilatedOnesStayDirect) {
  for (int64_t s : {1, 2, 3}) {
    Case grouped;  // two groups of 2 input and 3 output channels each
    grouped.c = 4;
    grouped.o = 6;
    grouped.group = 2;
    grouped.s = s;
    Check(grouped);
    Case depthwise;  // the decoders' per-channel up-sampling
    depthwise.c = depthwise.o = depthwise.group = 4;
    depthwise.s = s;
    depthwise.k = 2 * s;
    depthwise.pads = {s / 2, s / 2, s / 2, s / 2};
    Check(depthwise);
    Case dilated;  // mostly-zero phases: the direct kernel, which must match too
    dilated.dilation = 2;
    dilated.s = s;
    dilated.pads = {1, 0, 0, 1};
    Check(dilated);
  }
  Case depthwise;
  depthwise.c = depthwise.o = depthwise.group = 4;
  depthwise.k = 4;
  depthwise.pads = {1, 1, 1, 1};
  Check(depthwise, /*gpu=*/true);
}

}  // namespace
}  // namespace tunefarm
