// Fuzz target: the messages rpc_server and its measurement child exchange (spec.pb, outcome.pb):
// each parses or is refused, a parsed spec is validated as the server would, and what parses
// serializes back to the same meaning.
#include "fuzz/fuzz_target.h"
#include "tunefarm/rpc_server/measurement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace rs = tunefarm::rpc_server;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto spec = rs::ParseSpec(bytes);
  if (spec.ok()) {
    (void)rs::ValidateSpec(*spec, 1024, int64_t(1) << 30);
    auto again = rs::ParseSpec(rs::SerializeSpec(*spec));
    if (!again.ok() || again->symbol != spec->symbol || again->args.size() != spec->args.size()) std::abort();
  }
  auto outcome = rs::ParseOutcome(bytes);
  if (outcome.ok()) {
    auto again = rs::ParseOutcome(rs::SerializeOutcome(*outcome));
    if (!again.ok() || again->kind != outcome->kind || again->costs_ms != outcome->costs_ms) std::abort();
  }
  return 0;
}

namespace tunefarm::fuzz {

std::vector<std::string> Seeds() {
  namespace rs = rpc_server;
  rs::MeasureSpec spec;
  spec.symbol = "tf_kernel";
  spec.args = {{{1, 16}, "float32", "input"}, {{16}, "float32", "weight"}, {{1, 16}, "float32", "output"}};
  spec.expected_outputs.assign(16, 0.5f);
  rs::MeasureSpec gpu = spec;
  gpu.gpu.enabled = true;
  gpu.gpu.grid[0] = 4;
  gpu.gpu.block[0] = 256;
  rs::MeasureSpec absurd = spec;
  absurd.threads = 10000;
  absurd.args[0].shape = {int64_t(1) << 40};
  rs::MeasureOutcome ok;
  ok.costs_ms = {0.5, 0.4};
  ok.number = 10;
  rs::MeasureOutcome crash;
  crash.kind = rs::OutcomeKind::kRuntimeCrash;
  crash.signal = 11;
  crash.message = "caf\xe9";
  return {rs::SerializeSpec(spec),  rs::SerializeSpec(gpu),      rs::SerializeSpec(absurd),
          rs::SerializeOutcome(ok), rs::SerializeOutcome(crash), ""};
}

}  // namespace tunefarm::fuzz
