// What a model's inputs and files can make a compiled model do (issue 46): runtime indices out of
// range are an error naming the node and the index, never a read outside the table (P1);
// integer division by zero and INT_MIN / -1 never trap (P7); external data is opened once beneath
// the model's folder, so a file swapped for a symlink while compiling is never read (P2); weights
// larger than this process may hold are refused with the figures (P3); nested If names grow with
// the model, not with its depth (P4). The sanitizer build runs these too.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "common/compile_onnx.h"
#include "common/onnx_builder.h"
#include "common/test_files.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/compiler/model.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm {
namespace {

using testing::AttrInt;
using testing::OnnxBuilder;

constexpr int32_t kInt64 = onnx::TensorProto::INT64, kInt32 = onnx::TensorProto::INT32;

// Runs the artifact with the given raw inputs (in the model's order); the run's status, and the
// first output's bytes in *out when it succeeded.
Status RunRaw(runtime::Artifact artifact, const std::vector<std::string>& inputs, std::string* out = nullptr) {
  TUNEFARM_ASSIGN_OR_RETURN(auto ex, runtime::Executor::Load(std::move(artifact)));
  for (size_t i = 0; i < inputs.size(); ++i) {
    TUNEFARM_RETURN_IF_ERROR(ex->SetInput(i, inputs[i].data(), inputs[i].size()));
  }
  TUNEFARM_RETURN_IF_ERROR(ex->Run());
  if (out) *out = std::string(static_cast<const char*>(ex->Output(0)), size_t(ex->outputs()[0].bytes()));
  return Status::OK();
}

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

template <typename T>
std::vector<T> Values(const std::string& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

const std::vector<float> kTable = {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32};  // [4, 3]

// Gather(data [4, 3], i [5], axis 0) with the indices a graph input of `index_type`, and the table
// a graph input or a constant.
Result<runtime::Artifact> GatherModel(int32_t index_type, bool constant_table, bool gpu = false) {
  OnnxBuilder b(13);
  if (constant_table) {
    b.Floats("data", {4, 3}, kTable);
  } else {
    b.Input("data", {4, 3});
  }
  b.Input("i", {5}, index_type);
  b.Node("Gather", {"data", "i"}, {"g"}, {AttrInt("axis", 0)});
  b.Output("g");
  return testing::CompileOnnxBytes(b.Bytes(), "gather", 3, gpu);
}

TEST(HostileRuntime, GatherIndicesOutOfRangeAreAnErrorNamingTheNode) {
  for (bool constant_table : {false, true}) {
    for (int32_t type : {kInt64, kInt32}) {
      SCOPED_TRACE(std::string(constant_table ? "constant" : "input") + " table, " +
                   (type == kInt64 ? "int64" : "int32") + " indices");
      auto artifact = GatherModel(type, constant_table);
      ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
      auto indices = [&](const std::vector<int64_t>& v) {
        if (type == kInt64) return Bytes(v);
        std::vector<int32_t> narrow(v.begin(), v.end());
        return Bytes(narrow);
      };
      std::vector<std::string> inputs;
      if (!constant_table) inputs.push_back(Bytes(kTable));
      // In range, negative ones counting from the end: the rows they name.
      inputs.push_back(indices({3, 0, -1, -4, 2}));
      std::string out;
      ASSERT_TRUE(RunRaw(*artifact, inputs, &out).ok());
      EXPECT_EQ(Values<float>(out), (std::vector<float>{30, 31, 32, 0, 1, 2, 30, 31, 32, 0, 1, 2, 20, 21, 22}));
      // The campaign's inputs: mild and extreme.
      const int64_t max = type == kInt64 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max();
      const int64_t min = type == kInt64 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min();
      const std::vector<std::vector<int64_t>> bad = {
          {4, 5, 100, -5, -1000}, {max, min, int64_t(1) << 30, 3, 0}, {0, 1, 2, 3, -5}, {0, 1, min, 3, 0}};
      const std::vector<std::string> expected = {
          "index 4 at position 0 is out of range [-4, 3]", "index " + std::to_string(max) + " at position 0",
          "index -5 at position 4 is out of range [-4, 3]", "index " + std::to_string(min) + " at position 2"};
      for (size_t k = 0; k < bad.size(); ++k) {
        inputs.back() = indices(bad[k]);
        Status s = RunRaw(*artifact, inputs);
        ASSERT_FALSE(s.ok()) << "indices " << k;
        EXPECT_NE(s.message().find("node 'n0' (Gather, opset 13): "), std::string::npos) << s.message();
        EXPECT_NE(s.message().find(expected[k]), std::string::npos) << s.message();
      }
    }
  }
}

// The kernel clamps as well: an executor that does not check (a CUDA artifact's indices live on
// the device; an older runtime) never reads outside the table. Checked with the checks removed, on
// the host kernels and on the CUDA ones emulated on the host, under the sanitizer build.
TEST(HostileRuntime, GatherKernelsClampWhenNothingChecks) {
  for (bool gpu : {false, true}) {
    auto artifact = GatherModel(kInt64, /*constant_table=*/false, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
    int checks = 0;
    for (auto& k : artifact->kernels) {
      checks += int(k.index_checks.size());
      k.index_checks.clear();
    }
    EXPECT_EQ(checks, 1) << (gpu ? "cuda" : "host");
    std::string out;
    ASSERT_TRUE(RunRaw(*artifact,
                       {Bytes(kTable), Bytes(std::vector<int64_t>{100, -1000, std::numeric_limits<int64_t>::max(),
                                                                  std::numeric_limits<int64_t>::min(), 1})},
                       &out)
                    .ok());
    // Clamped to the last row, the first row (after counting from the end), last, first, row 1.
    EXPECT_EQ(Values<float>(out), (std::vector<float>{30, 31, 32, 0, 1, 2, 30, 31, 32, 0, 1, 2, 10, 11, 12}));
  }
}

TEST(HostileRuntime, EveryRuntimeIndexOperatorChecksItsIndices) {
  struct Case {
    std::string op;
    std::vector<int64_t> index_shape;
    std::vector<int64_t> bad;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"GatherElements",
       {4, 3},
       {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 7},
       "index 7 at position 11 is out of range [-4, 3]"},
      {"GatherND", {2, 2}, {1, 2, 3, 9}, "index 9 at position 3 is out of range [-3, 2]"},
      {"ScatterElements",
       {4, 3},
       {0, 1, 2, 3, -9, 1, 2, 3, 0, 1, 2, 3},
       "index -9 at position 4 is out of range [-4, 3]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    OnnxBuilder b(13);
    b.Input("data", {4, 3});
    b.Input("i", c.index_shape, kInt64);
    if (c.op == "ScatterElements") {
      b.Floats("u", {4, 3}, std::vector<float>(12, 7.0f));
      b.Node(c.op, {"data", "i", "u"}, {"y"});
    } else {
      b.Node(c.op, {"data", "i"}, {"y"});
    }
    b.Output("y");
    auto artifact = testing::CompileOnnxBytes(b.Bytes(), c.op);
    ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
    Status s = RunRaw(*artifact, {Bytes(kTable), Bytes(c.bad)});
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("node 'n0' (" + c.op + ", opset 13): " + c.expected), std::string::npos) << s.message();
  }
}

// Div, Mod (fmod 0 and 1) on int64 and int32 with a runtime divisor of 0 or -1 (INT_MIN / -1):
// values, not SIGFPE. A zero divisor gives 0; x / -1 is -x wrapped, its remainder 0.
TEST(HostileRuntime, IntegerDivisionByZeroAndIntMinByMinusOneNeverTrap) {
  for (int32_t type : {kInt64, kInt32}) {
    for (const std::string op : {"Div", "Mod0", "Mod1"}) {
      SCOPED_TRACE(op + (type == kInt64 ? " int64" : " int32"));
      OnnxBuilder b(13);
      b.Input("a", {4}, type);
      b.Input("b", {4}, type);
      if (op == "Div") {
        b.Node("Div", {"a", "b"}, {"y"});
      } else {
        b.Node("Mod", {"a", "b"}, {"y"}, {AttrInt("fmod", op == "Mod1" ? 1 : 0)});
      }
      b.Output("y");
      auto artifact = testing::CompileOnnxBytes(b.Bytes(), op);
      ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
      const int64_t min = type == kInt64 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min();
      const std::vector<int64_t> a = {7, min, min, -7}, d = {0, -1, 0, 2};
      auto as = [&](const std::vector<int64_t>& v) {
        if (type == kInt64) return Bytes(v);
        return Bytes(std::vector<int32_t>(v.begin(), v.end()));
      };
      std::string out;
      Status s = RunRaw(*artifact, {as(a), as(d)}, &out);
      ASSERT_TRUE(s.ok()) << s.ToString();
      std::vector<int64_t> y;
      if (type == kInt64) {
        y = Values<int64_t>(out);
      } else {
        for (int32_t v : Values<int32_t>(out)) y.push_back(v);
      }
      const std::vector<int64_t> want = op == "Div"    ? std::vector<int64_t>{0, min, 0, -3}  // -7/2 truncates
                                        : op == "Mod0" ? std::vector<int64_t>{0, 0, 0, 1}     // floors: sign of 2
                                                       : std::vector<int64_t>{0, 0, 0, -1};
      EXPECT_EQ(y, want);
    }
  }
}

// P20: the steps a model's recurrent nodes unroll are bounded for the whole model, not only per
// node; a negative hidden_size says what is wrong with it (P14).
TEST(HostileRuntime, RecurrentUnrollingIsBoundedPerModel) {
  // Bidirectional LSTMs: each node unrolls steps x 2.
  auto model = [](int nodes, int64_t steps, int64_t hidden_size) {
    OnnxBuilder b(14);
    b.Input("x", {steps, 1, 4});
    b.Floats("w", {2, 16, 4}, std::vector<float>(128, 0.01f));
    b.Floats("r", {2, 16, 4}, std::vector<float>(128, 0.01f));
    for (int k = 0; k < nodes; ++k) {
      const std::string y = "y" + std::to_string(k);
      b.Node("LSTM", {"x", "w", "r"}, {y},
             {AttrInt("hidden_size", hidden_size), testing::AttrString("direction", "bidirectional")});
      b.Output(y);
    }
    return b.Bytes();
  };
  auto three = testing::CompileOnnxBytes(model(3, 3000, 4), "lstm");
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.status().message().find("node 'n2' (LSTM, opset 14): the model's recurrent nodes unroll 18000 "
                                          "steps (steps times directions) up to here; at most 16384 are unrolled "
                                          "per model"),
            std::string::npos)
      << three.status().message();
  auto negative = testing::CompileOnnxBytes(model(1, 4, -5), "lstm");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("node 'n0' (LSTM, opset 14): hidden_size -5 must be positive"),
            std::string::npos)
      << negative.status().message();
}

class HostileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "tunefarm_hostile_files_" + std::to_string(getpid());
    ASSERT_EQ(system(("rm -rf " + dir_ + " && mkdir -p " + dir_ + "/model").c_str()), 0);
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0); }

  // model/m.onnx: y = x + w, w [4] float32 from external data `location`.
  std::string ExternalModel(const std::string& location, const std::vector<int64_t>& dims = {4}) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    auto* in = g->add_input();
    in->set_name("x");
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
    auto* t = g->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = t->add_external_data();
    kv->set_key("location");
    kv->set_value(location);
    auto* n = g->add_node();
    n->set_op_type("Add");
    n->add_input("x");
    n->add_input("w");
    n->add_output("y");
    g->add_output()->set_name("y");
    const std::string path = dir_ + "/model/m.onnx";
    testing::WriteFile(path, m.SerializeAsString());
    return path;
  }

  std::string dir_;
};

// P2: while the model's folder swaps its data file for a symlink to a file outside and back, as
// fast as it can, 150 compiles either read the folder's own bytes or refuse: none embeds the
// outside file.
TEST_F(HostileFiles, ExternalDataSwappedForASymlinkIsNeverRead) {
  const std::string model = ExternalModel("race.bin");
  const std::vector<float> own = {1, 2, 3, 4}, secret = {-7, -7, -7, -7};
  testing::WriteFile(dir_ + "/secret.bin", Bytes(secret));
  testing::WriteFile(dir_ + "/model/real.bin", Bytes(own));
  std::atomic<bool> stop{false};
  std::thread racer([&] {
    const std::string race = dir_ + "/model/race.bin", real = dir_ + "/model/real.bin",
                      spare = dir_ + "/model/spare.bin";
    // A hard link of the folder's own file, then a symlink to the outside one, renamed over
    // race.bin in turn (each rename atomic, as an attacker's would be).
    while (!stop) {
      if (link(real.c_str(), spare.c_str()) == 0) rename(spare.c_str(), race.c_str());
      if (symlink((dir_ + "/secret.bin").c_str(), spare.c_str()) == 0) rename(spare.c_str(), race.c_str());
    }
  });
  int compiled = 0, refused = 0, leaked = 0;
  compiler::CompileOptions options;
  options.warn = [](const std::string&) {};
  for (int i = 0; i < 150; ++i) {
    auto artifact = compiler::CompileModel(model, compiler::HostTarget(), options);
    if (!artifact.ok()) {
      ++refused;
      continue;
    }
    ++compiled;
    std::string out;
    ASSERT_TRUE(RunRaw(*artifact, {Bytes(std::vector<float>(4, 0.0f))}, &out).ok());
    if (Values<float>(out) != own) ++leaked;
  }
  stop = true;
  racer.join();
  EXPECT_EQ(leaked, 0) << compiled << " compiled, " << refused << " refused";
  EXPECT_EQ(compiled + refused, 150);
}

// P3 and P5: a tiny model naming a terabyte of weights beside it is refused before anything is
// allocated, with the figures; the daemon's estimate counts those weights.
TEST_F(HostileFiles, WeightsLargerThanTheProcessMayHoldAreRefusedWithTheFigures) {
  const std::string model = ExternalModel("huge.bin", {int64_t(1) << 38});
  // A sparse file of the size the tensor declares: no disk used.
  const std::string data = dir_ + "/model/huge.bin";
  testing::WriteFile(data, "");
  ASSERT_EQ(truncate(data.c_str(), off_t(1) << 40), 0);
  auto tasks = compiler::ExtractTasks(model, compiler::HostTarget());
  ASSERT_FALSE(tasks.ok());
  EXPECT_NE(tasks.status().message().find(": its weights need 1048576 MiB in memory (1048576 MiB of them external "
                                          "data); this process may use at most"),
            std::string::npos)
      << tasks.status().message();
  auto bytes = compiler::ModelExternalDataBytes(model);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, uint64_t(1) << 40);
  EXPECT_EQ(*compiler::ModelExternalDataBytes("resnet-18"), 0u);
}

// P4: 16 Ifs nested in each other's then-branch, each with a 100 KB output name, around a chain
// of 200 Relu nodes: the inlined values' names stay near the model's own size.
TEST_F(HostileFiles, NestedIfNamesGrowWithTheModelNotItsDepth) {
  const std::string long_name(100000, 'n');
  // The innermost graph: a Relu chain over the outer x (ONNX scoping), output "<long>15".
  std::function<onnx::GraphProto(int)> branch = [&](int depth) {
    onnx::GraphProto g;
    const std::string out = long_name + std::to_string(depth);
    if (depth == 15) {
      std::string prev = "x";
      for (int i = 0; i < 200; ++i) {
        auto* n = g.add_node();
        n->set_op_type("Relu");
        n->add_input(prev);
        prev = i + 1 == 200 ? out : "r" + std::to_string(i);
        n->add_output(prev);
      }
    } else {
      auto* n = g.add_node();
      n->set_op_type("If");
      n->add_input("c");
      n->add_output(out);
      auto* then_branch = n->add_attribute();
      then_branch->set_name("then_branch");
      then_branch->set_type(onnx::AttributeProto::GRAPH);
      *then_branch->mutable_g() = branch(depth + 1);
      auto* else_branch = n->add_attribute();
      else_branch->set_name("else_branch");
      else_branch->set_type(onnx::AttributeProto::GRAPH);
      onnx::GraphProto identity;
      auto* id = identity.add_node();
      id->set_op_type("Identity");
      id->add_input("x");
      id->add_output("e" + std::to_string(depth));
      identity.add_output()->set_name("e" + std::to_string(depth));
      *else_branch->mutable_g() = identity;
    }
    g.add_output()->set_name(out);
    return g;
  };
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  for (const char* name : {"x", "c"}) {
    auto* in = g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(std::string(name) == "x" ? onnx::TensorProto::FLOAT : onnx::TensorProto::BOOL);
    tt->mutable_shape()->add_dim()->set_dim_value(std::string(name) == "x" ? 4 : 1);
  }
  *g = [&] {
    onnx::GraphProto outer = *g;
    onnx::GraphProto inner = branch(0);
    for (const auto& n : inner.node()) *outer.add_node() = n;
    outer.add_output()->set_name(long_name + "0");
    return outer;
  }();
  const std::string path = dir_ + "/model/ifs.onnx";
  testing::WriteFile(path, m.SerializeAsString());
  auto graph = frontend::ImportOnnxFile(path);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  size_t name_bytes = 0;
  for (const auto& v : graph->values) name_bytes += v.name.size();
  for (const auto& n : graph->nodes) name_bytes += n.name.size();
  // 16 long names of 100 KB each, once (the If outputs), and short generated ones for the rest.
  // Each inlined value used to carry all its enclosing Ifs' names: 200 x 1.6 MB here.
  EXPECT_LT(name_bytes, size_t(4) << 20);
  EXPECT_TRUE(compiler::ExtractTasks(path, compiler::HostTarget()).ok());
}

}  // namespace
}  // namespace tunefarm
