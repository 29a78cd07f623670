// The walls around the services, checked on the sources (issue 35): proto/ holds only the
// contracts; the daemons' mains leave token, TLS, the server, metrics and signals to RunDaemon;
// one spec <-> proto conversion; trial statuses decided through the TrialStatus enum.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "common/source_scan.h"

namespace tunefarm::service {
namespace {

std::string SourceDir() {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  return src ? src : "";
}

std::string Joined(const std::vector<std::string>& lines) {
  std::ostringstream all;
  for (const auto& l : lines) all << l << "\n";
  return all.str();
}

TEST(Walls, ProtoHoldsOnlyTheContracts) {
  ASSERT_FALSE(SourceDir().empty()) << "TUNEFARM_SOURCE_DIR is set by CTest";
  std::vector<std::string> code;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(SourceDir()) / "proto")) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".cc" || ext == ".h")) code.push_back(e.path().string());
  }
  EXPECT_TRUE(code.empty()) << "the plumbing belongs to service/:\n" << Joined(code);
}

TEST(Walls, TheDaemonsMainsLeaveTheirWiringToRunDaemon) {
  ASSERT_FALSE(SourceDir().empty()) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const std::vector<std::string> mains = {"tracker/tools/rpc_tracker_main.cc", "rpc_server/tools/rpc_server_main.cc",
                                          "tuner/daemon/tuner_daemon_main.cc"};
  for (const std::string& main : mains) {
    ASSERT_TRUE(std::filesystem::exists(std::filesystem::path(SourceDir()) / main)) << main;
  }
  const auto offenders =
      testing::LinesBreakingARule(SourceDir(), {"tracker", "rpc_server", "tuner"}, {}, [](const std::string& line) {
        return line.find("TUNEFARM_HAVE_METRICS") != std::string::npos ||
               line.find("std::signal(") != std::string::npos || line.find("StartFarmServer(") != std::string::npos ||
               line.find("MetricsEndpoint::Start") != std::string::npos || line.find("LoadToken(") != std::string::npos;
      });
  // Only the components' metrics files may ask whether the build has Prometheus.
  std::vector<std::string> in_mains;
  for (const auto& o : offenders) {
    for (const auto& m : mains) {
      if (o.rfind(m, 0) == 0) in_mains.push_back(o);
    }
    const bool metrics_file =
        o.find("_metrics.cc:") != std::string::npos && o.find("TUNEFARM_HAVE_METRICS") != std::string::npos;
    EXPECT_TRUE(metrics_file || o.find("_main.cc:") != std::string::npos) << "outside RunDaemon: " << o;
  }
  EXPECT_TRUE(in_mains.empty()) << "RunDaemon (service/daemon.h) does this:\n" << Joined(in_mains);
}

TEST(Walls, OneConversionBetweenAMeasureSpecAndItsMessages) {
  ASSERT_FALSE(SourceDir().empty()) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const auto offenders = testing::LinesBreakingARule(
      SourceDir(), {"rpc_server", "tuner", "tools", "bench"}, {"rpc_server/measure/measurement_spec.cc"},
      [](const std::string& line) {
        return line.find("set_min_repeat_ms(") != std::string::npos ||
               line.find("set_expected_outputs(") != std::string::npos || line.find("add_shape(") != std::string::npos;
      });
  EXPECT_TRUE(offenders.empty()) << "ToProto/FromProto (tunefarm/rpc_server/measurement.h) convert a spec:\n"
                                 << Joined(offenders);
}

TEST(Walls, TrialStatusesAreDecidedThroughTheEnum) {
  ASSERT_FALSE(SourceDir().empty()) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const char* words[] = {"\"ok\"",      "\"instantiation_error\"", "\"compile_error\"", "\"runtime_error\"",
                         "\"timeout\"", "\"wrong_answer\"",        "\"bad_request\""};
  const auto offenders = testing::LinesBreakingARule(
      SourceDir(), {"rpc_server", "tuner", "tools", "bench", "runtime"},
      {"runtime/include/tunefarm/runtime/trial_status.h"}, [&words](const std::string& line) {
        if (line.find("status") == std::string::npos) return false;
        for (const char* w : words) {
          if (line.find(std::string("== ") + w) != std::string::npos ||
              line.find(std::string("!= ") + w) != std::string::npos ||
              line.find(std::string("status = ") + w) != std::string::npos) {
            return true;
          }
        }
        return false;
      });
  EXPECT_TRUE(offenders.empty()) << "compare TrialStatus values (tunefarm/runtime/trial_status.h):\n"
                                 << Joined(offenders);
}

// A component reaches another only through its public headers (tunefarm/<component>/...): never
// "tuner/records/...", "service/..." or "compiler/..." from outside that folder. Tests may look inside.
TEST(Walls, ComponentsIncludeEachOtherOnlyThroughPublicHeaders) {
  ASSERT_FALSE(SourceDir().empty()) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const std::vector<std::string> components = {"runtime",    "compiler", "service", "tracker",
                                               "rpc_server", "tuner",    "tools",   "bench"};
  std::vector<std::string> offenders;
  for (const std::string& component : components) {
    for (const std::string& other : components) {
      if (other == component) continue;
      const std::string inside = "#include \"" + other + "/";
      for (const auto& o :
           testing::LinesBreakingARule(SourceDir(), {component}, {},
                                       [&inside](const std::string& line) { return line.rfind(inside, 0) == 0; })) {
        offenders.push_back(o);
      }
    }
  }
  EXPECT_TRUE(offenders.empty()) << "include the component's public header (tunefarm/...) instead:\n"
                                 << Joined(offenders);
}

}  // namespace
}  // namespace tunefarm::service
