// tunefarm-lower: shows what the kernel compiler does with one kernel.
//
//   tunefarm-lower WORKLOAD_KEY [--target T] [--config N] [--epilogue bias,residual,relu|relu6]
//                  [--dump-after PASS|all] [--time-passes] [--asm-object PATH]
// Prints the lowered IR (after the final pass unless --dump-after names one), the pass timings,
// and the kernel metadata. Exit status 1 with one message on any user error.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "tunefarm/compiler/kernel.h"

namespace tc = tunefarm::compiler;

namespace {
int Fail(const std::string& msg) {
  std::fprintf(stderr, "tunefarm-lower: %s\n", msg.c_str());
  return 1;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
    std::printf(
        "usage: tunefarm-lower WORKLOAD_KEY [--target T] [--config N] [--epilogue LIST]\n"
        "                      [--dump-after PASS|all] [--time-passes] [--object PATH]\n"
        "example: tunefarm-lower 'conv2d_nchwc|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32'\n");
    return argc < 2 ? 1 : 0;
  }
  auto workload = tc::Workload::FromKey(argv[1]);
  if (!workload.ok()) return Fail(workload.status().message());
  std::string target_text = "native", dump_after, epilogue, object_path;
  int64_t config = -1;
  bool time_passes = false;
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (flag == "--time-passes") {
      time_passes = true;
      continue;
    }
    const char* v = value();
    if (!v) return Fail("flag " + flag + " needs a value");
    if (flag == "--target") target_text = v;
    else if (flag == "--config") {
      char* end = nullptr;
      config = std::strtoll(v, &end, 10);
      if (!end || *end) return Fail(std::string("--config expects an integer, got '") + v + "'");
    } else if (flag == "--epilogue") epilogue = v;
    else if (flag == "--dump-after") dump_after = v;
    else if (flag == "--object") object_path = v;
    else return Fail("unknown flag " + flag);
  }
  auto target = tc::ParseTarget(target_text);
  if (!target.ok()) return Fail(target.status().message());
  tc::KernelSpec spec{*workload, {}, *target, config, ""};
  std::stringstream ss(epilogue);
  for (std::string part; std::getline(ss, part, ',');) {
    if (part == "bias") spec.epilogue.bias = true;
    else if (part == "residual") spec.epilogue.residual = true;
    else if (part == "relu") spec.epilogue.activation = tc::Activation::kRelu;
    else if (part == "relu6") spec.epilogue.activation = tc::Activation::kRelu6;
    else return Fail("unknown epilogue part '" + part + "' (known: bias, residual, relu, relu6)");
  }
  std::vector<std::pair<std::string, double>> times;
  tc::BuildOptions options;
  options.dump_after = dump_after.empty() ? "remove_no_ops" : dump_after;
  options.dump = &std::cout;
  options.pass_times = &times;
  std::vector<tc::KernelInfo> infos;
  if (!object_path.empty()) {
    auto object = tc::BuildObject({spec}, &infos, options);
    if (!object.ok()) return Fail(object.status().message());
    std::ofstream(object_path, std::ios::binary).write(object->data(), std::streamsize(object->size()));
  } else {
    auto info = tc::DescribeKernel(spec, options);
    if (!info.ok()) return Fail(info.status().message());
    infos.push_back(*info);
  }
  if (time_passes) {
    double total = 0;
    for (const auto& [pass, ms] : times) {
      std::printf("// %-20s %8.3f ms\n", pass.c_str(), ms);
      total += ms;
    }
    std::printf("// %-20s %8.3f ms\n", "total", total);
  }
  std::printf("// metadata: %s\n", infos[0].ToJson().c_str());
  return 0;
}
