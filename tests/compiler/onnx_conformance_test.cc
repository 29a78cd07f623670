// ONNX conformance on values: every test of Debian's libonnx-testdata (node and pytorch-converted
// suites) whose operators the importer claims is compiled (opt level 3, host), run by the runtime
// executor on the test's inputs, and compared with its expected outputs (|y - ref| <= 1e-5 +
// 1e-3 |ref| for floats, as ONNX's backend runner; exact for integers). Prints pass/total per op
// (the test's last node) and every failure with its reason; skips when the data is absent.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <onnx/onnx_pb.h>
#pragma GCC diagnostic pop

#include "compiler/config_sources.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/model/compile_graph.h"
#include "compiler/model/extract_tasks.h"
#include "compiler/onnx_expected_failures.h"
#include "compiler/onnx_test_inputs.h"
#include "tunefarm/runtime/element_convert.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm::compiler {
namespace {

const char* kRoot = "/usr/share/libonnx-testdata/data/";

std::vector<std::string> ListTests(const std::string& dir) {
  std::vector<std::string> tests;
  DIR* d = opendir(dir.c_str());
  if (!d) return tests;
  while (dirent* e = readdir(d)) {
    if (std::string(e->d_name).rfind("test_", 0) == 0) tests.push_back(e->d_name);
  }
  closedir(d);
  std::sort(tests.begin(), tests.end());
  return tests;
}

// What a backend test is about. `aside`: why it is not an inference test of tensors (a training
// loss or optimizer, a sequence, optional or string value, a random generator), else "". `op`: its
// last node's operator; `claimed`: whether the importer claims every operator of its graph.
struct TestKind {
  std::string aside, op;
  bool claimed = false;
};

void CollectOps(const onnx::GraphProto& g, std::set<std::string>* ops) {
  for (const auto& n : g.node()) {
    ops->insert(n.op_type());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectOps(a.g(), ops);
      for (const auto& sub : a.graphs()) CollectOps(sub, ops);
    }
  }
}

TestKind Classify(const std::string& model_path) {
  TestKind kind;
  FILE* f = std::fopen(model_path.c_str(), "rb");
  if (!f) return kind;
  std::string bytes;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) bytes.append(buf, n);
  std::fclose(f);
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes) || m.graph().node_size() == 0) return kind;
  static const std::set<std::string> kAside = {"Adagrad",
                                               "Adam",
                                               "Momentum",
                                               "Gradient",
                                               "SoftmaxCrossEntropyLoss",
                                               "NegativeLogLikelihoodLoss",  // training
                                               "SequenceAt",
                                               "SequenceConstruct",
                                               "SequenceEmpty",
                                               "SequenceErase",
                                               "SequenceInsert",
                                               "SequenceLength",
                                               "SequenceMap",
                                               "SplitToSequence",
                                               "ConcatFromSequence",
                                               "Optional",
                                               "OptionalHasElement",
                                               "OptionalGetElement",
                                               "StringNormalizer",
                                               "RegexFullMatch",
                                               "StringConcat",
                                               "StringSplit",
                                               "RandomNormal",
                                               "RandomNormalLike",
                                               "RandomUniform",
                                               "RandomUniformLike",
                                               "Bernoulli",
                                               "Multinomial"};
  std::set<std::string> ops;
  CollectOps(m.graph(), &ops);
  for (const auto& op : ops) {
    if (kAside.count(op)) kind.aside = op;
  }
  for (const auto* values : {&m.graph().input(), &m.graph().output()}) {
    for (const auto& v : *values) {
      if (!v.type().has_tensor_type())
        kind.aside = "a non-tensor graph input or output";
      else if (v.type().tensor_type().elem_type() == onnx::TensorProto::STRING)
        kind.aside = "a string graph input or output";
    }
  }
  kind.op = m.graph().node(m.graph().node_size() - 1).op_type();
  const auto& claimed = frontend::SupportedOnnxOps();
  kind.claimed = std::all_of(m.graph().node().begin(), m.graph().node().end(), [&](const onnx::NodeProto& n) {
    return std::find(claimed.begin(), claimed.end(), n.op_type()) != claimed.end();
  });
  return kind;
}

// A failure's reason with the test's own names and numbers taken out, so that alike ones group:
// "unsupported ONNX operator 'If' ..." stays whole up to its first quote-closing detail.
std::string ReasonGroup(const std::string& why) {
  std::string out;
  for (char c : why.substr(0, 90)) out += std::isdigit(static_cast<unsigned char>(c)) ? '#' : c;
  return out;
}

// The constant's values as `dt` bytes: in dt's storage type, then converted as the executor
// converts outputs (float32 -> float16, int64 -> uint32, ...).
std::string Bytes(const graph::ConstantData& c, runtime::ElementType dt) {
  const runtime::ElementType storage = runtime::StorageTypeOf(dt);
  std::string out;
  if (c.dtype == graph::DataType::kFloat32) {
    out.assign(reinterpret_cast<const char*>(c.f32.data()), c.f32.size() * 4);
  } else {
    for (int64_t v : c.i64) {
      if (runtime::ElementSize(storage) == 8)
        out.append(reinterpret_cast<const char*>(&v), 8);
      else if (runtime::ElementSize(storage) == 4) {
        int32_t x = int32_t(v);
        out.append(reinterpret_cast<const char*>(&x), 4);
      } else {
        out.push_back(char(v));
      }
    }
  }
  if (storage == dt) return out;
  const int64_t n = c.num_elements();
  std::string converted(size_t(n) * size_t(runtime::ElementSize(dt)), '\0');
  runtime::ConvertFromStorage(dt, out.data(), converted.data(), n);
  return converted;
}

// "" when the output matches, else why not. Outputs of an edge type compare in its storage type.
std::string Compare(const void* data, const runtime::TensorInfo& info, const graph::ConstantData& ref) {
  if (info.shape != ref.shape) return "output shape differs";
  const runtime::ElementType storage = runtime::StorageTypeOf(info.dtype);
  std::string stored(size_t(ref.num_elements()) * size_t(runtime::ElementSize(storage)), '\0');
  Status converted = runtime::ConvertToStorage(info.dtype, data, stored.data(), ref.num_elements(), "output");
  if (!converted.ok()) return converted.message();
  if (ref.dtype == graph::DataType::kFloat32) {
    if (storage != runtime::ElementType::kFloat32) return "output dtype differs";
    const float* y = reinterpret_cast<const float*>(stored.data());
    for (size_t i = 0; i < ref.f32.size(); ++i) {
      const float r = ref.f32[i];
      if (std::isnan(r) != std::isnan(y[i]) || std::fabs(y[i] - r) > 1e-5f + 1e-3f * std::fabs(r)) {
        return "value " + std::to_string(i) + " is " + std::to_string(y[i]) + ", expected " + std::to_string(r);
      }
    }
    return "";
  }
  if (Bytes(ref, storage) != stored) return "integer values differ";
  return "";
}

// A test tensor. ONNX's generator stores bfloat16 data as its uint16 bit patterns (NumPy has no
// bfloat16): where the model declares bfloat16, such a tensor is read as the values it encodes.
Result<graph::ConstantData> ReadTestTensor(const std::string& path, std::optional<runtime::ElementType> declared) {
  auto data = frontend::ReadOnnxTensorFile(path);
  if (!data.ok() || declared != runtime::ElementType::kBFloat16 || data->dtype != graph::DataType::kInt64) return data;
  graph::ConstantData values;
  values.shape = data->shape;
  for (int64_t bits : data->i64) values.f32.push_back(runtime::BFloat16ToFloat(uint16_t(bits)));
  return values;
}

// Compiles (for `target`; CUDA targets emulated on the CPU) and runs one test directory; "" on success.
std::string RunOne(const std::string& dir, const Target& target) {
  auto g = frontend::ImportOnnxFile(dir + "model.onnx");
  if (!g.ok()) return g.status().message();
  std::vector<graph::ConstantData> feeds;
  std::vector<int> runtime_inputs;
  for (size_t i = 0; i < g->inputs.size(); ++i) {
    auto& v = g->values[size_t(g->inputs[i])];
    auto data = ReadTestTensor(dir + "test_data_set_0/input_" + std::to_string(i) + ".pb", v.edge_dtype);
    if (!data.ok()) return "input " + std::to_string(i) + ": " + data.status().message();
    v.shape = data->shape;
    v.shape_known = true;
    // Shape operands and interpolation parameters: the constants a deployed model has.
    if (tunefarm::testing::FedAsConstant(*g, g->inputs[i], *data)) {
      v.constant = std::make_shared<const graph::ConstantData>(*data);
    } else {
      feeds.push_back(*data);
      runtime_inputs.push_back(g->inputs[i]);
    }
  }
  g->inputs = runtime_inputs;
  CompileOptions options;
  options.warn = [](const std::string&) {};
  const graph::Graph imported = *g;
  tunefarm::testing::LookupRecorder recorder;
  options.configs = &recorder;
  auto artifact = CompileGraph(std::move(*g), dir, target, options);
  if (!artifact.ok()) return artifact.status().message();
  // `tunefarm tasks` must list exactly the workloads this compile looks up (one graph pipeline).
  auto tasks = ExtractTasks(imported, dir, target, options.opt_level);
  if (!tasks.ok()) return "tasks: " + tasks.status().message();
  if (tunefarm::testing::TaskCounts(*tasks) != recorder.lookups())
    return "the tasks differ from the workloads compile looked up";
  auto ex = runtime::Executor::Load(std::move(*artifact));
  if (!ex.ok()) return ex.status().message();
  for (size_t i = 0; i < feeds.size(); ++i) {
    std::string bytes = Bytes(feeds[i], (*ex)->inputs()[i].dtype);
    Status s = (*ex)->SetInput(i, bytes.data(), bytes.size());
    if (!s.ok()) return s.message();
  }
  Status s = (*ex)->Run();
  if (!s.ok()) return s.message();
  for (size_t o = 0; o < (*ex)->outputs().size(); ++o) {
    auto ref = ReadTestTensor(dir + "test_data_set_0/output_" + std::to_string(o) + ".pb", (*ex)->outputs()[o].dtype);
    if (!ref.ok()) return "expected output " + std::to_string(o) + ": " + ref.status().message();
    std::string why = Compare((*ex)->Output(o), (*ex)->outputs()[o], *ref);
    if (!why.empty()) return "output " + std::to_string(o) + ": " + why;
  }
  return "";
}

// Runs every backend test of a claimed operator for `target`; the failures not on `expected` (and
// the expected ones that pass) fail the test. Returns the number passed (-1: no test data).
// With `every`, the tests of unclaimed operators run too (they fail at import, naming the
// operator) and the count over every inference test is printed with its failures by reason;
// *every_passed gets that count.
int RunConformance(const Target& target, const std::map<std::string, std::string>& expected, bool every = false,
                   int* every_passed = nullptr) {
  int passed = 0, total = 0, every_total = 0, every_ok = 0;
  std::map<std::string, std::pair<int, int>> per_op;
  std::vector<std::string> failures;
  std::map<std::string, std::string> failed;                  // "suite/test" -> why
  std::map<std::string, std::vector<std::string>> by_reason;  // every: reason group -> tests
  std::set<std::string> passing;
  for (const char* suite : {"node", "pytorch-converted"}) {
    const std::string root = std::string(kRoot) + suite + "/";
    for (const auto& t : ListTests(root)) {
      const std::string dir = root + t + "/";
      const char* only = std::getenv("TUNEFARM_CONFORMANCE_ONLY");
      if (only && t.find(only) == std::string::npos) continue;
      const TestKind kind = Classify(dir + "model.onnx");
      if (kind.op.empty() || !kind.aside.empty()) continue;
      if (!kind.claimed) {
        if (!every) continue;
        ++every_total;
        std::string why = RunOne(dir, target);
        if (why.empty())
          ++every_ok;
        else
          by_reason[ReasonGroup(why)].push_back(t);
        continue;
      }
      const std::string op = kind.op;
      ++total;
      ++every_total;
      ++per_op[op].second;
      if (std::getenv("TUNEFARM_CONFORMANCE_VERBOSE")) std::fprintf(stderr, "%s\n", dir.c_str());
      std::string why = RunOne(dir, target);
      const std::string name = std::string(suite) + "/" + t;
      if (why.empty()) {
        ++passed;
        ++every_ok;
        ++per_op[op].first;
        passing.insert(name);
      } else {
        failures.push_back(name + ": " + why);
        failed[name] = why;
        by_reason[ReasonGroup(why)].push_back(t);
      }
    }
  }
  if (total == 0) return -1;
  if (every) {
    std::printf(
        "ONNX backend tests, every inference test (training losses and optimizers, sequence, optional and "
        "string values, random generators aside) on %s: %d/%d passed (%.1f%%)\n",
        target.ToString().c_str(), every_ok, every_total, 100.0 * every_ok / every_total);
    std::vector<std::pair<size_t, std::string>> groups;
    for (const auto& [reason, tests] : by_reason) groups.push_back({tests.size(), reason});
    std::sort(groups.rbegin(), groups.rend());
    for (const auto& [n, reason] : groups) {
      std::printf("  %4zu  %s  (e.g. %s)\n", n, reason.c_str(), by_reason[reason].front().c_str());
    }
    if (every_passed) *every_passed = every_ok;
  }
  std::printf("ONNX conformance (values) on %s: %d/%d passed (%.1f%%)\n", target.ToString().c_str(), passed, total,
              100.0 * passed / total);
  for (const auto& [op, pt] : per_op) std::printf("  %-20s %d/%d\n", op.c_str(), pt.first, pt.second);
  for (const auto& f : failures) std::printf("  FAIL %s\n", f.c_str());
  for (const auto& [name, why] : failed) {
    auto it = expected.find(name);
    if (it == expected.end())
      ADD_FAILURE() << "unexpected failure " << name << ": " << why;
    else if (why.find(it->second) == std::string::npos)
      ADD_FAILURE() << name << " fails for another reason: " << why;
  }
  for (const auto& [name, why] : expected) {
    if (passing.count(name)) ADD_FAILURE() << name << " is on the expected-failure list but passes: take it off";
  }
  return passed;
}

TEST(OnnxConformance, ClaimedOperatorsMatchTheBackendTestData) {
  int every_passed = 0;
  const int passed = RunConformance(HostTarget(), tunefarm::testing::ExpectedValueFailures(), true, &every_passed);
  ASSERT_GE(passed, 0) << kRoot << " is missing (apt install libonnx-testdata)";
  if (!std::getenv("TUNEFARM_CONFORMANCE_ONLY")) {
    EXPECT_GE(passed, 778) << "fewer cases pass than when the list was written";
    EXPECT_GE(every_passed, 778) << "fewer of every inference test pass than when this floor was set";
  }
}

// The same cases with every kernel lowered for an sm_90 GPU (the templates and every operator's
// generic GPU schedule: threads bound, launch verified) and run with the GPU's semantics on the CPU.
TEST(OnnxConformance, ClaimedOperatorsLoweredForTheGpuMatchTheBackendTestData) {
  std::map<std::string, std::string> expected = tunefarm::testing::ExpectedValueFailures();
  for (const auto& [name, why] : tunefarm::testing::ExpectedGpuValueFailures()) expected[name] = why;
  const int passed = RunConformance(*ParseTarget("cuda -arch=sm_90 -emulate=host"), expected);
  ASSERT_GE(passed, 0) << kRoot << " is missing (apt install libonnx-testdata)";
}

}  // namespace
}  // namespace tunefarm::compiler
