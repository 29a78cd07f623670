// RecordsMaintenance, `tunefarm records`' role: export and import as JSON lines (all or nothing),
// check and salvage of a database the other commands refuse.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <sstream>

#include "common/postgres_server.h"
#include "common/records_fixtures.h"
#include "common/test_files.h"
#include "tuner/records/records_sql.h"

namespace tunefarm::tuner::records_test {

TEST_P(RecordsOnEachEngine, ExportImportRoundTripsAndRejectsMalformedLinesAtomically) {
  std::string exported;
  {
    auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
    ASSERT_TRUE(db.ok());
    for (int i = 0; i < 3; ++i) {
      TrialRecord t = Trial("llvm", "", "cpu", i, 1.0 + i);
      t.costs_ms = {1.0 + i, 1.1 + i};
      ASSERT_TRUE((*db)->AddTrial(&t).ok());
    }
    std::ostringstream out;
    ASSERT_TRUE((*db)->ExportJsonLines(out).ok());
    exported = out.str();
  }
  location_ = Fresh();
  auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  std::istringstream in(exported);
  auto added = (*db)->ImportJsonLines(in);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, 3);
  auto list = (*db)->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[2].costs_ms, (std::vector<double>{3.0, 3.1}));

  std::istringstream bad(exported + "{\"workload\": 3}\n");
  auto rejected = (*db)->ImportJsonLines(bad);
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.status().message().find("line 4: field 'workload' must be a string"), std::string::npos)
      << rejected.status().ToString();
  EXPECT_EQ(*(*db)->CountTrials(), 3);
}

// A file the other modes refuse opens for salvage without running anything in it: Check names each
// problem (the trigger, a trial import would refuse, a value over the limit) and Salvage keeps the
// trials that are sound, which a fresh database then takes (issue 30: `records check`/`repair`).
TEST_F(RecordsTest, CheckNamesWhatIsWrongAndSalvageKeepsTheSoundTrials) {
  AddTrials(3);
  ASSERT_EQ(
      system(("sqlite3 " + path_ +
              " \"UPDATE trials SET mean_ms = -1 WHERE config_index = 2; "
              "UPDATE trials SET error_message = replace(hex(zeroblob(5000000)), '0', 'x') WHERE config_index = 3; "
              "CREATE TRIGGER eat AFTER INSERT ON trials BEGIN DELETE FROM trials; END;\"")
                 .c_str()),
      0);
  ASSERT_FALSE(RecordsDb::Open(path_, RecordsDb::Mode::kReadOnly).ok());
  auto db = RecordsDb::Open(path_, RecordsDb::Mode::kSalvage);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto problems = (*db)->Check();
  ASSERT_TRUE(problems.ok()) << problems.status().ToString();
  EXPECT_EQ(*problems,
            (std::vector<std::string>{
                "trigger 'eat': SQL that would run inside tunefarm, which writes only tables and indexes (every "
                "other command refuses the file)",
                "trial 2: field 'mean_ms' must not be negative", "trial 3: string or blob too big"}));
  std::vector<std::string> skipped;
  auto kept = (*db)->Salvage(&skipped);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ((*kept)[0].config_index, 1);
  EXPECT_EQ(skipped.size(), 2u);
  const std::string fresh = path_ + ".repaired";
  std::remove(fresh.c_str());
  {
    auto to = RecordsDb::Open(fresh, RecordsDb::Mode::kCreate);
    ASSERT_TRUE(to.ok());
    EXPECT_EQ(*(*to)->AddTrials(*kept), 1);
    auto again = (*to)->Check();
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->empty());
  }
  EXPECT_EQ(*(*db)->CountTrials(), 3) << "the source is only read";
  std::remove(fresh.c_str());
}

TEST_P(RecordsOnEachEngine, ImportRefusesUnknownStatusesNulBytesAndEmptyKeys) {
  auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  const std::string good =
      R"({"workload":"w","template":"t","target":"llvm","status":"ok","config_index":0,"mean_ms":1.0})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"workload":"w","target":"llvm","status":"fine","config_index":0})",
       "line 2: field 'status' is 'fine'; one of ok, instantiation_error, compile_error, runtime_error, timeout, "
       "wrong_answer, bad_request"},
      {R"({"workload":"w\u0000x","target":"llvm","status":"timeout","config_index":0})",
       "line 2: a text field holds a NUL byte"},
      {R"({"workload":"","target":"llvm","status":"timeout","config_index":0})",
       "line 2: fields 'workload' and 'target' must not be empty"},
      // Numbers outside what the fields hold (libFuzzer: 1e32 overflowed the integer cast).
      {R"({"workload":"w","target":"llvm","status":"ok","config_index":1e32,"mean_ms":1})",
       "line 2: field 'config_index' must be an integer in [0, 9007199254740992]"},
      {R"({"workload":"w","target":"llvm","status":"ok","config_index":0.5,"mean_ms":1})",
       "line 2: field 'config_index' must be an integer in [0, 9007199254740992]"},
      {R"({"workload":"w","target":"llvm","status":"ok","config_index":0,"threads":-3,"mean_ms":1})",
       "line 2: field 'threads' must be an integer in [0, 1048576]"},
      {R"({"workload":"w","target":"llvm","status":"ok","config_index":0,"mean_ms":-1})",
       "line 2: field 'mean_ms' must not be negative"},
      {R"({"workload":"w","target":"llvm","status":"ok","config_index":0,"mean_ms":1,"costs_ms":[1,-2]})",
       "line 2: field 'costs_ms' must hold non-negative numbers"},
      // A trial is applied by its workload and implementation: a line must name both, unless its
      // key is one written before schema version 3, which began with the template.
      {R"({"workload":"dense|N1_I16|O8|NC|float32","target":"llvm","status":"ok","config_index":0,"mean_ms":1})",
       "line 2: missing field 'template' (the implementation of workload 'dense|N1_I16|O8|NC|float32', e.g. "
       "conv2d_nchwc)"},
  };
  for (const auto& [line, message] : cases) {
    std::istringstream in(good + "\n" + line + "\n");
    auto added = (*db)->ImportJsonLines(in);
    ASSERT_FALSE(added.ok()) << line;
    EXPECT_EQ(added.status().message(), message);
    EXPECT_EQ(*(*db)->CountTrials(), 0) << "all or nothing";
  }
  {  // A 20 MB line is refused once it passes 16 MiB, not held whole (issue 30).
    std::istringstream in(good + "\n{\"workload\":\"" + std::string(20 << 20, 'w') + "\"}\n");
    auto added = (*db)->ImportJsonLines(in);
    ASSERT_FALSE(added.ok());
    EXPECT_EQ(added.status().message(), "line 2 is over 16 MiB, which no trial is: nothing was imported");
    EXPECT_EQ(*(*db)->CountTrials(), 0);
  }
  // The caller's own check (the CLI parses the target) rejects the same way.
  std::istringstream in(good + "\n");
  auto checked = (*db)->ImportJsonLines(in, [](const TrialRecord&) { return Status::InvalidArgument("bad target"); });
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.status().message(), "line 1: bad target");
}

TEST_P(RecordsOnEachEngine, TextThatIsNotUtf8IsExportedNotThrownOn) {
  auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  TrialRecord t = Trial("llvm", "", "cpu", 0, 0, "compile_error");
  t.error_message = "caf\xe9 \xff";  // Latin-1 from a compiler's message
  ASSERT_TRUE((*db)->AddTrial(&t).ok());
  std::ostringstream out;
  ASSERT_TRUE((*db)->ExportJsonLines(out).ok());
  EXPECT_NE(out.str().find("\"error_message\":\"caf\xef\xbf\xbd \xef\xbf\xbd\""), std::string::npos) << out.str();
}

}  // namespace tunefarm::tuner::records_test
