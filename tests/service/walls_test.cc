// The walls around the services, checked on the sources (issue 35): proto/ holds only the
// contracts; the daemons' mains leave token, TLS, the server, metrics and signals to RunDaemon;
// one spec <-> proto conversion; trial statuses and job states decided through their enums;
// every mutex an annotated one that says what it guards; no line over the column limit; the
// records database reached through its roles.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
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

// "name_" of a member declaration "[mutable] [tunefarm::][Recursive]Mutex name_;", or "".
std::string MutexMemberName(const std::string& line) {
  std::istringstream words(line);
  std::string word;
  words >> word;
  if (word == "mutable") words >> word;
  if (word.rfind("tunefarm::", 0) == 0) word = word.substr(10);
  if (word != "Mutex" && word != "RecursiveMutex") return "";
  std::string name;
  words >> name;
  if (name.size() < 2 || name.back() != ';') return "";
  return name.substr(0, name.size() - 1);
}

// The arguments of the lock annotations on a line: GUARDED_BY(mu_) -> "mu_". (No <regex>: GCC 12
// warns maybe-uninitialized inside it at -O1, which the sanitizer build compiles with -Werror.)
std::vector<std::string> AnnotationArguments(const std::string& line) {
  std::vector<std::string> out;
  for (const char* macro : {"GUARDED_BY(", "REQUIRES(", "EXCLUDES(", "ACQUIRED_BEFORE("}) {
    for (size_t at = line.find(macro); at != std::string::npos; at = line.find(macro, at + 1)) {
      const size_t open = at + std::char_traits<char>::length(macro);
      const size_t close = line.find(')', open);
      if (close != std::string::npos) out.push_back(line.substr(open, close - open));
    }
  }
  return out;
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

// Each client of the records database takes the role it needs (tunefarm/tuner/records_roles.h:
// TrialLog, BestConfigs, RecordsQueries, JobStore, RecordsMaintenance), never the whole RecordsDb:
// only the records component itself names RecordsDb by reference or pointer. The programs that
// open one hold it by std::unique_ptr and hand out roles.
bool TakesTheWholeRecordsDb(const std::string& line) {
  for (const char* form : {"RecordsDb&", "RecordsDb &", "RecordsDb*", "RecordsDb *"}) {
    if (line.find(form) != std::string::npos) return true;
  }
  return false;
}

TEST(Walls, RecordsClientsTakeTheirRoleNotTheWholeDatabase) {
  ASSERT_FALSE(SourceDir().empty()) << "TUNEFARM_SOURCE_DIR is set by CTest";
  EXPECT_TRUE(TakesTheWholeRecordsDb("Status MarkEndedTuneRuns(RecordsDb& db);")) << "the scan sees what it forbids";
  EXPECT_TRUE(TakesTheWholeRecordsDb("  std::vector<tuner::RecordsDb*> dbs;"));
  EXPECT_FALSE(TakesTheWholeRecordsDb("  std::unique_ptr<RecordsDb> db;"));
  const auto offenders =
      testing::LinesBreakingARule(SourceDir(), {"compiler", "tuner", "tools", "bench", "runtime", "service"},
                                  {"tuner/records/", "tuner/include/tunefarm/tuner/records.h"}, TakesTheWholeRecordsDb);
  EXPECT_TRUE(offenders.empty()) << "take a role of tunefarm/tuner/records_roles.h instead:\n" << Joined(offenders);
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

// Job states, tuners and schedulers are enums (tunefarm/tuner/tuning_kinds.h, tuner.proto): no
// code compares or sets their words; only the one table and the stored-JSON reader know them.
TEST(Walls, JobStatesTunersAndSchedulersAreEnums) {
  ASSERT_FALSE(SourceDir().empty()) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const char* words[] = {"\"queued\"", "\"running\"", "\"done\"", "\"failed\"",   "\"cancelled\"",
                         "\"xgb\"",    "\"ga\"",      "\"grid\"", "\"gradient\"", "\"round-robin\""};
  const auto offenders = testing::LinesBreakingARule(
      SourceDir(), {"tuner", "tools", "bench", "service"}, {"tuner/records/tuning_kinds.cc"},
      [&words](const std::string& line) {
        for (const char* w : words) {
          for (const char* op : {"== ", "!= ", "set_state(", "set_tuner(", "set_scheduler(", "state = "}) {
            if (line.find(std::string(op) + w) != std::string::npos) return true;
          }
        }
        return false;
      });
  EXPECT_TRUE(offenders.empty()) << "compare JobState/TunerKind/SchedulerKind values:\n" << Joined(offenders);
  std::ifstream proto(std::filesystem::path(SourceDir()) / "proto/tunefarm/v1/tuner.proto");
  ASSERT_TRUE(proto.good());
  std::string line;
  for (int n = 1; std::getline(proto, line); ++n) {
    for (const char* field : {"string state ", "string tuner ", "string scheduler "}) {
      EXPECT_EQ(line.find(field), std::string::npos) << "tuner.proto:" << n << ": " << line;
    }
  }
}

// Every mutex is tunefarm::Mutex (runtime/include/tunefarm/runtime/mutex.h), which clang's
// thread-safety analysis checks (scripts/check_style.sh), and each says what it guards: a file that
// declares one annotates a field or a function with it (RecursiveMutex alike).
TEST(Walls, EveryMutexIsAnnotatedWithWhatItGuards) {
  ASSERT_FALSE(SourceDir().empty()) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const std::vector<std::string> product = {"runtime",    "compiler", "service", "tracker",
                                            "rpc_server", "tuner",    "tools"};
  const auto std_mutexes = testing::LinesBreakingARule(
      SourceDir(), product, {"runtime/include/tunefarm/runtime/mutex.h"}, [](const std::string& line) {
        return line.find("std::mutex") != std::string::npos || line.find("std::shared_mutex") != std::string::npos ||
               line.find("std::condition_variable") != std::string::npos ||
               line.find("std::recursive_mutex") != std::string::npos;
      });
  EXPECT_TRUE(std_mutexes.empty()) << "use tunefarm::Mutex, MutexLock and CondVar:\n" << Joined(std_mutexes);

  // Files declaring a Mutex member "Mutex name_;" and the names they annotate with.
  std::map<std::string, std::set<std::string>> declared, used, says_guards_nothing;
  for (const std::string& dir : product) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(SourceDir()) / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      const std::string rel = std::filesystem::relative(e.path(), SourceDir()).string();
      if (rel == "runtime/include/tunefarm/runtime/mutex.h") continue;
      std::ifstream in(e.path());
      std::vector<std::string> lines;
      for (std::string line; std::getline(in, line);) lines.push_back(line);
      for (const std::string& line : lines) {
        const std::string name = MutexMemberName(line);
        if (!name.empty()) declared[rel].insert(name);
      }
      for (const std::string& line : lines) {
        for (const std::string& argument : AnnotationArguments(line)) used[rel].insert(argument);
        // A mutex that only orders a sleep against a wake-up says so: "mu_ guards no field".
        for (const std::string& name : declared[rel]) {
          if (line.find(name + " guards no field") != std::string::npos) says_guards_nothing[rel].insert(name);
        }
      }
    }
  }
  ASSERT_FALSE(declared.empty()) << "the scan found no Mutex at all";
  for (const auto& [file, names] : declared) {
    for (const std::string& name : names) {
      bool annotated = false;
      for (const std::string& u : used[file]) {  // "mu_", "&mu_", "job->mu_", "&JobManager::mu_"
        annotated = annotated || u == name ||
                    (u.size() > name.size() && u.compare(u.size() - name.size(), name.size(), name) == 0 &&
                     !std::isalnum(static_cast<unsigned char>(u[u.size() - name.size() - 1])) &&
                     u[u.size() - name.size() - 1] != '_');
      }
      annotated = annotated || says_guards_nothing[file].count(name);
      EXPECT_TRUE(annotated) << file << ": Mutex " << name << " guards nothing it names (GUARDED_BY/REQUIRES)";
    }
  }
}

// .clang-format's ColumnLimit, also where clang-format leaves a line alone (scripts/check_style.sh
// runs clang-format itself).
TEST(Walls, NoLineIsOver120Columns) {
  ASSERT_FALSE(SourceDir().empty()) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const auto offenders = testing::LinesBreakingARule(
      SourceDir(), {"runtime", "compiler", "service", "tracker", "rpc_server", "tuner", "tools", "bench", "tests"}, {},
      [](const std::string& line) {
        size_t columns = 0;  // UTF-8 code points: continuation bytes take no column
        for (unsigned char c : line) columns += (c & 0xC0) != 0x80;
        return columns > 120;
      });
  EXPECT_TRUE(offenders.empty()) << Joined(offenders);
}

}  // namespace
}  // namespace tunefarm::service
