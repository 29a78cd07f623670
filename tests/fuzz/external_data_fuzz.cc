// Fuzz target: ONNX models that name external data and hold If subgraphs, imported from a folder
// beside them (a data file, a symlink out of the folder, a subfolder, a FIFO). Every location,
// offset and length an input names is read beneath that folder with no link followed, or refused
// with a Status; nothing is allocated for a size the file does not have.
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/test_files.h"
#include "compiler/frontend/onnx_importer.h"
#include "fuzz/fuzz_target.h"

namespace {

const std::string& Folder() {
  static const std::string dir = [] {
    const std::string d = "/tmp/tunefarm_external_fuzz_" + std::to_string(getpid());
    mkdir(d.c_str(), 0700);
    mkdir((d + "/sub").c_str(), 0700);
    tunefarm::testing::WriteFile(d + "/w.bin", std::string(64, '\x01'));
    tunefarm::testing::WriteFile(d + "/sub/w.bin", std::string(64, '\x02'));
    (void)symlink("/etc/hostname", (d + "/out.bin").c_str());
    (void)symlink("w.bin", (d + "/in.bin").c_str());
    (void)mkfifo((d + "/fifo").c_str(), 0600);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tunefarm::frontend::ImportOnnxBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz input",
                                            Folder());
  return 0;
}

namespace tunefarm::fuzz {

std::vector<std::string> Seeds() {
  auto model = [](const std::string& location, const std::string& offset, const std::string& length, bool in_if) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    auto* c = g->add_input();
    c->set_name("c");
    c->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
    onnx::GraphProto* where = g;
    onnx::GraphProto branch;
    if (in_if) where = &branch;
    auto* t = where->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(4);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [k, v] :
         {std::pair<std::string, std::string>{"location", location}, {"offset", offset}, {"length", length}}) {
      auto* kv = t->add_external_data();
      kv->set_key(k);
      kv->set_value(v);
    }
    auto* n = where->add_node();
    n->set_op_type("Identity");
    n->add_input("w");
    n->add_output("y");
    where->add_output()->set_name("y");
    if (in_if) {
      auto* node = g->add_node();
      node->set_op_type("If");
      node->add_input("c");
      node->add_output("y");
      for (const char* name : {"then_branch", "else_branch"}) {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        *a->mutable_g() = branch;
      }
      g->add_output()->set_name("y");
    }
    return m.SerializeAsString();
  };
  return {model("w.bin", "0", "16", false),     model("w.bin", "48", "16", true),
          model("sub/w.bin", "8", "16", false), model("out.bin", "0", "16", false),
          model("in.bin", "0", "16", true),     model("fifo", "0", "16", false),
          model("../w.bin", "0", "16", false),  model("w.bin", "18446744073709551615", "16", false),
          model("sub", "0", "16", false),       model(std::string("w.bin\0x", 7), "0", "16", false)};
}

}  // namespace tunefarm::fuzz
