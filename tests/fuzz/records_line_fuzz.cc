// Fuzz target: one line of `tunefarm records import` (a trial as JSON), then -- when it parses --
// the same line stored into and read back from an in-memory records database, with the target
// string checked by the compiler's parser as the CLI does.
#include <sstream>

#include "fuzz/fuzz_target.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/tuner/records.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace tt = tunefarm::tuner;
  const std::string line(reinterpret_cast<const char*>(data), size);
  auto trial = tt::TrialRecord::FromJson(line);
  if (!trial.ok()) return 0;
  static std::unique_ptr<tt::RecordsDb> db = [] {
    auto opened = tt::RecordsDb::Open(":memory:", tt::RecordsDb::Mode::kCreate);
    return opened.ok() ? std::move(*opened) : nullptr;
  }();
  if (!db) std::abort();
  std::istringstream in(line);
  auto added = db->ImportJsonLines(in, [](const tt::TrialRecord& t) -> tunefarm::Status {
    return tunefarm::compiler::ParseTarget(t.target).status();
  });
  if (added.ok() && *added > 0) (void)trial->ToJson();
  return 0;
}

namespace tunefarm::fuzz {

std::vector<std::string> Seeds() {
  const std::string ok =
      R"({"workload":"dense_pack|N1_I16|O8|NC|float32","target":"llvm -mcpu=x86-64","status":"ok","config_index":1,)"
      R"("config":"{}","mean_ms":0.5,"costs_ms":[0.5]})";
  return {ok,
          R"({"workload":"w","target":"llvm","status":"exploded","config_index":1})",  // unknown status
          R"({"workload":"w","target":"llvm -model=\u0000x","status":"ok","config_index":1,"mean_ms":1})",  // NUL
          R"({"workload":"w","target":"not a target","status":"timeout","config_index":1})",   // unparsable target
          R"({"workload":"","target":"llvm","status":"ok","config_index":1,"mean_ms":1})",     // empty key
          R"({"workload":"w","target":"llvm","status":"ok","config_index":"1","mean_ms":1})",  // mistyped
          "{\"workload\":\"caf\xe9\",\"target\":\"llvm\",\"status\":\"timeout\",\"config_index\":1}"};  // Latin-1
}

}  // namespace tunefarm::fuzz
