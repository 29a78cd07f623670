#include "common/small_model.h"

#include <fstream>
#include <random>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <onnx/onnx_pb.h>
#pragma GCC diagnostic pop

namespace tunefarm::testing {
namespace {

void AddInitializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims, std::mt19937* rng) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  std::uniform_real_distribution<float> u(-0.2f, 0.2f);
  for (int64_t i = 0; i < n; ++i) t->add_float_data(u(*rng));
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                         const std::string& out) {
  auto* n = g->add_node();
  n->set_name(out);
  n->set_op_type(op);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

void SetTensorType(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

}  // namespace

bool WriteSmallCnnOnnx(const std::string& path, int in_channels, int out_channels) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("tunefarm tests");
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("small_cnn");
  std::mt19937 rng(7);
  SetTensorType(g->add_input(), "input", {1, in_channels, 14, 14});
  AddInitializer(g, "conv.w", {out_channels, in_channels, 3, 3}, &rng);
  AddInitializer(g, "conv.b", {out_channels}, &rng);
  AddInitializer(g, "fc.w", {10, out_channels}, &rng);
  AddInitializer(g, "fc.b", {10}, &rng);
  auto* conv = AddNode(g, "Conv", {"input", "conv.w", "conv.b"}, "conv");
  auto* ks = conv->add_attribute();
  ks->set_name("kernel_shape");
  ks->set_type(onnx::AttributeProto::INTS);
  ks->add_ints(3);
  ks->add_ints(3);
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  AddNode(g, "Relu", {"conv"}, "relu");
  AddNode(g, "GlobalAveragePool", {"relu"}, "pool");
  AddNode(g, "Flatten", {"pool"}, "flat");
  auto* gemm = AddNode(g, "Gemm", {"flat", "fc.w", "fc.b"}, "logits");
  auto* tb = gemm->add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  SetTensorType(g->add_output(), "logits", {1, 10});
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  return m.SerializeToOstream(&out) && out.good();
}

}  // namespace tunefarm::testing
