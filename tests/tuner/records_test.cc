// The records database: schema and migrations, every trial kept, the best-config query's matching
// order (target, then device model, then a shared key), and import/export.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "tunefarm/tuner/records.h"

namespace tunefarm::tuner {
namespace {

class RecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "tunefarm_records_" + std::to_string(getpid()) + ".db";
    std::remove(path_.c_str());
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }
  TrialRecord Trial(const std::string& target, const std::string& model, const std::string& keys, int64_t config,
                    double ms, const std::string& status = "ok") {
    TrialRecord t;
    t.workload_key = "conv2d_nchwc|W";
    t.template_name = "conv2d_nchwc";
    t.flops = 1e9;
    t.target = target;
    t.target_model = model;
    t.target_keys = keys;
    t.config_index = config;
    t.status = status;
    t.mean_ms = ms;
    if (status != "ok") t.error_message = "boom";
    return t;
  }
  std::string path_;
};

TEST_F(RecordsTest, KeepsEveryTrialAndFindsTheBestByTargetThenModelThenKey) {
  auto db = RecordsDb::Open(path_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(*(*db)->SchemaVersion(), kRecordsSchemaVersion);
  std::vector<TrialRecord> trials = {
      Trial("llvm -mcpu=a", "", "cpu", 1, 3.0),          Trial("llvm -mcpu=a", "", "cpu", 2, 2.0),
      Trial("llvm -mcpu=a", "", "cpu", 3, 0.0, "timeout"), Trial("llvm -model=pi", "pi", "arm_cpu,cpu", 4, 1.0),
      Trial("llvm -mcpu=b", "", "gpu", 5, 0.5)};
  for (auto& t : trials) ASSERT_TRUE((*db)->AddTrial(&t).ok());
  EXPECT_EQ(*(*db)->CountTrials(), 5);  // failures are kept too

  std::string on;
  auto exact = (*db)->Best("conv2d_nchwc|W", {"llvm -mcpu=a", "", {"cpu"}}, &on);
  ASSERT_TRUE(exact.ok() && exact->has_value());
  EXPECT_EQ((*exact)->config_index, 2);  // the fastest ok trial; the failed one never wins
  EXPECT_EQ(on, "target");
  auto by_model = (*db)->Best("conv2d_nchwc|W", {"llvm -model=pi -mattr=+neon", "pi", {"arm_cpu", "cpu"}}, &on);
  ASSERT_TRUE(by_model.ok() && by_model->has_value());
  EXPECT_EQ((*by_model)->config_index, 4);
  EXPECT_EQ(on, "model");
  auto by_key = (*db)->Best("conv2d_nchwc|W", {"llvm -mcpu=c", "", {"cpu"}}, &on);
  ASSERT_TRUE(by_key.ok() && by_key->has_value());
  EXPECT_EQ((*by_key)->config_index, 4);  // fastest among targets sharing the key "cpu"
  EXPECT_EQ(on, "keys");
  auto none = (*db)->Best("conv2d_nchwc|W", {"cuda", "", {"cuda"}});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_F(RecordsTest, ExportImportRoundTripsAndRejectsMalformedLinesAtomically) {
  std::string exported;
  {
    auto db = RecordsDb::Open(path_, RecordsDb::Mode::kCreate);
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
  TearDown();
  auto db = RecordsDb::Open(path_, RecordsDb::Mode::kCreate);
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

TEST_F(RecordsTest, MustExistModeDoesNotCreate) {
  auto db = RecordsDb::Open(path_, RecordsDb::Mode::kMustExist);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("does not exist"), std::string::npos);
  FILE* f = std::fopen(path_.c_str(), "rb");
  EXPECT_EQ(f, nullptr);
  if (f) std::fclose(f);
}

// Hostile records (issue 15): a damaged schema version, import lines with unknown statuses or NUL
// bytes, and stored text that is not UTF-8 -- each an error naming the problem, nothing changed.
TEST_F(RecordsTest, NegativeSchemaVersionIsRefusedNotACrash) {
  { ASSERT_TRUE(RecordsDb::Open(path_, RecordsDb::Mode::kCreate).ok()); }
  ASSERT_EQ(system(("sqlite3 " + path_ + " 'PRAGMA user_version = -1'").c_str()), 0);
  auto db = RecordsDb::Open(path_, RecordsDb::Mode::kMustExist);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().message(),
            "records database " + path_ + " has schema version -1, which no tunefarm writes: its header is damaged");
}

TEST_F(RecordsTest, ImportRefusesUnknownStatusesNulBytesAndEmptyKeys) {
  auto db = RecordsDb::Open(path_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  const std::string good = R"({"workload":"w","target":"llvm","status":"ok","config_index":0,"mean_ms":1.0})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"workload":"w","target":"llvm","status":"fine","config_index":0})",
       "line 2: field 'status' is 'fine'; one of ok, instantiation_error, compile_error, runtime_error, timeout, "
       "wrong_answer, bad_request"},
      {R"({"workload":"w\u0000x","target":"llvm","status":"timeout","config_index":0})", "line 2: a text field holds a NUL byte"},
      {R"({"workload":"","target":"llvm","status":"timeout","config_index":0})",
       "line 2: fields 'workload' and 'target' must not be empty"},
      // Numbers outside what the fields hold (libFuzzer: 1e32 overflowed the integer cast).
      {R"({"workload":"w","target":"llvm","status":"ok","config_index":1e32,"mean_ms":1})",
       "line 2: field 'config_index' must be an integer in [0, 9007199254740992]"},
      {R"({"workload":"w","target":"llvm","status":"ok","config_index":0.5,"mean_ms":1})",
       "line 2: field 'config_index' must be an integer in [0, 9007199254740992]"},
      {R"({"workload":"w","target":"llvm","status":"ok","config_index":0,"threads":-3,"mean_ms":1})",
       "line 2: field 'threads' must be an integer in [0, 1048576]"},
      {R"({"workload":"w","target":"llvm","status":"ok","config_index":0,"mean_ms":-1})", "line 2: field 'mean_ms' must not be negative"},
      {R"({"workload":"w","target":"llvm","status":"ok","config_index":0,"mean_ms":1,"costs_ms":[1,-2]})",
       "line 2: field 'costs_ms' must hold non-negative numbers"},
  };
  for (const auto& [line, message] : cases) {
    std::istringstream in(good + "\n" + line + "\n");
    auto added = (*db)->ImportJsonLines(in);
    ASSERT_FALSE(added.ok()) << line;
    EXPECT_EQ(added.status().message(), message);
    EXPECT_EQ(*(*db)->CountTrials(), 0) << "all or nothing";
  }
  // The caller's own check (the CLI parses the target) rejects the same way.
  std::istringstream in(good + "\n");
  auto checked = (*db)->ImportJsonLines(in, [](const TrialRecord&) { return Status::InvalidArgument("bad target"); });
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.status().message(), "line 1: bad target");
}

TEST_F(RecordsTest, TextThatIsNotUtf8IsExportedNotThrownOn) {
  auto db = RecordsDb::Open(path_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  TrialRecord t = Trial("llvm", "", "cpu", 0, 0, "compile_error");
  t.error_message = "caf\xe9 \xff";  // Latin-1 from a compiler's message
  ASSERT_TRUE((*db)->AddTrial(&t).ok());
  std::ostringstream out;
  ASSERT_TRUE((*db)->ExportJsonLines(out).ok());
  EXPECT_NE(out.str().find("\"error_message\":\"caf\xef\xbf\xbd \xef\xbf\xbd\""), std::string::npos) << out.str();
}

}  // namespace
}  // namespace tunefarm::tuner
