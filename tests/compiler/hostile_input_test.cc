// Hostile inputs to the compiler (issue 15), each built here: an ONNX Conv with absurd pads (it used
// to spin for hours enumerating divisors), names that are not UTF-8 (they used to abort the
// process from inside nlohmann when the artifact's metadata was written), empty files and
// directories as models, kernel metadata with mistyped fields, and output paths that are not
// regular files. Every one ends in an error that names the problem.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/onnx_builder.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/compiler/config_space.h"
#include "tunefarm/compiler/input_shape.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/model.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/atomic_file.h"
#include "tunefarm/runtime/utf8.h"

namespace tunefarm::compiler {
namespace {

using tunefarm::testing::AttrInts;
using tunefarm::testing::OnnxBuilder;

class HostileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "tunefarm_hostile_" + std::to_string(getpid());
    ASSERT_EQ(system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str()), 0);
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0); }

  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  // x [1, 1, 4, 4] -> Conv (1x1 weights) -> y, with the given pads.
  std::string ConvModel(const std::string& name, const std::vector<int64_t>& pads, const std::string& tensor = "x") {
    OnnxBuilder b(13);
    b.Input(tensor, {1, 1, 4, 4});
    b.Floats("w", {1, 1, 1, 1}, {1.0f});
    b.Node("Conv", {tensor, "w"}, {"y"}, {AttrInts("pads", pads)});
    b.Output("y");
    return Write(name, b.Bytes());
  }

  Target Host() {
    auto t = ParseTarget("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=x86-64-v3");
    EXPECT_TRUE(t.ok());
    return *t;
  }

  std::string dir_;
};

TEST_F(HostileInput, AbsurdPadsAreRefusedAtImportNamingTheNode) {
  for (int64_t pad : {int64_t(1) << 40, int64_t(1000000000), int64_t(65537)}) {
    const std::string model = ConvModel("pads.onnx", {0, 0, pad, 0});
    for (int opt : {0, 3}) {
      auto tasks = ExtractTasks(model, Host(), opt);
      ASSERT_FALSE(tasks.ok()) << "pads " << pad;
      EXPECT_NE(tasks.status().message().find("node 'n0' (Conv, opset 13): pads "), std::string::npos)
          << tasks.status().message();
      EXPECT_NE(tasks.status().message().find("must be at most 65536"), std::string::npos) << tasks.status().message();
    }
    auto compiled = CompileModel(model, Host(), CompileOptions());
    ASSERT_FALSE(compiled.ok());
    EXPECT_NE(compiled.status().message().find("must be at most 65536"), std::string::npos)
        << compiled.status().message();
  }
  // The largest allowed pad still imports.
  EXPECT_TRUE(ExtractTasks(ConvModel("pads_ok.onnx", {0, 0, 2, 0}), Host(), 3).ok());
}

// `tunefarm tasks` and `tunefarm compile` read a model through the same import, so they refuse
// the same models with the same message (they used to disagree on negative pads and zero dims).
TEST_F(HostileInput, TasksAndCompileRefuseNegativePadsAndZeroDimsAlike) {
  auto conv_of = [](const std::vector<int64_t>& input_shape) {
    OnnxBuilder b(13);
    b.Input("x", input_shape);
    b.Floats("w", {1, 1, 1, 1}, {1.0f});
    b.Node("Conv", {"x", "w"}, {"y"}, {AttrInts("pads", {0, 0, 0, 0})});
    b.Output("y");
    return b.Bytes();
  };
  struct Case {
    std::string path, message;
  } cases[] = {{ConvModel("negative.onnx", {0, -1, 0, 0}), "negative pads"},
               {Write("zero.onnx", conv_of({1, 0, 4, 4})),
                "node 'n0' (Conv, opset 13): input channels 0 do not match weight [1,1,1,1]"},
               {Write("minus.onnx", conv_of({1, 1, -2, 4})),
                "graph input 'x' has dimension 2 of size -2: a dimension is a size, never negative"}};
  for (const Case& c : cases) {
    for (int opt : {0, 3}) {
      auto tasks = ExtractTasks(c.path, Host(), opt);
      ASSERT_FALSE(tasks.ok()) << c.path;
      EXPECT_NE(tasks.status().message().find(c.message), std::string::npos) << tasks.status().message();
      CompileOptions options;
      options.opt_level = opt;
      auto compiled = CompileModel(c.path, Host(), options);
      ASSERT_FALSE(compiled.ok()) << c.path;
      EXPECT_EQ(compiled.status().message(), tasks.status().message());
    }
  }
}

TEST_F(HostileInput, SplitsOfHugeExtentsEnumerateDivisorsInSquareRootTime) {
  // 2^40 and a prime near 10^12: a linear divisor scan takes hours; the square-root one, milliseconds.
  ConfigSpace space("huge extents");
  space.DefineSplit("big", int64_t(1) << 40, 2, SplitPolicy::kFactors);
  space.DefineSplit("prime", 1000000000039, 2, SplitPolicy::kFactors);
  space.DefineSplit("twelve", 12, 2, SplitPolicy::kFactors);
  EXPECT_EQ(space.knobs()[0].candidates.size(), 41u);  // every power of two up to 2^40
  EXPECT_EQ(space.knobs()[1].candidates.size(), 2u);
  ASSERT_EQ(space.knobs()[2].candidates.size(), 6u);
  std::vector<int64_t> inner;
  for (const auto& c : space.knobs()[2].candidates) inner.push_back(c[1]);
  EXPECT_EQ(inner, (std::vector<int64_t>{1, 2, 3, 4, 6, 12}));
}

TEST_F(HostileInput, NamesThatAreNotUtf8AreRefusedAtImport) {
  const std::string latin1 = "caf\xe9";  // Latin-1 e-acute: not UTF-8
  const std::string model = ConvModel("latin1.onnx", {0, 0, 0, 0}, latin1);
  auto compiled = CompileModel(model, Host(), CompileOptions());
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.status().message().find("graph input name \"caf?\" is not valid UTF-8"), std::string::npos)
      << compiled.status().message();
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // truncated
}

// A model whose graph lists no output: a Relu computed for nobody.
std::string NoOutputs() {
  OnnxBuilder b(13);
  b.Input("x", {1, 4});
  b.Node("Relu", {"x"}, {"y"});
  return b.Bytes();
}

// Not models, each refused before anything is read whole (issue 30: a 3 GB file of something else
// cost 6.4 GB of memory before its error).
TEST_F(HostileInput, EmptyFilesDirectoriesAndFifosAreNotModels) {
  struct Case {
    std::string path, message;
  };
  const std::string fifo = dir_ + "/fifo.onnx";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<Case> cases = {
      {Write("empty.onnx", ""), "is empty"},
      {dir_, "is a directory"},
      {fifo, "is a FIFO, not a regular file"},
      {Write("zeros.onnx", std::string(64, '\0')),
       "not a serialized ModelProto (it starts with bytes 00 00 00 00 00 00 00 00, which begin no ModelProto field)"},
      {Write("elf.onnx", std::string("\x7f"
                                     "ELF\x02\x01\x01\x00",
                                     8) +
                             std::string(4096, 'x')),
       "not a serialized ModelProto (it starts with bytes 7f 45 4c 46 02 01 01 00, which begin no ModelProto field)"},
      {Write("nograph.onnx", OnnxBuilder(13).Bytes()), "has no nodes"},
      {Write("nooutputs.onnx", NoOutputs()), "declares no graph outputs: it would compute nothing"},
  };
  for (const auto& c : cases) {
    auto tasks = ExtractTasks(c.path, Host());
    ASSERT_FALSE(tasks.ok()) << c.path;
    EXPECT_NE(tasks.status().message().find(c.message), std::string::npos)
        << c.path << ": " << tasks.status().message();
    auto compiled = CompileModel(c.path, Host(), CompileOptions());
    ASSERT_FALSE(compiled.ok()) << c.path;
  }
}

// Symbolic input shapes (issue 31): the error names each symbolic dimension and the flag; the flag
// fixes them for compile and tasks alike, and every wrong use of it is an error naming the problem.
TEST_F(HostileInput, SymbolicInputsAreFixedWithInputShape) {
  OnnxBuilder b(13);
  b.SymbolicInput("images", {"batch", "4", "", "width"});
  b.Node("Relu", {"images"}, {"y"});
  b.Output("y");
  const std::string model = Write("dynamic.onnx", b.Bytes());
  CompileOptions options;
  options.warn = [](const std::string&) {};
  auto unfixed = CompileModel(model, Host(), options);
  ASSERT_FALSE(unfixed.ok());
  EXPECT_EQ(unfixed.status().message(),
            "model " + model +
                ": graph input 'images' has symbolic dimensions 0 (batch), 2, 3 (width) in "
                "[batch, 4, ?, width]; fix them with --input-shape images:?x4x?x? (each ? a size)");
  auto tasks = ExtractTasks(model, Host());
  ASSERT_FALSE(tasks.ok());
  EXPECT_EQ(tasks.status().message(), unfixed.status().message());

  options.input_shapes = {*ParseInputShape("images:2x4x3x5")};
  auto fixed = CompileModel(model, Host(), options);
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_TRUE(ExtractTasks(model, Host(), 3, options.input_shapes).ok());

  struct Case {
    std::vector<std::string> shapes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"images:2x5x3x5"},
       "model " + model +
           ": --input-shape images:2x5x3x5: dimension 1 of input 'images' is fixed by the "
           "model at 4 [batch, 4, ?, width], not 5"},
      {{"images:2x4x3"},
       "model " + model + ": --input-shape images:2x4x3: input 'images' has rank 4 [batch, 4, ?, width], not 3"},
      {{"image:2x4x3x5"},
       "model " + model + ": --input-shape image:2x4x3x5: the model has no graph input 'image' (its inputs: images)"},
      {{"images:2x4x3x5", "images:1x4x3x5"}, "model " + model + ": --input-shape gives input 'images' twice"},
  };
  for (const Case& c : cases) {
    options.input_shapes.clear();
    for (const auto& text : c.shapes) options.input_shapes.push_back(*ParseInputShape(text));
    auto r = CompileModel(model, Host(), options);
    ASSERT_FALSE(r.ok()) << c.message;
    EXPECT_EQ(r.status().message(), c.message);
  }
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"images", "--input-shape 'images': expected NAME:DIMS, such as data:1x3x224x224"},
           {":1x3", "--input-shape ':1x3': expected NAME:DIMS, such as data:1x3x224x224"},
           {"images:1x0x3",
            "--input-shape 'images:1x0x3': dimension '0' is not a positive integer below 2^31 nor "
            "a range LO..HI of them (dimensions are separated by 'x')"},
           {"images:1x-3",
            "--input-shape 'images:1x-3': dimension '-3' is not a positive integer below 2^31 nor "
            "a range LO..HI of them (dimensions are separated by 'x')"},
           {"images:1x3x",
            "--input-shape 'images:1x3x': dimension '' is not a positive integer below 2^31 nor "
            "a range LO..HI of them (dimensions are separated by 'x')"},
           {"images:1x99999999999",
            "--input-shape 'images:1x99999999999': dimension '99999999999' is not a positive "
            "integer below 2^31 nor a range LO..HI of them (dimensions are separated by 'x')"}}) {
    auto parsed = ParseInputShape(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().message(), message);
  }
  auto colons = ParseInputShape("encoder:input:1x8");
  ASSERT_TRUE(colons.ok());
  EXPECT_EQ(colons->name, "encoder:input");
  EXPECT_EQ(colons->ToString(), "encoder:input:1x8");
}

TEST_F(HostileInput, KernelMetadataWithMistypedFieldsIsAnErrorNotAnAbort) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"symbol":"k","buffers":[],"flops":"2"})", "malformed kernel metadata: [json.exception.type_error.302]"},
      {R"({"symbol":"k","buffers":[],"config_index":"x"})", "malformed kernel metadata"},
      {R"({"symbol":"k","buffers":[],"workload":7})", "malformed kernel metadata"},
      {"{\"symbol\":\"k\",\"buffers\":[],\"config\":\"\xff\"}", "malformed kernel metadata"},
      {R"({"symbol":"k","buffers":[{"shape":[1],"name":5}]})", "malformed kernel metadata"},
  };
  for (const auto& [json, message] : cases) {
    auto info = KernelInfo::FromJson(json);
    ASSERT_FALSE(info.ok()) << json;
    EXPECT_NE(info.status().message().find(message), std::string::npos) << info.status().message();
  }
}

TEST_F(HostileInput, OutputsThatAreNotRegularFilesAreRefusedAndWritesAreAtomic) {
  const std::string fifo = dir_ + "/out.fifo", link = dir_ + "/link.bin", target = dir_ + "/target.bin";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::ofstream(target) << "old";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"/dev/null", "/dev/null is a character device: tunefarm writes only regular files"},
      {fifo, fifo + " is a FIFO: tunefarm writes only regular files"},
      {dir_, dir_ + " is a directory: tunefarm writes only regular files"},
      {link, link + " is a symbolic link: tunefarm writes only regular files"},
  };
  for (const auto& [path, message] : refused) {
    Status s = WriteFileAtomically(path, "new");
    ASSERT_FALSE(s.ok()) << path;
    EXPECT_EQ(s.message(), message);
  }
  struct stat st;
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  std::ifstream kept(target);
  std::string text((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "old") << "the symlink's target is untouched";

  // A regular file is replaced whole and keeps its mode; a directory that cannot be written says why.
  const std::string out = dir_ + "/out.bin";
  std::ofstream(out) << "previous contents";
  ASSERT_EQ(chmod(out.c_str(), 0640), 0);
  ASSERT_TRUE(WriteFileAtomically(out, "fresh").ok());
  std::ifstream in(out);
  std::string now((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(now, "fresh");
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  Status missing_dir = WriteFileAtomically(dir_ + "/no/such/dir/out.bin", "x");
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_NE(missing_dir.message().find("cannot create a temporary file in " + dir_ +
                                       "/no/such/dir: No such file or directory"),
            std::string::npos)
      << missing_dir.message();
  // No temporary file is left behind.
  EXPECT_EQ(system(("ls " + dir_ + " | grep -q tmp").c_str()) == 0, false);
}

// Einsum equations numpy refuses are refused naming the problem (issue 46, P14 and P15).
TEST_F(HostileInput, EinsumEquationsNumpyRefusesAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ab->aa", "output label 'a' is repeated in 'ab->aa'"},
      {"ab->b->a", "equation 'ab->b->a' has more than one '->'"},
  };
  for (const auto& [equation, message] : cases) {
    OnnxBuilder b(13);
    b.Input("x", {2, 3});
    onnx::AttributeProto eq;
    eq.set_name("equation");
    eq.set_type(onnx::AttributeProto::STRING);
    eq.set_s(equation);
    b.Node("Einsum", {"x"}, {"y"}, {eq});
    b.Output("y");
    auto tasks = ExtractTasks(Write("einsum.onnx", b.Bytes()), Host(), 3);
    ASSERT_FALSE(tasks.ok()) << equation;
    EXPECT_NE(tasks.status().message().find("node 'n0' (Einsum, opset 13): " + message), std::string::npos)
        << tasks.status().message();
  }
}

}  // namespace
}  // namespace tunefarm::compiler
