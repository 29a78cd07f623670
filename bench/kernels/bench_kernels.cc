// bench_kernels: GFLOP/s of tunefarm kernels on the ANCHORS.md workloads, for the fallback config
// and the best of K random valid configs, interleaved in one run with oneDNN and an FMA-peak
// microbenchmark.
//
//   bench_kernels [--threads N] [--k K] [--json PATH] [--filter SUBSTRING] [--seed S] [--records DB]
//                 [--dtype uint8]
//
// With --dtype uint8, the int8 set (workloads.h's Int8BenchWorkloads: ResNet-50's, ResNet-18's and
// MobileNetV2's convolutions, BERT-base's projections) as ONNX Runtime's int8 models compute them
// (uint8 activations with a zero point, int8 weights, an int32 bias, requantized to uint8) against
// oneDNN's int8 primitives, the percentage against the int8 peak of the kernels' instruction
// (fma_peak.h), and ResNet-50's convolutions summed by their counts.
//
// With --records, the second column is the tuned kernel instead: the three fastest configs the
// records database holds for each workload on this target are re-timed and the best kept (what
// apply-history-best would pick, checked against measurement noise).
//
// Every candidate goes the way a tuning trial goes: codegen to an object, link to a shared
// library with the host toolchain, dlopen, time. The codegen+link time of each is reported.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/kernels/fma_peak.h"
#include "bench/kernels/onednn_reference.h"
#include "bench/kernels/timer.h"
#include "bench/kernels/workloads.h"
#include "tunefarm/command_line/command_line.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/runtime/kernel_library.h"
#include "tunefarm/tuner/records.h"

namespace tunefarm::bench {
namespace {

using compiler::KernelInfo;
using compiler::KernelSpec;

struct Options {
  int threads = 1;
  int k = 64;
  std::string json_path;
  std::string filter;
  uint64_t seed = 2026;
  std::string records;
  std::string implementation;        // another template for the workloads it applies to
  std::vector<std::string> configs;  // configs (as JSON) to time instead of random ones
  std::string dtype = "float32";     // or uint8: the int8 set
};

// The epilogue of an int8 benchmark kernel: ONNX Runtime's QLinearConv with a bias, an input zero
// point of 128 and the output requantized to uint8.
compiler::Epilogue Int8Epilogue() {
  compiler::Epilogue e;
  e.bias = true;
  e.input_zero_point = 128;
  e.requantize.enabled = true;
  return e;
}

// The fastest distinct successful configs of a workload on the target in the records database.
std::vector<int64_t> TopRecordedConfigs(tuner::TrialLog& db, const compiler::Workload& w,
                                        const compiler::Target& target, size_t n) {
  std::vector<std::pair<double, int64_t>> ok;
  auto trials = db.List(w.Key(), -1, w.implementation);
  if (!trials.ok()) return {};
  for (const auto& t : *trials) {
    if (t.ok() && t.mean_ms > 0 && t.target == target.ToString()) ok.emplace_back(t.mean_ms, t.config_index);
  }
  std::sort(ok.begin(), ok.end());
  std::vector<int64_t> out;
  for (const auto& [ms, c] : ok) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    if (out.size() == n) break;
  }
  return out;
}

// One built candidate: its library, entry point and argument buffers.
struct Candidate {
  std::unique_ptr<runtime::KernelLibrary> lib;
  TunefarmKernelFn fn = nullptr;
  std::vector<std::vector<float>> buffers;
  std::vector<void*> args;
  KernelInfo info;
  double build_ms = 0;

  void Run() const { fn(args.data()); }
};

Result<std::unique_ptr<Candidate>> Build(const KernelSpec& spec, const std::string& dir, int serial) {
  auto c = std::make_unique<Candidate>();
  std::string path = dir + "/k" + std::to_string(serial) + ".so";
  std::vector<KernelInfo> infos;
  auto start = std::chrono::steady_clock::now();
  TUNEFARM_RETURN_IF_ERROR(compiler::BuildSharedLibrary({spec}, path, &infos));
  c->build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  TUNEFARM_ASSIGN_OR_RETURN(c->lib, runtime::KernelLibrary::Open(path));
  unlink(path.c_str());
  c->info = infos[0];
  TUNEFARM_ASSIGN_OR_RETURN(c->fn, c->lib->Lookup(c->info.symbol));
  std::mt19937 rng(serial);
  std::uniform_real_distribution<float> d(-1, 1);
  for (const auto& b : c->info.buffers) {
    std::vector<float> v(size_t(b.num_elements()));
    for (float& x : v) x = d(rng);
    c->buffers.push_back(std::move(v));
  }
  for (auto& b : c->buffers) c->args.push_back(b.data());
  return c;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Run(const Options& opt) {
  TunefarmSetNumThreads(opt.threads);
  SetOneDnnThreads(opt.threads);
  compiler::Target target = compiler::HostTarget();
  char dir_template[] = "/tmp/tunefarm_bench_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) {
    std::fprintf(stderr, "bench_kernels: cannot create a temp directory\n");
    return 1;
  }
  const bool int8 = opt.dtype == "uint8";
  double peak = MeasureFmaPeakGflops(opt.threads);
  const char* peak_name = "FMA peak";
  if (int8) {
    const Int8Peak p = MeasureInt8Peak(opt.threads, target.int8_products, target.vector_lanes);
    if (p.gops <= 0) {
      std::fprintf(stderr, "bench_kernels: no int8 peak loop for %s's int8 form\n", target.cpu.c_str());
      return 1;
    }
    std::printf("bench_kernels: fp32 FMA peak %.1f GFLOP/s; int8 peak (%s) %.1f GOP/s\n", peak, p.instruction, p.gops);
    peak = p.gops;
    peak_name = "int8 peak";
  }
  std::unique_ptr<tuner::RecordsDb> records;
  if (!opt.records.empty()) {
    auto db = tuner::RecordsDb::Open(opt.records, tuner::RecordsDb::Mode::kMustExist);
    if (!db.ok()) {
      std::fprintf(stderr, "bench_kernels: %s\n", db.status().message().c_str());
      return 1;
    }
    records = std::move(*db);
  }
  if (records) {
    std::printf("bench_kernels: target %s, %d thread(s), tuned configs from %s, %s %.1f G/s\n", target.cpu.c_str(),
                opt.threads, opt.records.c_str(), peak_name, peak);
  } else {
    std::printf("bench_kernels: target %s, %d thread(s), K=%d random configs, %s %.1f G/s\n", target.cpu.c_str(),
                opt.threads, opt.k, peak_name, peak);
  }
  std::printf("%-28s %9s %10s %10s %10s %8s %8s %7s\n", "workload", int8 ? "MOP" : "MFLOP", "fallback",
              records ? "tuned" : "best-rand", "oneDNN", "fb/dnn", records ? "tun/dnn" : "best/dnn", "%peak");

  std::mt19937_64 rng(opt.seed);
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  std::vector<double> build_times;
  double sum_flops = 0, sum_fb = 0, sum_best = 0, sum_dnn = 0;
  // ResNet-50's convolutions, each shape's time times its count (the int8 set).
  double r50_flops = 0, r50_fb = 0, r50_best = 0, r50_dnn = 0;
  int r50_convs = 0;
  int serial = 0;
  TimingOptions quick{3, 5.0}, careful{5, 20.0};
  for (const BenchWorkload& bw : int8 ? Int8BenchWorkloads() : BenchWorkloads()) {
    if (!opt.filter.empty() && bw.label.find(opt.filter) == std::string::npos) continue;
    KernelSpec spec{bw.workload, int8 ? Int8Epilogue() : compiler::Epilogue{}, target, -1, "bench_kernel"};
    if (!opt.implementation.empty()) {
      // Another implementation of the same operator: only where its template takes the workload.
      spec.workload.implementation = opt.implementation;
      if (!compiler::GetConfigSpace(spec.workload, target).ok()) continue;
    }
    auto fallback = Build(spec, dir, serial++);
    if (!fallback.ok()) {
      std::fprintf(stderr, "bench_kernels: %s: %s\n", bw.label.c_str(), fallback.status().ToString().c_str());
      return 1;
    }
    build_times.push_back((*fallback)->build_ms);
    auto space = compiler::GetConfigSpace(spec.workload, target);
    // Quick timings rank the K candidates; the top kFinalists are timed again carefully below,
    // so one lucky or unlucky quick sample does not decide which random config is "best".
    constexpr size_t kFinalists = 3;
    std::vector<std::pair<double, std::unique_ptr<Candidate>>> finalists;
    std::vector<int64_t> recorded;
    nlohmann::ordered_json tried = nlohmann::ordered_json::array();  // every candidate's quick timing
    if (records) {
      recorded = TopRecordedConfigs(*records, spec.workload, target, kFinalists);
      if (recorded.empty())
        std::fprintf(stderr, "bench_kernels: %s: no tuning record; using the fallback\n", bw.label.c_str());
    }
    const int candidates = records ? int(recorded.size()) : !opt.configs.empty() ? int(opt.configs.size()) : opt.k;
    for (int i = 0; i < candidates; ++i) {
      if (records) {
        spec.config_index = recorded[size_t(i)];
      } else if (!opt.configs.empty()) {
        auto cfg = space->FromJson(opt.configs[size_t(i)]);
        if (!cfg.ok()) {
          std::fprintf(stderr, "bench_kernels: %s: --config %s: %s\n", bw.label.c_str(), opt.configs[size_t(i)].c_str(),
                       cfg.status().message().c_str());
          return 1;
        }
        spec.config_index = cfg->index();
      } else {
        auto cfg = space->RandomValid(rng);
        if (!cfg.ok()) break;
        spec.config_index = cfg->index();
      }
      auto cand = Build(spec, dir, serial++);
      if (!cand.ok()) {
        std::fprintf(stderr, "bench_kernels: %s config %lld: %s\n", bw.label.c_str(), (long long)spec.config_index,
                     cand.status().ToString().c_str());
        return 1;
      }
      build_times.push_back((*cand)->build_ms);
      Candidate* c = cand->get();
      double t = BestSecondsPerCall([c] { c->Run(); }, quick);
      tried.push_back({{"config", nlohmann::ordered_json::parse(c->info.config_json)},
                       {"quick_gflops", bw.workload.Flops() / t / 1e9}});
      finalists.emplace_back(t, std::move(*cand));
      std::sort(finalists.begin(), finalists.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      if (finalists.size() > kFinalists) finalists.pop_back();
    }
    auto dnn = int8 ? OneDnnPrimitive::CreateInt8(bw.workload) : OneDnnPrimitive::Create(bw.workload);
    // Interleave them in rounds so drifting machine load hits all alike; keep each one's best.
    double t_fb = 1e30, t_best = 1e30, t_dnn = 1e30;
    Candidate* fb = fallback->get();
    Candidate* best = nullptr;
    for (int round = 0; round < 3; ++round) {
      t_fb = std::min(t_fb, BestSecondsPerCall([fb] { fb->Run(); }, careful));
      t_dnn = std::min(t_dnn, BestSecondsPerCall([&] { dnn->Run(); }, careful));
      for (auto& [unused, cand] : finalists) {
        Candidate* c = cand.get();
        double t = BestSecondsPerCall([c] { c->Run(); }, careful);
        if (t < t_best) {
          t_best = t;
          best = c;
        }
      }
    }
    if (!best) t_best = t_fb;
    double flops = bw.workload.Flops();
    double g_fb = flops / t_fb / 1e9, g_best = flops / t_best / 1e9, g_dnn = flops / t_dnn / 1e9;
    std::printf("%-28s %9.1f %10.1f %10.1f %10.1f %8.2f %8.2f %6.1f%%\n", bw.label.c_str(), flops / 1e6, g_fb, g_best,
                g_dnn, g_fb / g_dnn, g_best / g_dnn, 100.0 * std::max(g_fb, g_best) / peak);
    std::fflush(stdout);
    if (bw.resnet50_count > 0) {
      r50_flops += bw.resnet50_count * flops;
      r50_fb += bw.resnet50_count * t_fb;
      r50_best += bw.resnet50_count * t_best;
      r50_dnn += bw.resnet50_count * t_dnn;
      r50_convs += bw.resnet50_count;
    }
    if (bw.in_resnet18_conv_sum) {
      sum_flops += flops;
      sum_fb += t_fb;
      sum_best += t_best;
      sum_dnn += t_dnn;
    }
    out.push_back({{"workload", spec.workload.Key()},
                   {"implementation", spec.workload.implementation},
                   {"label", bw.label},
                   {"flops", flops},
                   {"fallback_gflops", g_fb},
                   {records ? "tuned_gflops" : "best_random_gflops", g_best},
                   {"onednn_gflops", g_dnn},
                   {"peak_gflops", peak},
                   {"fallback_config", fb->info.config_json},
                   {records ? "tuned_config" : "best_random_config", best ? best->info.config_json : std::string()},
                   {"candidates", tried}});
  }
  if (sum_flops > 0) {
    double g_fb = sum_flops / sum_fb / 1e9, g_best = sum_flops / sum_best / 1e9, g_dnn = sum_flops / sum_dnn / 1e9;
    std::printf("%-28s %9.1f %10.1f %10.1f %10.1f %8.2f %8.2f %6.1f%%\n", "resnet18 conv sum (t1-t11)", sum_flops / 1e6,
                g_fb, g_best, g_dnn, g_fb / g_dnn, g_best / g_dnn, 100.0 * g_best / peak);
    std::printf("resnet18 conv sum time: fallback %.3f ms, %s %.3f ms, oneDNN %.3f ms\n", sum_fb * 1e3,
                records ? "tuned" : ("best-of-" + std::to_string(opt.k)).c_str(), sum_best * 1e3, sum_dnn * 1e3);
  }
  if (r50_flops > 0) {
    double g_fb = r50_flops / r50_fb / 1e9, g_best = r50_flops / r50_best / 1e9, g_dnn = r50_flops / r50_dnn / 1e9;
    const std::string label = "resnet50 conv sum (" + std::to_string(r50_convs) + ")";
    std::printf("%-28s %9.1f %10.1f %10.1f %10.1f %8.2f %8.2f %6.1f%%\n", label.c_str(), r50_flops / 1e6, g_fb, g_best,
                g_dnn, g_fb / g_dnn, g_best / g_dnn, 100.0 * g_best / peak);
    std::printf("resnet50 conv sum time: fallback %.3f ms, %s %.3f ms, oneDNN %.3f ms\n", r50_fb * 1e3,
                records ? "tuned" : ("best-of-" + std::to_string(opt.k)).c_str(), r50_best * 1e3, r50_dnn * 1e3);
  }
  std::printf("codegen+link per candidate: median %.1f ms, over %zu candidates\n", Median(build_times),
              build_times.size());
  rmdir(dir);
  if (!opt.json_path.empty()) {
    std::ofstream f(opt.json_path);
    f << out.dump(2) << "\n";
    if (!f) {
      std::fprintf(stderr, "bench_kernels: cannot write %s\n", opt.json_path.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace tunefarm::bench

int main(int argc, char** argv) {
  tunefarm::bench::Options opt;
  CLI::App app{
      "bench_kernels: fallback, best of K random configs and oneDNN on the benchmark workloads (GFLOP/s, % of the FMA "
      "peak)",
      "bench_kernels"};
  tunefarm::AddIntFlag(app, "--threads", &opt.threads, 1, 1024, "threads (default 1)");
  tunefarm::AddIntFlag(app, "--k", &opt.k, 0, 1000000, "random valid configs tried per workload (default 64)");
  app.add_option("--json", opt.json_path, "also write the figures there")->type_name("PATH");
  app.add_option("--filter", opt.filter, "only workloads whose name contains this")->type_name("SUBSTRING");
  app.add_option("--seed", opt.seed, "random seed (default 2026)");
  app.add_option("--records", opt.records, "also time the best recorded configs of this database")->type_name("DB");
  app.add_option("--template", opt.implementation,
                 "time this implementation of the workloads it applies to (conv2d_nchwc_winograd: the 3x3 stride-1 "
                 "convolutions); GFLOP/s stay direct-convolution FLOPs per second")
      ->type_name("NAME");
  app.add_option("--dtype", opt.dtype,
                 "float32 (default) or uint8: the int8 set against oneDNN's int8 primitives and the int8 peak")
      ->check(CLI::IsMember({"float32", "uint8"}))
      ->type_name("TYPE");
  app.add_option("--config", opt.configs,
                 "time this config (its JSON, as --json writes it) instead of random ones; repeatable")
      ->type_name("JSON");
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  return tunefarm::bench::Run(opt);
}
