// Builds small ONNX models in tests (one opset, float32 inputs, float or int64 initializers):
//   OnnxBuilder b(18);
//   b.Input("x", {1, 3, 8, 8});
//   b.Ints("axes", {2, 3});
//   b.Node("ReduceMean", {"x", "axes"}, {"y"}, {AttrInt("keepdims", 0)});
//   b.Output("y");
//   std::string bytes = b.Bytes();
#ifndef TUNEFARM_TESTS_COMMON_ONNX_BUILDER_H_
#define TUNEFARM_TESTS_COMMON_ONNX_BUILDER_H_

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <onnx/onnx_pb.h>
#pragma GCC diagnostic pop

namespace tunefarm::testing {

inline onnx::AttributeProto AttrInt(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}
inline onnx::AttributeProto AttrInts(const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}
inline onnx::AttributeProto AttrFloat(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}
inline onnx::AttributeProto AttrString(const std::string& name, const std::string& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset) {
    model_.set_ir_version(8);
    auto* os = model_.add_opset_import();
    os->set_domain("");
    os->set_version(opset);
  }

  void Input(const std::string& name, const std::vector<int64_t>& shape, int32_t elem_type = onnx::TensorProto::FLOAT) {
    auto* in = model_.mutable_graph()->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  // An input with symbolic dimensions as exporters write them: a number is fixed, a name
  // ("batch") a dim_param, "" an unnamed dimension.
  void SymbolicInput(const std::string& name, const std::vector<std::string>& dims) {
    auto* in = model_.mutable_graph()->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (const std::string& d : dims) {
      auto* dim = tt->mutable_shape()->add_dim();
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) {
        dim->set_dim_value(std::stoll(d));
      } else if (!d.empty()) {
        dim->set_dim_param(d);
      }
    }
  }
  void Floats(const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& v) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) t->add_dims(d);
    for (float x : v) t->add_float_data(x);
  }
  // An 8-bit integer initializer (elem_type INT8 or UINT8; ONNX keeps them in int32_data).
  void Bytes8(const std::string& name, const std::vector<int64_t>& shape, const std::vector<int32_t>& v,
              int32_t elem_type) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(elem_type);
    for (int64_t d : shape) t->add_dims(d);
    for (int32_t x : v) t->add_int32_data(x);
  }
  // An int32 initializer (a quantized convolution's bias, an expected accumulator).
  void Int32s(const std::string& name, const std::vector<int64_t>& shape, const std::vector<int32_t>& v) {
    Bytes8(name, shape, v, onnx::TensorProto::INT32);
  }
  // A 1-D int64 initializer (axes, pads, shapes, split sizes).
  void Ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
  }
  onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::vector<onnx::AttributeProto>& attrs = {}) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_name("n" + std::to_string(model_.graph().node_size() - 1));
    n->set_op_type(op);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    for (const auto& a : attrs) *n->add_attribute() = a;
    return n;
  }
  void Output(const std::string& name) { model_.mutable_graph()->add_output()->set_name(name); }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_ONNX_BUILDER_H_
