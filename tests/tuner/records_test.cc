// The records database on each engine (SQLite, and a real PostgreSQL server the test starts):
// schema and migrations, every trial kept, the best-config query's matching order (target, then
// device model, then a shared key), import/export, and the claims that let several tuners share
// one database.
#include "tunefarm/tuner/records.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <sstream>

#include "common/postgres_server.h"
#include "common/test_files.h"
#include "tuner/records/records_sql.h"

namespace tunefarm::tuner {
namespace {

TrialRecord Trial(const std::string& target, const std::string& model, const std::string& keys, int64_t config,
                  double ms, const std::string& status = "ok") {
  TrialRecord t;
  t.workload_key = "conv2d|W";
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

// SQLite-only behaviour (the file, PRAGMA user_version).
class RecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "tunefarm_records_" + std::to_string(getpid()) + ".db";
    std::remove(path_.c_str());
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }
  // n trials of one workload, configs 1..n taking 2..n+1 ms, in a new database at path_.
  void AddTrials(int n) {
    auto db = RecordsDb::Open(path_, RecordsDb::Mode::kCreate);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    for (int c = 1; c <= n; ++c) {
      TrialRecord t = Trial("llvm -mcpu=a", "", "cpu", c, 1.0 + c);
      ASSERT_TRUE((*db)->AddTrial(&t).ok());
    }
  }
  std::string path_;
};

// What both engines must do alike. location_ is a fresh database; Fresh() makes another.
class RecordsOnEachEngine : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgresql") TUNEFARM_START_POSTGRES(server_);
    location_ = Fresh();
  }
  void TearDown() override {
    for (const auto& path : files_) {
      for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
    }
  }
  std::string Fresh() {
    const std::string name = "records_" + std::to_string(getpid()) + "_" + std::to_string(++count_);
    if (GetParam() == "postgresql") {
      std::string error;
      std::string url = server_.CreateDatabase(name, &error);
      EXPECT_FALSE(url.empty()) << error;
      return url;
    }
    files_.push_back(::testing::TempDir() + name + ".db");
    std::remove(files_.back().c_str());
    return files_.back();
  }
  testing::PostgresServer server_;
  std::string location_;
  std::vector<std::string> files_;
  int count_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Engines, RecordsOnEachEngine, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

TEST_P(RecordsOnEachEngine, KeepsEveryTrialAndFindsTheBestByTargetThenModelThenKey) {
  auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(*(*db)->SchemaVersion(), kRecordsSchemaVersion);
  std::vector<TrialRecord> trials = {Trial("llvm -mcpu=a", "", "cpu", 1, 3.0), Trial("llvm -mcpu=a", "", "cpu", 2, 2.0),
                                     Trial("llvm -mcpu=a", "", "cpu", 3, 0.0, "timeout"),
                                     Trial("llvm -model=pi", "pi", "arm_cpu,cpu", 4, 1.0),
                                     Trial("llvm -mcpu=b", "", "gpu", 5, 0.5)};
  for (auto& t : trials) ASSERT_TRUE((*db)->AddTrial(&t).ok());
  EXPECT_EQ(*(*db)->CountTrials(), 5);  // failures are kept too

  std::string on;
  auto exact = (*db)->Best("conv2d|W", "conv2d_nchwc", {"llvm -mcpu=a", "", {"cpu"}}, &on);
  ASSERT_TRUE(exact.ok() && exact->has_value());
  EXPECT_EQ((*exact)->config_index, 2);  // the fastest ok trial; the failed one never wins
  EXPECT_EQ(on, "target");
  auto by_model =
      (*db)->Best("conv2d|W", "conv2d_nchwc", {"llvm -model=pi -mattr=+neon", "pi", {"arm_cpu", "cpu"}}, &on);
  ASSERT_TRUE(by_model.ok() && by_model->has_value());
  EXPECT_EQ((*by_model)->config_index, 4);
  EXPECT_EQ(on, "model");
  auto by_key = (*db)->Best("conv2d|W", "conv2d_nchwc", {"llvm -mcpu=c", "", {"cpu"}}, &on);
  ASSERT_TRUE(by_key.ok() && by_key->has_value());
  EXPECT_EQ((*by_key)->config_index, 4);  // fastest among targets sharing the key "cpu"
  EXPECT_EQ(on, "keys");
  auto none = (*db)->Best("conv2d|W", "conv2d_nchwc", {"cuda", "", {"cuda"}});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

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

// The tuning lock beside a shared database is a place another user can plant a trap (issue 30):
// a symbolic link to a file of theirs or ours, a FIFO, a file of another user, a file that is not
// a lock. Each is refused naming it, and the file behind it is unchanged.
TEST_F(RecordsTest, TheTuningLockRefusesEveryTrapPlantedAtItsName) {
  const std::string lock = path_ + ".tuning-lock", victim = path_ + ".victim";
  auto cleanup = [&] {
    std::remove(lock.c_str());
    std::remove(victim.c_str());
  };
  cleanup();
  testing::WriteFile(victim, "precious\n");
  ASSERT_EQ(chmod(victim.c_str(), 0600), 0);
  auto refused = [&](const std::string& what) -> std::string {
    auto l = TuningLock::Acquire(path_, "tunefarm tune resnet-18");
    if (l.ok()) {
      ADD_FAILURE() << what << ": the lock was taken";
      return "";
    }
    EXPECT_EQ(l.status().code(), StatusCode::kFailedPrecondition) << what;
    EXPECT_EQ(l.status().message().rfind("the tuning lock " + lock + " ", 0), 0u) << l.status().message();
    EXPECT_EQ(testing::ReadFile(victim), "precious\n") << what;
    return l.status().message();
  };

  ASSERT_EQ(symlink(victim.c_str(), lock.c_str()), 0);
  EXPECT_NE(refused("symlink").find("is a symbolic link: refusing to follow it"), std::string::npos);
  std::remove(lock.c_str());
  ASSERT_EQ(symlink((path_ + ".dangling").c_str(), lock.c_str()), 0);  // would be created through
  EXPECT_NE(refused("dangling symlink").find("is a symbolic link"), std::string::npos);
  EXPECT_FALSE(testing::Exists(path_ + ".dangling"));
  std::remove(lock.c_str());

  ASSERT_EQ(mkfifo(lock.c_str(), 0644), 0);
  EXPECT_NE(refused("fifo").find("is not a regular file"), std::string::npos);
  std::remove(lock.c_str());

  testing::WriteFile(lock, "precious\n");
  EXPECT_NE(refused("not a lock").find("holds something other than a tuning lock: refusing to overwrite it"),
            std::string::npos);
  EXPECT_EQ(testing::ReadFile(lock), "precious\n");
  std::remove(lock.c_str());

  if (geteuid() == 0) {  // another user's file needs root to make; CI runs as root
    testing::WriteFile(lock, "");
    ASSERT_EQ(chown(lock.c_str(), 65534, 65534), 0);
    EXPECT_NE(refused("other owner").find("belongs to user 65534, not to you"), std::string::npos);
    std::remove(lock.c_str());
  } else if (testing::FixturesRequired()) {
    ADD_FAILURE() << "the other-owner case needs root (TUNEFARM_REQUIRE_FIXTURES=1)";
  }

  // And the lock itself: made, says who holds it, and a second taker is told who.
  {
    auto held = TuningLock::Acquire(path_, "tunefarm tune resnet-18");
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    EXPECT_EQ(testing::ReadFile(lock), "pid " + std::to_string(getpid()) + ": tunefarm tune resnet-18\n");
    auto second = TuningLock::Acquire(path_, "tuner-daemon");
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().message().find("is being tuned by another process (pid " + std::to_string(getpid()) +
                                             ": tunefarm tune resnet-18)"),
              std::string::npos)
        << second.status().message();
  }
  auto again = TuningLock::Acquire(path_, "tuner-daemon");  // released with its holder
  EXPECT_TRUE(again.ok()) << again.status().ToString();
  cleanup();
}

// SQL stored in a records database never runs inside tunefarm (issue 30): a trigger that deletes
// trials, a view named `trials` over an endless recursive query, each refused on open by name in
// every mode -- promptly, with every trial still there -- and a 20 MB text field is an error, not a
// 20 MB allocation per copy.
TEST_F(RecordsTest, ARecordsDatabaseCannotRunItsAuthorsSql) {
  auto fill = [&] {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
    auto db = RecordsDb::Open(path_, RecordsDb::Mode::kCreate);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    for (int c = 1; c <= 3; ++c) {
      TrialRecord t = Trial("llvm -mcpu=a", "", "cpu", c, 1.0 + c);
      ASSERT_TRUE((*db)->AddTrial(&t).ok());
    }
  };
  auto sql = [&](const std::string& statements) {
    ASSERT_EQ(system(("sqlite3 " + path_ + " \"" + statements + "\"").c_str()), 0) << statements;
  };
  auto refused_everywhere = [&](const std::string& what) {
    for (auto mode : {RecordsDb::Mode::kCreate, RecordsDb::Mode::kMustExist, RecordsDb::Mode::kReadOnly}) {
      const auto start = std::chrono::steady_clock::now();
      auto db = RecordsDb::Open(path_, mode);
      ASSERT_FALSE(db.ok()) << what;
      EXPECT_EQ(db.status().code(), StatusCode::kFailedPrecondition);
      EXPECT_EQ(db.status().message(),
                "records database " + path_ + " holds " + what +
                    ": SQL that would run inside tunefarm, which writes only tables and indexes; "
                    "refusing to open it (`tunefarm records check` lists what is wrong; "
                    "`tunefarm records repair` copies the trials into a new database without it)");
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    }
  };

  fill();
  sql("CREATE TRIGGER eat AFTER INSERT ON trials BEGIN DELETE FROM trials WHERE id <> NEW.id; END;");
  refused_everywhere("trigger 'eat'");
  sql("DROP TRIGGER eat;");
  {
    auto db = RecordsDb::Open(path_, RecordsDb::Mode::kMustExist);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ(*(*db)->CountTrials(), 3);
  }

  fill();
  sql("ALTER TABLE trials RENAME TO real_trials; CREATE VIEW trials AS WITH RECURSIVE n(i) AS "
      "(SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT * FROM real_trials, n;");
  // Renaming the table moved tunefarm's indexes onto it: they are not tunefarm's any more either.
  refused_everywhere("view 'trials', index 'trials_by_job', index 'trials_by_workload_target'");

  // Generated columns and CHECK constraints run SQL on every read or write (issue 46, P17).
  fill();
  sql("ALTER TABLE trials ADD COLUMN evil AS (length(hex(zeroblob(100000000))));");
  refused_everywhere("generated column 'trials.evil'");
  fill();
  sql("CREATE INDEX evil ON trials(length(hex(zeroblob(100000000))));");
  refused_everywhere("index 'evil'");
  fill();
  sql("CREATE TABLE stamps (x INTEGER DEFAULT (length(hex(zeroblob(100000000)))));");
  refused_everywhere("default expression of column 'stamps.x'");
  fill();
  sql("CREATE TABLE guard (x INTEGER CHECK (length(hex(zeroblob(100000000))) > 0));");
  refused_everywhere("check constraint in table 'guard'");
  {
    auto salvage = RecordsDb::Open(path_, RecordsDb::Mode::kSalvage);
    ASSERT_TRUE(salvage.ok()) << salvage.status().ToString();
    auto problems = (*salvage)->Check();
    ASSERT_TRUE(problems.ok());
    ASSERT_FALSE(problems->empty());
    EXPECT_EQ((*problems)[0].rfind("check constraint in table 'guard': SQL that would run inside tunefarm", 0), 0u)
        << (*problems)[0];
  }

  fill();
  sql("UPDATE trials SET error_message = replace(hex(zeroblob(10000000)), '0', 'x') WHERE config_index = 2;");
  auto db = RecordsDb::Open(path_, RecordsDb::Mode::kReadOnly);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto all = (*db)->List();
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.status().message().find("string or blob too big"), std::string::npos) << all.status().ToString();
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

// A time no measurement gives (negative, zero, infinite), written into the file by hand, is never
// applied: the best config stays the fastest real one (issue 30).
TEST_F(RecordsTest, TimesNoMeasurementGivesAreNeverTheBest) {
  AddTrials(5);
  ASSERT_EQ(system(("sqlite3 " + path_ +
                    " \"UPDATE trials SET mean_ms = -1 WHERE config_index = 2; "
                    "UPDATE trials SET mean_ms = 0 WHERE config_index = 3; "
                    "UPDATE trials SET mean_ms = 9e999 WHERE config_index = 4; "
                    "UPDATE trials SET mean_ms = 5e-324 WHERE config_index = 5;\"")
                       .c_str()),
            0);
  auto db = RecordsDb::Open(path_, RecordsDb::Mode::kReadOnly);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto best = (*db)->Best("conv2d|W", "conv2d_nchwc", {"llvm -mcpu=a", "", {"cpu"}});
  ASSERT_TRUE(best.ok() && best->has_value()) << best.status().ToString();
  EXPECT_EQ((*best)->config_index, 1);
  EXPECT_DOUBLE_EQ((*best)->mean_ms, 2.0);
  auto stats = (*db)->TaskStatsOf();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->size(), 1u);
  EXPECT_DOUBLE_EQ((*stats)[0].best_ms, 2.0);
  EXPECT_EQ(*(*db)->CountTrials(), 5);                                              // still listed as stored
  EXPECT_EQ(*(*db)->CountUnusable("conv2d|W", "conv2d_nchwc", "llvm -mcpu=a"), 4);  // what readers report
  EXPECT_EQ(*(*db)->CountUnusable("conv2d|W", "conv2d_nchwc", "llvm -mcpu=b"), 0);
}

// Readers never write the file they are pointed at (issue 30): an empty file or one reached
// through a symbolic link gets no schema, an older schema is not upgraded, and a FIFO is refused
// at once instead of blocking the open forever.
TEST_F(RecordsTest, ReadersNeverWriteAndRefuseWhatIsNotAFile) {
  const std::string empty = path_ + ".empty", link = path_ + ".link", fifo = path_ + ".fifo";
  std::remove(empty.c_str());
  std::remove(link.c_str());
  std::remove(fifo.c_str());
  std::fclose(std::fopen(empty.c_str(), "wb"));
  ASSERT_EQ(symlink(empty.c_str(), link.c_str()), 0);
  for (const std::string& path : {empty, link}) {
    auto db = RecordsDb::Open(path, RecordsDb::Mode::kReadOnly);
    ASSERT_FALSE(db.ok()) << path;
    EXPECT_EQ(db.status().code(), StatusCode::kNotFound);
    EXPECT_EQ(db.status().message(),
              "records database " + path +
                  " holds no tunefarm records (an empty or foreign SQLite file); readers never write "
                  "it: tune into it or `tunefarm records import` first");
    struct stat st;
    ASSERT_EQ(stat(empty.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 0) << "a reader wrote a schema into " << path;
  }

  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (auto mode : {RecordsDb::Mode::kCreate, RecordsDb::Mode::kMustExist, RecordsDb::Mode::kReadOnly}) {
    const auto start = std::chrono::steady_clock::now();
    auto db = RecordsDb::Open(fifo, mode);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().message(),
              "records database " + fifo + " is a FIFO, not a regular file: give the path of an SQLite records file");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  }

  {
    auto db = RecordsDb::Open(path_, RecordsDb::Mode::kCreate);
    ASSERT_TRUE(db.ok());
  }
  ASSERT_EQ(system(("sqlite3 " + path_ + " 'PRAGMA user_version = 1'").c_str()), 0);
  auto older = RecordsDb::Open(path_, RecordsDb::Mode::kReadOnly);
  ASSERT_FALSE(older.ok());
  EXPECT_EQ(older.status().message(),
            "records database " + path_ +
                " has schema version 1 and this tunefarm reads version 3; readers never write "
                "it: a writing command (tunefarm tune, records import, tuner-daemon) upgrades it, "
                "keeping its trials");
  std::remove(empty.c_str());
  std::remove(link.c_str());
  std::remove(fifo.c_str());
}

// Writers open no database through a link planted at its path or at its -wal, -shm or -journal
// file (issue 46, P10 and P16): the link is named, and what it points to is unchanged.
TEST_F(RecordsTest, WritersRefuseLinksAtTheDatabaseAndItsSideFiles) {
  const std::string target = path_ + ".victim", link = path_ + ".planted";
  std::remove(target.c_str());
  std::remove(link.c_str());
  std::fclose(std::fopen(target.c_str(), "wb"));
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  for (auto mode : {RecordsDb::Mode::kCreate, RecordsDb::Mode::kMustExist}) {
    auto db = RecordsDb::Open(link, mode);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().message(), "records database " + link + ": " + link +
                                         " is a symbolic link: tunefarm writes a database and its -wal, -shm and "
                                         "-journal files only at their own paths; refusing to follow it");
  }
  struct stat st;
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0) << "a writer wrote through the planted link";
  {
    auto db = RecordsDb::Open(path_, RecordsDb::Mode::kCreate);
    ASSERT_TRUE(db.ok());
  }
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const std::string side = path_ + suffix;
    std::remove(side.c_str());
    ASSERT_EQ(symlink(target.c_str(), side.c_str()), 0);
    for (auto mode : {RecordsDb::Mode::kCreate, RecordsDb::Mode::kReadOnly}) {
      auto db = RecordsDb::Open(path_, mode);
      ASSERT_FALSE(db.ok()) << suffix;
      EXPECT_NE(db.status().message().find(side + " is a symbolic link"), std::string::npos) << db.status().message();
    }
    std::remove(side.c_str());
  }
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  std::remove(target.c_str());
  std::remove(link.c_str());
  // A link among the folders on the way (a symlinked home or data directory) is the user's own path:
  // writers open the database there.
  const std::string real_dir = path_ + ".dir", linked_dir = path_ + ".dirlink";
  ASSERT_EQ(system(("rm -rf " + real_dir + " " + linked_dir + " && mkdir " + real_dir).c_str()), 0);
  ASSERT_EQ(symlink(real_dir.c_str(), linked_dir.c_str()), 0);
  {
    auto db = RecordsDb::Open(linked_dir + "/r.db", RecordsDb::Mode::kCreate);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ((*db)->location(), linked_dir + "/r.db");
  }
  EXPECT_EQ(stat((real_dir + "/r.db").c_str(), &st), 0);
  ASSERT_EQ(system(("rm -rf " + real_dir + " " + linked_dir).c_str()), 0);
}

// Another program's SQLite file is not filled with tunefarm's tables (issue 46, P10).
TEST_F(RecordsTest, WritersRefuseAnotherProgramsDatabase) {
  const std::string other = path_ + ".other_app";
  std::remove(other.c_str());
  ASSERT_EQ(system(("sqlite3 " + other + " 'CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES (1);'").c_str()),
            0);
  const std::string before = tunefarm::testing::ReadFile(other);
  for (auto mode : {RecordsDb::Mode::kCreate, RecordsDb::Mode::kMustExist}) {
    auto db = RecordsDb::Open(other, mode);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().message(),
              "records database " + other +
                  " is another program's SQLite database (it holds 1 table(s), none of them tunefarm's): "
                  "tunefarm makes its records only in a new or empty file; give another path");
  }
  EXPECT_EQ(tunefarm::testing::ReadFile(other), before);
  std::remove(other.c_str());
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

TEST_P(RecordsOnEachEngine, ClaimsGiveEachConfigToOneTunerUntilItsTrialOrItsExpiry) {
  auto a = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  auto b = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);  // a second tuner's connection
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString();
  const TrialRecord task = Trial("llvm", "", "cpu", 0, 1.0);
  const int64_t minute = 60000;
  EXPECT_EQ(*(*a)->Claim(task, {1, 2, 3}, "A", minute), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(*(*b)->Claim(task, {2, 3, 4}, "B", minute), (std::vector<int64_t>{4}));  // A holds 2 and 3
  TrialRecord two = Trial("llvm", "", "cpu", 2, 1.5);
  ASSERT_TRUE((*a)->AddTrial(&two, "A").ok());
  EXPECT_TRUE((*b)->Claim(task, {2}, "B", minute)->empty()) << "measured: never again";
  // A holder that died: its claim lapses, and only then another may take the config.
  EXPECT_EQ(*(*a)->Claim(task, {5}, "A", -1), (std::vector<int64_t>{5}));
  EXPECT_EQ(*(*b)->Claim(task, {5}, "B", minute), (std::vector<int64_t>{5}));
  // A failure a tuner decided to measure again, up to the trial it saw: once.
  EXPECT_EQ(*(*b)->Claim(task, {2}, "B", minute, {{2, two.id}}), (std::vector<int64_t>{2}));
  EXPECT_TRUE((*a)->Claim(task, {2}, "A", minute, {{2, two.id}})->empty()) << "B measures it now";
  // Claims come back in ascending order, each once, whatever order the search proposed.
  EXPECT_EQ(*(*a)->Claim(task, {9, 7, 9, 8}, "A", minute), (std::vector<int64_t>{7, 8, 9}));
  // What the other tuner recorded since a given trial.
  TrialRecord four = Trial("llvm", "", "cpu", 4, 0.5);
  ASSERT_TRUE((*b)->AddTrial(&four, "B").ok());
  auto fresh = (*a)->TrialsOfTaskAfter(task.workload_key, task.template_name, "llvm", two.id);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  ASSERT_EQ(fresh->size(), 1u);
  EXPECT_EQ((*fresh)[0].config_index, 4);
  EXPECT_FALSE((*fresh)[0].created_at.empty());
  EXPECT_EQ(four.created_at, (*fresh)[0].created_at);
}

// A tuner killed mid-batch leaves claims without trials. On PostgreSQL its holder's session lock
// is gone with it, so the next tuner releases them; while it lives they stay its. On SQLite one
// tuning process at a time holds the file (TuningLock): every other holder's open claim is dead.
TEST_P(RecordsOnEachEngine, ClaimsOfATunerThatDiedAreReleasedAndALiveOnesAreKept) {
  auto a = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  auto b = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(a.ok() && b.ok());
  const TrialRecord task = Trial("llvm", "", "cpu", 0, 1.0);
  const int64_t day = 24LL * 3600 * 1000;
  ASSERT_TRUE((*a)->HoldClaimHolder("A").ok());
  ASSERT_TRUE((*b)->HoldClaimHolder("B").ok());
  EXPECT_EQ(*(*a)->Claim(task, {1, 2}, "A", day), (std::vector<int64_t>{1, 2}));
  if (GetParam() == "postgresql") {
    ASSERT_TRUE((*b)->ReleaseDeadClaims("B").ok());
    EXPECT_TRUE((*b)->Claim(task, {1}, "B", day)->empty()) << "A is alive: its claims stay";
  }
  a->reset();  // A dies (its session ends moments after its connection)
  std::vector<int64_t> taken;
  for (int i = 0; i < 100 && taken.empty(); ++i) {
    ASSERT_TRUE((*b)->ReleaseDeadClaims("B").ok());
    taken = *(*b)->Claim(task, {1}, "B", day);
    if (taken.empty()) usleep(50000);
  }
  EXPECT_EQ(taken, (std::vector<int64_t>{1}));
  // A batch that failed half-way gives its claims back.
  ASSERT_TRUE((*b)->ReleaseClaims(task, {1}, "B").ok());
  auto c = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*(*c)->Claim(task, {1, 2}, "C", day), (std::vector<int64_t>{1, 2}));
}

TEST_P(RecordsOnEachEngine, JobsKeepTheirDaemonAndAnUpdateOfAMissingJobIsNotFound) {
  auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  auto id = (*db)->AddJob("{\"model\":\"resnet-18\"}", "daemon-a");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE((*db)->UpdateJob(*id, JobState::kRunning, "{\"trials_done\":3}").ok());
  auto job = (*db)->GetJob(*id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, "running");
  EXPECT_EQ(job->daemon, "daemon-a");
  EXPECT_EQ(job->progress_json, "{\"trials_done\":3}");
  auto missing = (*db)->UpdateJob(*id + 100, JobState::kDone, "{}");
  EXPECT_EQ(missing.message(), "no job " + std::to_string(*id + 100) + " in " + (*db)->location());
}

TEST_P(RecordsOnEachEngine, ReadOnlyReadersNeverWrite) {
  {
    auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
    ASSERT_TRUE(db.ok());
    TrialRecord t = Trial("llvm", "", "cpu", 1, 1.0);
    ASSERT_TRUE((*db)->AddTrial(&t).ok());
  }
  auto reader = RecordsDb::Open(location_, RecordsDb::Mode::kReadOnly);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ(*(*reader)->CountTrials(), 1);
  TrialRecord t = Trial("llvm", "", "cpu", 2, 1.0);
  EXPECT_FALSE((*reader)->AddTrial(&t).ok());
  EXPECT_EQ(*(*reader)->CountTrials(), 1);
}

// A value over the 8 MiB limit is one clear error on either engine and nothing stored is lost
// (issue 30): SQLite refuses to store it; what a PostgreSQL server returns is checked row by row as
// it is read, since another client of the server may have written it.
TEST_P(RecordsOnEachEngine, AValueOverTheLimitIsOneErrorAndKeepsTheRest) {
  auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  TrialRecord small = Trial("llvm", "", "cpu", 1, 1.0);
  ASSERT_TRUE((*db)->AddTrial(&small).ok());
  TrialRecord big = Trial("llvm", "", "cpu", 2, 0.0, "runtime_error");
  big.error_message = std::string(9 << 20, 'x');
  Status write = (*db)->AddTrial(&big);
  if (GetParam() == "sqlite") {
    ASSERT_FALSE(write.ok());
    EXPECT_NE(write.message().find("string or blob too big"), std::string::npos) << write.ToString();
  } else {
    ASSERT_TRUE(write.ok()) << write.ToString();  // the server takes it: the reader must not
    auto all = (*db)->List();
    ASSERT_FALSE(all.ok());
    EXPECT_NE(
        all.status().message().find("column 'error_message' of a row holds 9437184 bytes, over the 8 MiB a records "
                                    "value may hold"),
        std::string::npos)
        << all.status().ToString();
  }
  auto best = (*db)->Best("conv2d|W", "conv2d_nchwc", {"llvm", "", {"cpu"}});
  ASSERT_TRUE(best.ok() && best->has_value()) << best.status().ToString();
  EXPECT_EQ((*best)->config_index, 1);
}

// The dashboard's read side and transfer learning's query, the same answers on both engines.
TEST_P(RecordsOnEachEngine, AggregatesStreamsAndErrorGroupsAgree) {
  auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  auto job = (*db)->AddJob("{}", "d");
  ASSERT_TRUE(job.ok());
  std::vector<TrialRecord> trials = {
      Trial("llvm", "", "cpu", 1, 3.0), Trial("llvm", "", "cpu", 2, 2.0), Trial("llvm", "", "cpu", 3, 0, "timeout"),
      Trial("llvm", "", "cpu", 4, 0, "timeout"), Trial("llvm -mcpu=b", "", "cpu", 5, 1.0)};
  trials[1].job_id = *job;
  TrialRecord other = Trial("llvm", "", "cpu", 9, 4.0);
  other.workload_key = "conv2d|V";
  trials.push_back(other);
  for (auto& t : trials) ASSERT_TRUE((*db)->AddTrial(&t).ok());

  auto stats = (*db)->TaskStatsOf();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->size(), 3u);  // W on llvm, W on llvm -mcpu=b, V on llvm
  EXPECT_EQ((*stats)[0].trials, 4);
  EXPECT_EQ((*stats)[0].ok_trials, 2);
  EXPECT_DOUBLE_EQ((*stats)[0].best_ms, 2.0);
  EXPECT_EQ((*stats)[0].best_trial_id, trials[1].id);
  EXPECT_EQ((*stats)[0].last_trial_id, trials[3].id);
  auto of_job = (*db)->TaskStatsOf(*job);
  ASSERT_TRUE(of_job.ok());
  ASSERT_EQ(of_job->size(), 1u);
  EXPECT_EQ((*of_job)[0].trials, 1);
  EXPECT_EQ(*(*db)->CountTrialsOfJob(*job), 1);
  EXPECT_EQ(*(*db)->CountTrialsOfJob(0), 5);

  auto rows = (*db)->FindWorkloads("conv2d|W");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  const WorkloadInfo* w = &rows->front();
  auto after = (*db)->TrialsAfter(trials[1].id, w->id, 10);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_EQ(after->size(), 3u);
  EXPECT_EQ((*after)[0].status, "timeout");
  EXPECT_EQ((*after)[0].mean_ms, 0.0);
  EXPECT_EQ((*db)->TrialsAfter(0, 0, 100)->size(), 6u);
  auto groups = (*db)->ErrorGroups(0, 10);
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_EQ((*groups)[0].count, 2);
  EXPECT_EQ((*groups)[0].last_trial_id, trials[3].id);
  EXPECT_EQ((*db)->RecentFailures(1)->at(0).id, trials[3].id);
  auto fastest = (*db)->FastestTrials(w->id, 2);
  ASSERT_TRUE(fastest.ok());
  ASSERT_EQ(fastest->size(), 2u);
  EXPECT_EQ((*fastest)[0].config_index, 5);
  EXPECT_EQ((*fastest)[1].config_index, 2);
  EXPECT_EQ((*db)->Workloads()->size(), 2u);
  EXPECT_EQ((*db)->Targets()->size(), 2u);
  EXPECT_EQ(*(*db)->LastTrialId(), trials.back().id);
  auto similar = (*db)->ListSimilar("conv2d_nchwc", "llvm", "conv2d|W", 10);
  ASSERT_TRUE(similar.ok());
  ASSERT_EQ(similar->size(), 1u);
  EXPECT_EQ((*similar)[0].config_index, 9);
  EXPECT_EQ((*db)->GetWorkload(w->id + 100).status().message(),
            "no task " + std::to_string(w->id + 100) + " in " + (*db)->location());
}

// A trial that commits after one with a higher id (PostgreSQL ids come at insert) is still taken
// in once; what falls below the window is not offered twice either.
TEST(NewTrials, TakesInALateCommitOnceAndEveryTrialOnce) {
  NewTrials seen;
  EXPECT_EQ(seen.ReadFrom(), 0);
  for (int64_t id = 1; id <= 3000; ++id) {
    if (id == 2500) continue;  // in flight while later ones commit
    EXPECT_TRUE(seen.First(id));
  }
  EXPECT_EQ(seen.ReadFrom(), 3000 - NewTrials::kWindow);
  EXPECT_FALSE(seen.First(2999)) << "seen already";
  EXPECT_TRUE(seen.First(2500)) << "committed late, inside the window";
  EXPECT_FALSE(seen.First(2500));
  EXPECT_FALSE(seen.First(100)) << "below the window: read long ago";
}

// PostgreSQL only: what a user gets wrong in a URL, and two daemons of one name.
class PostgresRecordsTest : public ::testing::Test {};

TEST_F(PostgresRecordsTest, ErrorsNameTheDatabaseWithoutItsPassword) {
  EXPECT_TRUE(IsPostgresRecords("postgresql://u@h/db"));
  EXPECT_TRUE(IsPostgresRecords("host=db dbname=records"));
  EXPECT_FALSE(IsPostgresRecords("./tunefarm.db"));
  EXPECT_FALSE(IsPostgresRecords("/var/lib/tunefarm/a=b.db"));
  auto refused = RecordsDb::Open("postgresql://tuner:secret@127.0.0.1:1/records", RecordsDb::Mode::kCreate);
  ASSERT_FALSE(refused.ok());
  const std::string msg = refused.status().message();
  EXPECT_EQ(msg.rfind("cannot connect to records database postgresql://tuner@127.0.0.1:1/records: ", 0), 0u) << msg;
  EXPECT_EQ(msg.find("secret"), std::string::npos) << msg;
  EXPECT_EQ(DisplayRecordsLocation("postgresql://tuner:secret@db:5433/records"), "postgresql://tuner@db:5433/records");
  // libpq's parse error quotes what it stumbled on, a password here: only the expected form is shown.
  auto garbled = RecordsDb::Open("postgresql://tuner:50%zz@db/records", RecordsDb::Mode::kCreate);
  ASSERT_FALSE(garbled.ok());
  EXPECT_EQ(
      garbled.status().message(),
      "records database: not a valid PostgreSQL URL or keyword string (postgresql://USER[:PASSWORD]@HOST[:PORT]/DB, "
      "or key=value pairs such as host=HOST dbname=DB user=USER)");
}

TEST_F(PostgresRecordsTest, ADaemonNameIsHeldByOneProcessAtATime) {
  testing::PostgresServer server;
  TUNEFARM_START_POSTGRES(server);
  std::string error;
  const std::string url = server.CreateDatabase("daemons", &error);
  ASSERT_FALSE(url.empty()) << error;
  auto first = RecordsDb::Open(url, RecordsDb::Mode::kCreate);
  auto second = RecordsDb::Open(url, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE((*first)->LockDaemonName("tuner-daemon").ok());
  EXPECT_TRUE((*second)->LockDaemonName("gpu-daemon").ok());
  Status taken = (*second)->LockDaemonName("tuner-daemon");
  EXPECT_EQ(taken.message(), "records database " + (*second)->location() +
                                 " is in use by another tuner-daemon named 'tuner-daemon'; give each daemon sharing a "
                                 "database its own --name");
  first->reset();  // the holder exits: its lock goes with its session (the server ends it soon after)
  bool taken_over = false;
  for (int i = 0; i < 100 && !taken_over; ++i) {
    taken_over = (*second)->LockDaemonName("tuner-daemon").ok();
    if (!taken_over) usleep(50000);
  }
  EXPECT_TRUE(taken_over);
}

// The server restarts under a long-lived connection (a daemon's): the statement that meets the cut
// fails, the next reconnects, with the session's locks taken again.
TEST_F(PostgresRecordsTest, AConnectionCutByAServerRestartIsReestablishedWithItsLocks) {
  testing::PostgresServer server;
  TUNEFARM_START_POSTGRES(server);
  std::string error;
  const std::string url = server.CreateDatabase("restart", &error);
  ASSERT_FALSE(url.empty()) << error;
  auto db = RecordsDb::Open(url, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->LockDaemonName("tuner-daemon").ok());
  TrialRecord first = Trial("llvm", "", "cpu", 1, 1.0);
  ASSERT_TRUE((*db)->AddTrial(&first).ok());
  ASSERT_TRUE(server.Restart(&error)) << error;
  TrialRecord second = Trial("llvm", "", "cpu", 2, 1.0);
  Status s = (*db)->AddTrial(&second);  // its BEGIN meets the cut, reconnects and starts again
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(*(*db)->CountTrials(), 2);
  auto twin = RecordsDb::Open(url, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(twin.ok());
  EXPECT_EQ((*twin)->LockDaemonName("tuner-daemon").code(), StatusCode::kFailedPrecondition)
      << "the name was taken again";
}

TEST_F(RecordsTest, AVersionOneDatabaseIsUpgradedKeepingItsTrials) {
  const std::string v1 =
      "CREATE TABLE workloads (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, template TEXT NOT NULL, flops REAL "
      "NOT NULL DEFAULT 0);"
      "CREATE TABLE targets (id INTEGER PRIMARY KEY, target TEXT NOT NULL UNIQUE, model TEXT NOT NULL DEFAULT '', keys "
      "TEXT NOT NULL DEFAULT '');"
      "CREATE TABLE jobs (id INTEGER PRIMARY KEY, spec TEXT NOT NULL, state TEXT NOT NULL, progress TEXT NOT NULL "
      "DEFAULT '{}',"
      " created_at TEXT NOT NULL DEFAULT '', updated_at TEXT NOT NULL DEFAULT '');"
      "CREATE TABLE trials (id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, workload_id INTEGER NOT NULL, target_id "
      "INTEGER NOT NULL,"
      " config_index INTEGER NOT NULL, config_json TEXT NOT NULL DEFAULT '', status TEXT NOT NULL, error_message TEXT "
      "NOT NULL DEFAULT '',"
      " costs_ms TEXT NOT NULL DEFAULT '[]', mean_ms REAL, threads INTEGER NOT NULL DEFAULT 1, device_key TEXT NOT "
      "NULL DEFAULT '',"
      " device_info TEXT NOT NULL DEFAULT '', build_ms REAL NOT NULL DEFAULT 0, run_ms REAL NOT NULL DEFAULT 0, job_id "
      "INTEGER,"
      " created_at TEXT NOT NULL DEFAULT '');"
      "INSERT INTO workloads VALUES (1, 'conv2d_nchwc|N1_C8_H8_W8|K8_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32', "
      "'conv2d_nchwc', 1e9);"
      "INSERT INTO targets VALUES (1, 'llvm', '', 'cpu');"
      "INSERT INTO trials(uid, workload_id, target_id, config_index, status, mean_ms) VALUES ('u1', 1, 1, 7, 'ok', "
      "2.5);"
      "INSERT INTO jobs(spec, state) VALUES ('{}', 'running'); PRAGMA user_version = 1;";
  ASSERT_EQ(system(("sqlite3 " + path_ + " \"" + v1 + "\"").c_str()), 0);
  auto db = RecordsDb::Open(path_, RecordsDb::Mode::kMustExist);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(*(*db)->SchemaVersion(), kRecordsSchemaVersion);
  auto best = (*db)->Best("conv2d|N1_C8_H8_W8|K8_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32", "conv2d_nchwc",
                          {"llvm", "", {"cpu"}});
  ASSERT_TRUE(best.ok() && best->has_value());
  EXPECT_EQ((*best)->config_index, 7);
  EXPECT_EQ((*db)->ListJobs()->at(0).daemon, "");  // a job from before daemons had names
  EXPECT_EQ(*(*db)->Claim(Trial("llvm", "", "cpu", 0, 1), {8}, "A", 1000), (std::vector<int64_t>{8}));
}

// Schema version 3 made workload keys target-neutral: a database of version 2, whose keys began
// with their implementation, is upgraded in place on either engine -- every key converted, every
// trial kept and still applied by its (workload, implementation), claims of merged rows dropped.
TEST_P(RecordsOnEachEngine, AVersionTwoDatabaseGetsTargetNeutralKeysAndKeepsEveryTrial) {
  const bool postgres = GetParam() == "postgresql";
  std::string sql;
  for (size_t v = 0; v < 2; ++v) sql += postgres ? Migrations()[v].postgres : Migrations()[v].sqlite;
  const std::string conv = "|N1_C8_H8_W8|K8_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32";
  sql +=
      "INSERT INTO workloads(id, key, template, flops) VALUES"
      " (1, 'conv2d_nchwc" +
      conv +
      "', 'conv2d_nchwc', 1e9),"
      " (2, 'conv2d_nchwc_winograd" +
      conv +
      "', 'conv2d_nchwc_winograd', 1e9),"
      " (3, 'dense_pack|N1_I16|O8|NC|float32', 'dense_pack', 256),"
      " (4, 'batch_matmul|B2_M3_K4|N5|BMN|float32', 'batch_matmul', 120),"
      " (5, 'odd|thing', 'x', 1),"
      // Never written by tunefarm (its first field is not its template): kept as it is, and
      // then the same (key, template) as row 1's converted key, so the two rows merge.
      " (6, 'conv2d" +
      conv +
      "', 'conv2d_nchwc', 1e9);"
      "INSERT INTO targets(id, target, model, keys) VALUES (1, 'llvm', '', 'cpu');"
      "INSERT INTO trials(id, uid, workload_id, target_id, config_index, status, mean_ms) VALUES"
      " (1, 'u1', 1, 1, 7, 'ok', 2.5), (2, 'u2', 2, 1, 3, 'ok', 1.5), (3, 'u3', 3, 1, 1, 'ok', 0.5),"
      " (4, 'u4', 4, 1, 2, 'ok', 0.25), (5, 'u5', 5, 1, 0, 'ok', 9.0), (6, 'u6', 6, 1, 9, 'ok', 2.0),"
      " (7, 'u7', 1, 1, 8, 'timeout', NULL);"
      "INSERT INTO claims(workload_id, target_id, config_index, holder, expires_ms, trial_id) VALUES"
      " (1, 1, 7, 'h', 0, 1), (6, 1, 9, 'h', 0, 6), (6, 1, 10, 'h', 99, NULL);";
  // PostgreSQL's identity columns start past the ids given here, as they would have in use.
  for (const char* table : {"workloads", "targets", "trials"}) {
    if (postgres) sql += std::string("SELECT setval(pg_get_serial_sequence('") + table + "', 'id'), 100);";
  }
  sql += postgres ? "INSERT INTO tunefarm_schema(version) VALUES (2);" : "PRAGMA user_version = 2;";
  if (postgres) sql = "CREATE TABLE tunefarm_schema(version INTEGER NOT NULL);" + sql;
  const std::string file = ::testing::TempDir() + "records_v2_" + std::to_string(getpid()) + ".sql";
  testing::WriteFile(file, sql);
  const std::string load = postgres ? "psql -q -v ON_ERROR_STOP=1 '" + location_ + "' -f " + file + " > /dev/null"
                                    : "sqlite3 " + location_ + " < " + file;
  ASSERT_EQ(system(load.c_str()), 0) << load;
  std::remove(file.c_str());

  auto db = RecordsDb::Open(location_, RecordsDb::Mode::kMustExist);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(*(*db)->SchemaVersion(), kRecordsSchemaVersion);
  EXPECT_EQ(*(*db)->CountTrials(), 7) << "nothing stored is lost";
  const TargetMatch llvm{"llvm", "", {"cpu"}};
  auto best = [&](const std::string& key, const std::string& implementation) {
    auto b = (*db)->Best(key, implementation, llvm);
    EXPECT_TRUE(b.ok() && b->has_value()) << implementation << " " << key;
    return b.ok() && b->has_value() ? (*b)->config_index : -1;
  };
  EXPECT_EQ(best("conv2d" + conv, "conv2d_nchwc"), 9);  // rows 1 and 6 merged: 2.0 ms beats 2.5 ms
  EXPECT_EQ(best("conv2d" + conv, "conv2d_nchwc_winograd"), 3);
  EXPECT_EQ(best("dense|N1_I16|O8|NC|float32", "dense_pack"), 1);
  EXPECT_EQ(best("batch_matmul|B2_M3_K4|N5|BMN|float32", "batch_matmul"), 2);
  EXPECT_EQ(best("odd|thing", "x"), 0);
  auto rows = (*db)->FindWorkloads("conv2d" + conv);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);  // one workload, two implementations
  EXPECT_EQ((*rows)[0].id, 1);
  EXPECT_EQ((*rows)[0].template_name, "conv2d_nchwc");
  EXPECT_EQ((*rows)[1].template_name, "conv2d_nchwc_winograd");
  EXPECT_EQ((*db)->Workloads()->size(), 5u);
  EXPECT_EQ((*db)->List("conv2d" + conv, -1, "conv2d_nchwc")->size(), 3u);
  EXPECT_EQ((*db)->List("conv2d" + conv)->size(), 4u);

  // New trials of a converted task join its row; the merged row's open claim is gone and the
  // survivor's completed one stays (config 7 is never measured again, 10 is free).
  TrialRecord more = Trial("llvm", "", "cpu", 11, 0.1);
  more.workload_key = "conv2d" + conv;
  ASSERT_TRUE((*db)->AddTrial(&more).ok());
  EXPECT_EQ(best("conv2d" + conv, "conv2d_nchwc"), 11);
  EXPECT_EQ((*db)->Workloads()->size(), 5u);
  EXPECT_EQ(*(*db)->Claim(more, {7, 10}, "A", 1000), (std::vector<int64_t>{10}));

  // Lines exported before the change import as the same tasks.
  std::istringstream old_line(
      R"({"uid":"u8","workload":"conv2d_nchwc_winograd)" + conv +
      R"(","template":"conv2d_nchwc_winograd","target":"llvm","status":"ok","config_index":4,"mean_ms":1.0})" + "\n");
  auto imported = (*db)->ImportJsonLines(old_line);
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  EXPECT_EQ(best("conv2d" + conv, "conv2d_nchwc_winograd"), 4);
  EXPECT_EQ((*db)->Workloads()->size(), 5u);
}

}  // namespace
}  // namespace tunefarm::tuner
