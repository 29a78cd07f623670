#include "tunefarm/tools/run_tool.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <type_traits>

#include "tunefarm/runtime/atomic_file.h"
#include "tunefarm/runtime/cuda_executor.h"
#include "tunefarm/runtime/device.h"
#include "tunefarm/runtime/element_convert.h"
#include "tunefarm/runtime/executor.h"
#include "tunefarm/runtime/npy.h"

namespace tunefarm::runtime {
namespace {

int Fail(const RunToolOptions& o, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", o.program.c_str(), message.c_str());
  return 1;
}

std::string ShapeStr(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

void AddRunToolFlags(CLI::App& app, RunToolOptions* o) {
  app.add_option("ARTIFACT", o->artifact, "the compiled model (tunefarm compile -o)")->required();
  AddCheckedFlag(
      app, "--input",
      [o](const std::string& v) -> Status {
        const size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0)
          return Status::InvalidArgument("--input takes NAME=FILE.npy, got '" + v + "'");
        o->inputs.emplace_back(v.substr(0, eq), v.substr(eq + 1));
        return Status::OK();
      },
      "an input from a .npy file (repeat for each input; the others get random data)", "NAME=FILE.npy");
  app.add_option("--output", o->output, "write output 0 there (output k > 0 to PATH with _k before .npy)")
      ->type_name("FILE.npy");
  AddIntFlag(app, "--repeat", &o->repeat, 0, 1000000, "timed runs after the first; 0 runs once untimed (default 10)");
  AddIntFlag(app, "--threads", &o->threads, 1, 1024,
             "threads the kernels run on (default: the count the artifact was compiled for, else 1)");
  AddCheckedFlag(
      app, "--device",
      [o](const std::string& v) -> Status {
        auto device = ParseDevice(v);
        if (!device.ok()) return Status::InvalidArgument("--device: " + device.status().message());
        o->device = v;
        return Status::OK();
      },
      "cpu (default), or cuda[:N] for a cuda artifact on GPU N", "cpu|cuda[:N]");
  app.add_flag("--json", o->json, "print the summary as JSON");
  app.add_flag("--profile", o->profile, "print each kernel's time");
}

namespace {

// The shapes an input takes: its own, with dimension 0 as a range where it follows the artifact's
// symbolic dimension ("[1..8, 3, 224, 224]", "[12*(1..8), 64]").
std::string AcceptedShapeStr(const TensorInfo& info, const Artifact& a) {
  if (info.leading_scale == 0 || !a.symbolic_dim) return ShapeStr(info.shape);
  const std::string range = std::to_string(a.symbolic_dim->min) + ".." + std::to_string(a.symbolic_dim->max);
  std::string s = "[" + (info.leading_scale == 1 ? range : std::to_string(info.leading_scale) + "*(" + range + ")");
  for (size_t d = 1; d < info.shape.size(); ++d) s += ", " + std::to_string(info.shape[d]);
  return s + "]";
}

bool AcceptsShape(const TensorInfo& info, const Artifact& a, const std::vector<int64_t>& shape) {
  if (info.leading_scale == 0 || !a.symbolic_dim) return shape == info.shape;
  if (shape.size() != info.shape.size() || shape.empty() || shape[0] % info.leading_scale != 0) return false;
  const int64_t size = shape[0] / info.leading_scale;
  if (size < a.symbolic_dim->min || size > a.symbolic_dim->max) return false;
  return std::equal(shape.begin() + 1, shape.end(), info.shape.begin() + 1);
}

// The run itself, on whatever executor the device got.
int RunLoaded(GraphExecutor& ex, const RunToolOptions& o) {
  const std::string where = ex.Description();
  std::vector<bool> fed(ex.inputs().size(), false);
  for (auto [name, path] : o.inputs) {
    auto found = FindInput(ex.inputs(), name);
    // An input whose name holds '=' ("a=b=x.npy" for input "a=b"): the split at a later '='.
    for (size_t eq = path.find('='); !found.ok() && eq != std::string::npos; eq = path.find('=', eq + 1)) {
      if (FindInput(ex.inputs(), name + "=" + path.substr(0, eq)).ok()) {
        name += "=" + path.substr(0, eq);
        path = path.substr(eq + 1);
        found = FindInput(ex.inputs(), name);
      }
    }
    if (!found.ok()) return Fail(o, found.status().message());
    const size_t index = *found;
    auto array = ReadNpy(path);
    if (!array.ok()) return Fail(o, array.status().message());
    const TensorInfo& info = ex.inputs()[index];
    if (!AcceptsShape(info, ex.artifact(), array->shape) || array->dtype != info.dtype) {
      return Fail(o, "input '" + name + "' expects " + ElementTypeName(info.dtype) + " " +
                         AcceptedShapeStr(info, ex.artifact()) + ", " + path + " holds " +
                         ElementTypeName(array->dtype) + " " + ShapeStr(array->shape));
    }
    Status s = ex.SetInput(index, array->data.data(), array->data.size());
    if (!s.ok()) return Fail(o, s.message());
    fed[index] = true;
  }
  std::mt19937 rng(0);
  for (size_t i = 0; i < fed.size(); ++i) {
    if (fed[i]) continue;
    const TensorInfo& info = ex.inputs()[i];
    std::string bytes(size_t(info.bytes()), '\0');
    if (StorageTypeOf(info.dtype) == ElementType::kFloat32) {
      // Drawn in float32 and converted to the input's floating type (float16, float64, ...).
      std::vector<float> values(size_t(info.bytes() / ElementSize(info.dtype)));
      std::uniform_real_distribution<float> dist(0.0f, 1.0f);
      for (float& v : values) v = dist(rng);
      ConvertFromStorage(info.dtype, values.data(), bytes.data(), int64_t(values.size()));
    }
    if (!o.json) {
      std::printf("input '%s' %s: no --input given, using uniform random values in [0, 1)\n", info.name.c_str(),
                  ShapeStr(info.shape).c_str());
    }
    Status s = ex.SetInput(i, bytes.data(), bytes.size());
    if (!s.ok()) return Fail(o, s.message());
  }

  Status warm = ex.Run();  // also the run whose outputs are reported
  if (!warm.ok()) return Fail(o, warm.message());
  std::vector<double> ms;
  for (int r = 0; r < o.repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    Status s = ex.Run();
    auto t1 = std::chrono::steady_clock::now();
    if (!s.ok()) return Fail(o, s.message());
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  // On a GPU also the device's own time per run (events around the replay): what a GPU-side
  // comparison (PyTorch's CUDA-graph replay) measures, without the host's synchronization.
  std::vector<double> gpu_ms;
  const GraphExecutor::Replay replay = ex.replay();
  for (int r = 0; r < o.repeat; ++r) {
    auto t = ex.DeviceTimedRun();
    if (t.status().code() == StatusCode::kUnimplemented) break;  // a CPU: the wall times above
    if (!t.ok()) return Fail(o, t.status().message());
    gpu_ms.push_back(*t);
  }
  std::sort(gpu_ms.begin(), gpu_ms.end());
  if (!ex.replay().fallback.empty()) {
    std::fprintf(stderr, "tunefarm run: CUDA graph replay did not hold (%s): timed with plain launches\n",
                 ex.replay().fallback.c_str());
  }
  std::vector<double> kernel_ms;  // --profile: each kernel's mean time
  if (o.profile) {
    for (int r = 0; r < std::max(1, o.repeat); ++r) {
      Status s = ex.RunProfiled(&kernel_ms);
      if (!s.ok()) return Fail(o, s.message());
    }
    for (double& v : kernel_ms) v /= std::max(1, o.repeat);
  }
  if (o.profile && !o.json) {
    double total = 0;
    for (double v : kernel_ms) total += v;
    std::vector<size_t> order(kernel_ms.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return kernel_ms[a] > kernel_ms[b]; });
    std::printf("Per-kernel time (mean of %d runs), slowest first:\n", o.repeat);
    for (size_t k : order) {
      const auto& kernel = ex.artifact().kernels[k];
      std::printf("%9.4f ms %5.1f%%  %-40s %s%s\n", kernel_ms[k], 100.0 * kernel_ms[k] / total, kernel.op.c_str(),
                  kernel.workload.c_str(), kernel.config_origin == ConfigOrigin::kFallback ? " (fallback)" : "");
    }
  }
  if (ms.empty()) ms.push_back(0);  // --repeat 0: the one run that produces the outputs, untimed
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / double(ms.size());
  double median =
      sorted.size() % 2 ? sorted[sorted.size() / 2] : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
  double var = 0;
  for (double v : ms) var += (v - mean) * (v - mean);
  double stddev = std::sqrt(var / double(ms.size()));

  // Top-5 of a 1000-way float output (ImageNet classifiers).
  std::vector<std::pair<float, int>> top;
  if (!ex.outputs().empty() && ex.outputs()[0].dtype == ElementType::kFloat32 && ex.outputs()[0].bytes() == 4000) {
    const float* y = static_cast<const float*>(ex.Output(0));
    for (int c = 0; c < 1000; ++c) top.emplace_back(y[c], c);
    std::partial_sort(top.begin(), top.begin() + 5, top.end(), [](auto& a, auto& b) { return a.first > b.first; });
    top.resize(5);
  }
  if (!o.output.empty()) {
    std::vector<std::string> paths;
    for (size_t k = 0; k < ex.outputs().size(); ++k) {
      std::string path = o.output;
      if (k > 0) {
        size_t dot = path.rfind(".npy");
        path = (dot == std::string::npos ? path : path.substr(0, dot)) + "_" + std::to_string(k) + ".npy";
      }
      // All or nothing: every path checked before the first is written.
      Status writable = CheckWritableRegularPath(path);
      if (!writable.ok()) return Fail(o, writable.message() + " (no output was written)");
      paths.push_back(path);
    }
    for (size_t k = 0; k < ex.outputs().size(); ++k) {
      const std::string& path = paths[k];
      const TensorInfo& info = ex.outputs()[k];
      NpyArray a{info.dtype, info.shape, std::string(static_cast<const char*>(ex.Output(k)), size_t(info.bytes()))};
      Status s = WriteNpy(path, a);
      if (!s.ok()) return Fail(o, s.message());
    }
  }
  if (o.json) {
    nlohmann::ordered_json j;
    j["artifact"] = o.artifact;
    j["target"] = ex.artifact().target;
    j["device"] = o.device;
    j["threads"] = o.threads;
    j["repeat"] = o.repeat;
    j["mean_ms"] = mean;
    j["median_ms"] = median;
    j["min_ms"] = sorted.front();
    j["max_ms"] = sorted.back();
    j["std_ms"] = stddev;
    if (!gpu_ms.empty()) {
      j["gpu_median_ms"] = gpu_ms[gpu_ms.size() / 2];
      j["gpu_min_ms"] = gpu_ms.front();
    }
    if (replay.supported) {
      j["cuda_graph"] = ex.replay().holds;
      if (!ex.replay().fallback.empty()) j["cuda_graph_fallback"] = ex.replay().fallback;
    }
    if (!kernel_ms.empty()) {
      nlohmann::ordered_json ks = nlohmann::ordered_json::array();
      for (size_t k = 0; k < kernel_ms.size(); ++k) {
        const auto& kernel = ex.artifact().kernels[k];
        ks.push_back({{"op", kernel.op},
                      {"workload", kernel.workload},
                      {"config_source", ConfigOriginName(kernel.config_origin)},
                      {"ms", kernel_ms[k]}});
      }
      j["kernels"] = ks;
    }
    if (const auto& dim = ex.artifact().symbolic_dim) {
      j["symbolic_dim"] = {{"name", dim->name}, {"min", dim->min}, {"max", dim->max}};
    }
    j["peak_bytes"] = ex.peak_bytes();
    j["param_bytes"] = ex.param_bytes();
    if (!top.empty()) {
      nlohmann::ordered_json t = nlohmann::ordered_json::array();
      for (auto& [score, cls] : top) t.push_back({{"class", cls}, {"score", score}});
      j["top5"] = t;
    }
    std::printf("%s\n", j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("%s: %s, %zu kernels, %s, activations %.2f MiB (peak with inputs/outputs %.2f MiB), params %.2f MiB\n",
              o.artifact.c_str(), ex.artifact().target.c_str(), ex.artifact().kernels.size(), where.c_str(),
              double(ex.arena_bytes()) / (1 << 20), double(ex.peak_bytes()) / (1 << 20),
              double(ex.param_bytes()) / (1 << 20));
  if (const auto& dim = ex.artifact().symbolic_dim) {
    std::string outputs;
    for (const TensorInfo& out : ex.outputs())
      outputs += (outputs.empty() ? "" : ", ") + out.name + " " + ShapeStr(out.shape);
    std::printf("'%s' is symbolic in [%lld, %lld] (memory planned for %lld); this run's outputs: %s\n",
                dim->name.c_str(), static_cast<long long>(dim->min), static_cast<long long>(dim->max),
                static_cast<long long>(dim->max), outputs.c_str());
  }
  if (o.repeat > 0) {
    std::printf("Execution time summary (%d runs):\n", o.repeat);
    std::printf(" mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)\n");
    std::printf("%10.4f %13.4f %11.4f %12.4f %12.4f\n", mean, median, sorted.back(), sorted.front(), stddev);
    if (!gpu_ms.empty()) {
      std::printf("GPU time per run (events): median %.4f ms, min %.4f ms\n", gpu_ms[gpu_ms.size() / 2],
                  gpu_ms.front());
    }
  }
  if (!top.empty()) {
    std::printf("Top 5 classes:");
    for (auto& [score, cls] : top) std::printf("  %d (%.4g)", cls, double(score));
    std::printf("\n");
  }
  if (!o.output.empty()) std::printf("outputs written to %s\n", o.output.c_str());
  return 0;
}

}  // namespace

int RunTool(const RunToolOptions& options) {
  RunToolOptions o = options;
  auto device = ParseDevice(o.device);
  if (!device.ok()) return Fail(o, device.status().message());
  auto loaded = LoadExecutorFile(o.artifact, *device);
  if (!loaded.ok()) return Fail(o, loaded.status().message());
  // The artifact's tuned configs were measured at the thread count it was compiled for: that is the
  // default, and another one is allowed but said once when it has tuned kernels (a config tuned for
  // one core can lose on two).
  const Artifact& artifact = (*loaded)->artifact();
  const int compiled_for = artifact.threads;
  const bool tuned = std::any_of(artifact.kernels.begin(), artifact.kernels.end(),
                                 [](const ArtifactKernel& k) { return k.config_origin == ConfigOrigin::kRecords; });
  if (device->kind == Device::Kind::kCpu) {
    if (o.threads == 0) {
      o.threads = compiled_for > 0 ? compiled_for : 1;
    } else if (tuned && compiled_for > 0 && o.threads != compiled_for) {
      std::fprintf(stderr,
                   "warning: %s was compiled for %d thread%s (its tuned configs were measured at that count); "
                   "running on %d (compile --threads %d for records measured at %d)\n",
                   o.artifact.c_str(), compiled_for, compiled_for == 1 ? "" : "s", o.threads, o.threads, o.threads);
    }
    Executor::SetNumThreads(o.threads);
  }
  if (o.threads == 0) o.threads = 1;  // a GPU artifact: the host side's one thread
  return RunLoaded(**loaded, o);
}

}  // namespace tunefarm::runtime
