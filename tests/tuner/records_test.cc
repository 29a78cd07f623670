// The records database as a whole, on each engine (SQLite, and a real PostgreSQL server the test
// starts): opening it, what readers and writers refuse, the tuning lock, the schema and its
// migrations. Each role has its own file (records_fixtures.h lists them).
#include "tunefarm/tuner/records.h"

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

INSTANTIATE_TEST_SUITE_P(Engines, RecordsOnEachEngine, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

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

}  // namespace tunefarm::tuner::records_test
