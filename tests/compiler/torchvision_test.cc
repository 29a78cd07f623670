// Every torchvision classification model as exported by torch.onnx.export compiles and matches
// PyTorch: max|y - y_ref| / max|y_ref| <= 1e-4 at opt levels 0 and 3.
//
// The exports come from tools/torchvision/export_torchvision.py (random weights, fixed seed, opsets
// 13 and 17; gigabytes, so not in the repository). The test runs when TUNEFARM_TORCHVISION_DIR
// names that directory, and skips otherwise. TUNEFARM_TORCHVISION_MODELS=a,b limits the models;
// TUNEFARM_TORCHVISION_REPORT=PATH writes the table (model, opset, error, compile time) as markdown.
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/test_files.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/runtime/executor.h"
#include "tunefarm/runtime/npy.h"

namespace tunefarm::compiler {
namespace {

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

struct Row {
  std::string model, opset;
  double error[2] = {-1, -1};  // opt levels 0 and 3
  double compile_s[2] = {0, 0};
  std::string failure;
};

// Compiles and runs one export at one opt level; the relative error, or a failure message.
Result<double> CompileAndCompare(const std::string& dir, int level, double* compile_s) {
  CompileOptions options;
  options.opt_level = level;
  options.warn = [](const std::string&) {};
  const auto t0 = std::chrono::steady_clock::now();
  TUNEFARM_ASSIGN_OR_RETURN(runtime::Artifact artifact, CompileModel(dir + "/model.onnx", HostTarget(), options));
  *compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  TUNEFARM_ASSIGN_OR_RETURN(auto input, runtime::ReadNpy(dir + "/input.npy"));
  TUNEFARM_ASSIGN_OR_RETURN(auto ref, runtime::ReadNpy(dir + "/output.npy"));
  TUNEFARM_ASSIGN_OR_RETURN(auto ex, runtime::Executor::Load(std::move(artifact)));
  TUNEFARM_RETURN_IF_ERROR(ex->SetInput(0, input.data.data(), input.data.size()));
  TUNEFARM_RETURN_IF_ERROR(ex->Run());
  if (ex->outputs()[0].bytes() != int64_t(ref.data.size())) return Status::Internal("output size differs from PyTorch's");
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

TEST(Torchvision, EveryExportedModelMatchesPyTorch) {
  const char* root = std::getenv("TUNEFARM_TORCHVISION_DIR");
  if (!root) GTEST_SKIP() << "TUNEFARM_TORCHVISION_DIR not set (exports: tools/torchvision/export_torchvision.py)";
  const char* only = std::getenv("TUNEFARM_TORCHVISION_MODELS");
  const std::string filter = only ? "," + std::string(only) + "," : "";
  runtime::Executor::SetNumThreads(2);
  std::vector<Row> rows;
  for (const std::string& model : ListDir(root)) {
    if (!filter.empty() && filter.find("," + model + ",") == std::string::npos) continue;
    for (const std::string& opset : ListDir(std::string(root) + "/" + model)) {
      const std::string dir = std::string(root) + "/" + model + "/" + opset;
      if (!tunefarm::testing::Exists(dir + "/model.onnx") || !tunefarm::testing::Exists(dir + "/output.npy")) continue;
      Row row;
      row.model = model;
      row.opset = opset;
      for (int k = 0; k < 2 && row.failure.empty(); ++k) {
        auto err = CompileAndCompare(dir, k == 0 ? 0 : 3, &row.compile_s[k]);
        if (!err.ok()) row.failure = "O" + std::to_string(k == 0 ? 0 : 3) + ": " + err.status().message();
        else row.error[k] = *err;
      }
      std::printf("%-22s %-8s O0 %.2e O3 %.2e  compile %.1f s / %.1f s %s\n", model.c_str(), opset.c_str(), row.error[0], row.error[1],
                  row.compile_s[0], row.compile_s[1], row.failure.c_str());
      std::fflush(stdout);
      EXPECT_TRUE(row.failure.empty()) << model << " " << opset << ": " << row.failure;
      for (double e : row.error) EXPECT_LE(e, 1e-4) << model << " " << opset;
      rows.push_back(row);
    }
  }
  ASSERT_FALSE(rows.empty()) << "no exports under " << root;
  if (const char* report = std::getenv("TUNEFARM_TORCHVISION_REPORT")) {
    std::ostringstream md;
    md << "| model | opset | error O0 | error O3 | compile O0 (s) | compile O3 (s) |\n|---|---|---|---|---|---|\n";
    char line[512];
    for (const Row& r : rows) {
      std::snprintf(line, sizeof(line), "| %s | %s | %.1e | %.1e | %.1f | %.1f |%s\n", r.model.c_str(), r.opset.substr(5).c_str(),
                    r.error[0], r.error[1], r.compile_s[0], r.compile_s[1], r.failure.empty() ? "" : (" " + r.failure + " |").c_str());
      md << line;
    }
    std::ofstream(report) << md.str();
  }
}

}  // namespace
}  // namespace tunefarm::compiler
