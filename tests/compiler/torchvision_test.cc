// Every torchvision classification model as exported by torch.onnx.export compiles and matches
// PyTorch: max|y - y_ref| / max|y_ref| <= 1e-4 at opt levels 0 and 3; and the same for the model
// families of tools/model_families/export_families.py (TUNEFARM_FAMILIES_DIR).
//
// The exports come from tools/torchvision/export_torchvision.py (random weights, fixed seed, opsets
// 13 and 17; gigabytes, so not in the repository). The test runs when TUNEFARM_TORCHVISION_DIR
// names that directory, and skips otherwise. TUNEFARM_TORCHVISION_MODELS=a,b limits the models;
// TUNEFARM_TORCHVISION_REPORT=PATH writes the table (model, opset, error, compile time) as markdown.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/test_files.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/compiler/input_shape.h"
#include "tunefarm/runtime/executor.h"
#include "tunefarm/runtime/npy.h"

namespace tunefarm::compiler {
namespace {

using tunefarm::testing::ListDir;

struct Row {
  std::string model, opset;
  double error[3] = {-1, -1, -1};  // opt levels 0 and 3; opt level 3 for sm_90 (emulated), when asked
  double compile_s[3] = {0, 0, 0};
  std::string failure;
};

// The --input-shape values of an export with symbolic axes (input_shapes.txt, one NAME:DIMS a line).
Result<std::vector<InputShape>> ExportInputShapes(const std::string& dir) {
  std::vector<InputShape> shapes;
  std::ifstream in(dir + "/input_shapes.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    TUNEFARM_ASSIGN_OR_RETURN(InputShape shape, ParseInputShape(line));
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

// Compiles and runs one export at one opt level (for the host, or for sm_90 with the kernels
// emulated on the CPU); the relative error, or a failure message.
Result<double> CompileAndCompare(const std::string& dir, int level, double* compile_s, bool gpu = false) {
  CompileOptions options;
  options.opt_level = level;
  options.warn = [](const std::string&) {};
  TUNEFARM_ASSIGN_OR_RETURN(options.input_shapes, ExportInputShapes(dir));
  TUNEFARM_ASSIGN_OR_RETURN(const Target target,
                            gpu ? ParseTarget("cuda -arch=sm_90 -emulate=host") : Result<Target>(HostTarget()));
  const auto t0 = std::chrono::steady_clock::now();
  TUNEFARM_ASSIGN_OR_RETURN(runtime::Artifact artifact, CompileModel(dir + "/model.onnx", target, options));
  *compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  TUNEFARM_ASSIGN_OR_RETURN(auto input, runtime::ReadNpy(dir + "/input.npy"));
  TUNEFARM_ASSIGN_OR_RETURN(auto ref, runtime::ReadNpy(dir + "/output.npy"));
  TUNEFARM_ASSIGN_OR_RETURN(auto ex, runtime::Executor::Load(std::move(artifact)));
  TUNEFARM_RETURN_IF_ERROR(ex->SetInput(0, input.data.data(), input.data.size()));
  TUNEFARM_RETURN_IF_ERROR(ex->Run());
  if (ex->outputs()[0].bytes() != int64_t(ref.data.size()))
    return Status::Internal("output size differs from PyTorch's");
  const float* y = static_cast<const float*>(ex->Output(0));
  const float* r = reinterpret_cast<const float*>(ref.data.data());
  double diff = 0, mag = 0;
  for (size_t i = 0; i < ref.data.size() / 4; ++i) {
    if (std::isnan(y[i])) return Status::Internal("NaN in the output");
    diff = std::max(diff, double(std::fabs(y[i] - r[i])));
    mag = std::max(mag, double(std::fabs(r[i])));
  }
  return diff / std::max(mag, 1e-30);
}

// Every export under $<dir_env> (OUT/<model>/opset<N>/), filtered by $<dir_env minus _DIR>_MODELS:
// compiled at opt levels 0 and 3 (and with $<...>_GPU=1 at opt level 3 for sm_90, emulated) and
// compared with PyTorch's output; a markdown table to $<...>_REPORT. Recurrent models (model names
// containing lstm, gru or rnn) get 1e-3.
void CheckExports(const char* dir_env, const char* how_to_export) {
  const std::string prefix = std::string(dir_env).substr(0, std::string(dir_env).size() - 4);
  const char* root = std::getenv(dir_env);
  if (!root) GTEST_SKIP() << dir_env << " not set (exports: " << how_to_export << ")";
  const char* only = std::getenv((prefix + "_MODELS").c_str());
  const std::string filter = only ? "," + std::string(only) + "," : "";
  const char* gpu_env = std::getenv((prefix + "_GPU").c_str());
  const int runs = gpu_env && std::string(gpu_env) == "1" ? 3 : 2;
  runtime::Executor::SetNumThreads(2);
  std::vector<Row> rows;
  for (const std::string& model : ListDir(root)) {
    if (!filter.empty() && filter.find("," + model + ",") == std::string::npos) continue;
    const bool recurrent = model.find("lstm") != std::string::npos || model.find("gru") != std::string::npos ||
                           model.find("rnn") != std::string::npos;
    for (const std::string& opset : ListDir(std::string(root) + "/" + model)) {
      const std::string dir = std::string(root) + "/" + model + "/" + opset;
      if (!tunefarm::testing::Exists(dir + "/model.onnx") || !tunefarm::testing::Exists(dir + "/output.npy")) continue;
      Row row;
      row.model = model;
      row.opset = opset;
      for (int k = 0; k < runs && row.failure.empty(); ++k) {
        auto err = CompileAndCompare(dir, k == 0 ? 0 : 3, &row.compile_s[k], k == 2);
        if (!err.ok())
          row.failure = (k == 2 ? "sm_90: " : "O" + std::to_string(k == 0 ? 0 : 3) + ": ") + err.status().message();
        else
          row.error[k] = *err;
      }
      char gpu_column[32] = "";
      if (runs == 3) std::snprintf(gpu_column, sizeof(gpu_column), " sm_90 %.2e", row.error[2]);
      std::printf("%-30s %-8s O0 %.2e O3 %.2e%s  compile %.1f s / %.1f s %s\n", model.c_str(), opset.c_str(),
                  row.error[0], row.error[1], gpu_column, row.compile_s[0], row.compile_s[1], row.failure.c_str());
      std::fflush(stdout);
      EXPECT_TRUE(row.failure.empty()) << model << " " << opset << ": " << row.failure;
      for (int k = 0; k < runs; ++k)
        EXPECT_LE(row.error[k], recurrent ? 1e-3 : 1e-4) << model << " " << opset << " run " << k;
      rows.push_back(row);
    }
  }
  ASSERT_FALSE(rows.empty()) << "no exports under " << root;
  if (const char* report = std::getenv((prefix + "_REPORT").c_str())) {
    std::ostringstream md;
    md << "| model | opset | error O0 | error O3 | compile O0 (s) | compile O3 (s) |\n|---|---|---|---|---|---|\n";
    char line[1024];
    for (const Row& r : rows) {
      std::snprintf(line, sizeof(line), "| %s | %s | %.1e | %.1e | %.1f | %.1f |%s\n", r.model.c_str(),
                    r.opset.substr(5).c_str(), r.error[0], r.error[1], r.compile_s[0], r.compile_s[1],
                    r.failure.empty() ? "" : (" " + r.failure + " |").c_str());
      md << line;
    }
    std::ofstream(report) << md.str();
  }
}

TEST(Torchvision, EveryExportedModelMatchesPyTorch) {
  CheckExports("TUNEFARM_TORCHVISION_DIR", "tools/torchvision/export_torchvision.py");
}

// The families users bring beyond classification (issue 31): segmentation, a U-Net, a
// super-resolution net, a PReLU net, recurrent models, a dynamic-axes export, every interpolation.
TEST(ModelFamilies, EveryExportedModelMatchesPyTorch) {
  CheckExports("TUNEFARM_FAMILIES_DIR", "tools/model_families/export_families.py");
}

}  // namespace
}  // namespace tunefarm::compiler
