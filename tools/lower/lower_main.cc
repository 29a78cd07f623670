// tunefarm-lower: shows what the kernel compiler does with one kernel.
//
//   tunefarm-lower WORKLOAD_KEY [--target T] [--config N] [--epilogue bias,residual,relu|relu6]
//                  [--dump-after PASS|all] [--time-passes] [--object PATH]
// Prints the lowered IR (after the final pass unless --dump-after names one), the pass timings,
// and the kernel metadata. Exit status 1 with one message on an error in the input, 2 on a usage
// error.
#include <climits>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "tunefarm/command_line/command_line.h"
#include "tunefarm/compiler/kernel.h"

namespace tc = tunefarm::compiler;

namespace {
int Fail(const std::string& msg) {
  std::fprintf(stderr, "tunefarm-lower: %s\n", msg.c_str());
  return 1;
}
}  // namespace

int main(int argc, char** argv) {
  std::string key, target_text = "native", dump_after, epilogue, object_path;
  int64_t config = -1;
  bool time_passes = false;
  CLI::App app{
      "tunefarm-lower: what the kernel compiler does with one kernel: its IR after a pass, the pass times, its "
      "metadata (e.g. tunefarm-lower 'conv2d_nchwc|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32')",
      "tunefarm-lower"};
  app.add_option("WORKLOAD_KEY", key, "the task, as tunefarm tasks prints it: TEMPLATE:KEY")->required();
  app.add_option("--target", target_text, "the target (default native)")->type_name("T");
  tunefarm::AddIntFlag(app, "--config", &config, -1, INT64_MAX, "the config index (default -1: the fallback config)");
  app.add_option("--epilogue", epilogue, "fused after the op: bias, residual, relu or relu6, comma-separated")
      ->type_name("LIST");
  app.add_option("--dump-after", dump_after, "print the IR after this pass, or after every pass (default: the last)")
      ->type_name("PASS|all");
  app.add_flag("--time-passes", time_passes, "print the time of every pass");
  app.add_option("--object", object_path, "also write the ELF object there")->type_name("PATH");
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  auto workload = tc::Workload::FromImplementationKey(key);
  if (!workload.ok()) return Fail(workload.status().message());
  if (workload->implementation.empty()) {
    return Fail("WORKLOAD_KEY '" + key +
                "' names no implementation; give it as tunefarm tasks prints it: TEMPLATE:KEY");
  }
  auto target = tc::ParseTarget(target_text);
  if (!target.ok()) return Fail(target.status().message());
  tc::KernelSpec spec{*workload, {}, *target, config, ""};
  std::stringstream ss(epilogue);
  for (std::string part; std::getline(ss, part, ',');) {
    if (part == "bias") {
      spec.epilogue.bias = true;
    } else if (part == "residual") {
      spec.epilogue.residual = true;
    } else if (part == "relu") {
      spec.epilogue.activation = tc::Activation::kRelu;
    } else if (part == "relu6") {
      spec.epilogue.activation = tc::Activation::kRelu6;
    } else if (part == "prelu") {
      spec.epilogue.activation = tc::Activation::kPRelu;
    } else if (part == "gelu") {
      spec.epilogue.activation = tc::Activation::kGelu;
    } else if (part == "gelu_tanh") {
      spec.epilogue.activation = tc::Activation::kGeluTanh;
    } else {
      return Fail("unknown epilogue part '" + part + "' (known: bias, residual, relu, relu6, prelu, gelu, gelu_tanh)");
    }
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
