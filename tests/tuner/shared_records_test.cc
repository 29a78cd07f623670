// Records on a real PostgreSQL server shared by several `tunefarm tune` processes (issue 17):
// together they measure each config once (claims), a tuner SIGKILLed mid-batch loses no committed
// trial and leaves nothing unmeasured behind, and `records copy` moves records between SQLite and
// PostgreSQL both ways with the same best records.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <set>

#include "common/postgres_server.h"
#include "common/process.h"
#include "common/small_model.h"
#include "common/test_files.h"
#include "tunefarm/tuner/records.h"

namespace tunefarm::tuner {
namespace {

using tunefarm::testing::ChildProcess;
using tunefarm::testing::RunCommand;

class SharedRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    TUNEFARM_START_POSTGRES(server_);
    dir_ = ::testing::TempDir() + "tunefarm_shared_records_" + std::to_string(getpid());
    ASSERT_EQ(system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str()), 0);
    model_ = dir_ + "/small.onnx";
    ASSERT_TRUE(tunefarm::testing::WriteSmallCnnOnnx(model_));
    std::string error;
    url_ = server_.CreateDatabase("shared", &error);
    ASSERT_FALSE(url_.empty()) << error;
  }
  void TearDown() override { RunCommand("rm -rf " + dir_); }

  bool StartTune(ChildProcess* p, const std::vector<std::string>& flags) const {
    std::vector<std::string> argv = {TUNEFARM_CLI, "tune", model_, "--threads", "1", "--records", url_};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return p->Start(argv, {"TMPDIR=" + dir_});
  }
  // psql's answer to one query, unaligned.
  std::string Sql(const std::string& query) const {
    auto r = RunCommand("psql '" + url_ + "' -Atc \"" + query + "\"");
    EXPECT_EQ(r.code, 0) << r.output;
    return r.output;
  }
  std::vector<TrialRecord> Trials() const {
    auto db = RecordsDb::Open(url_, RecordsDb::Mode::kReadOnly);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return {};
    auto all = (*db)->List();
    EXPECT_TRUE(all.ok());
    return all.ok() ? *all : std::vector<TrialRecord>{};
  }

  testing::PostgresServer server_;
  std::string dir_, model_, url_;
};

TEST_F(SharedRecords, TwoTunersOnOneDatabaseMeasureEachConfigOnce) {
  // The same seed: both propose the same configs, so every batch contends for its claims.
  ChildProcess a, b;
  ASSERT_TRUE(StartTune(&a, {"--trials", "16", "--seed", "5"}));
  ASSERT_TRUE(StartTune(&b, {"--trials", "16", "--seed", "5"}));
  const std::string out_a = a.Drain(300000), out_b = b.Drain(300000);
  EXPECT_EQ(a.Wait(), 0) << out_a;
  EXPECT_EQ(b.Wait(), 0) << out_b;
  // Asserted from the database: no (workload, target, config) twice, and every task's budget met
  // by the two together (a batch of 16 in flight in each may pass it).
  EXPECT_EQ(Sql("SELECT COUNT(*) FROM (SELECT workload_id, target_id, config_index FROM trials"
                " GROUP BY workload_id, target_id, config_index HAVING COUNT(*) > 1) AS twice"),
            "0\n");
  std::map<std::string, int> per_workload;
  for (const auto& t : Trials()) ++per_workload[t.template_name + ":" + t.workload_key];  // per task
  EXPECT_EQ(per_workload.size(), 4u);
  for (const auto& [key, n] : per_workload) {
    EXPECT_GE(n, 16) << key;
    EXPECT_LE(n, 2 * 16) << key;
  }
  // Both did part of the work: two holders completed claims.
  EXPECT_EQ(Sql("SELECT COUNT(DISTINCT holder) FROM claims WHERE trial_id IS NOT NULL"), "2\n") << out_a << out_b;
  EXPECT_EQ(Sql("SELECT COUNT(*) FROM claims WHERE trial_id IS NULL"), "0\n");
}

TEST_F(SharedRecords, ATunerKilledMidBatchLosesNoCommittedTrialAndItsClaimsAreReleased) {
  ChildProcess tune;
  ASSERT_TRUE(StartTune(&tune, {"--trials", "24", "--seed", "7"}));
  ASSERT_FALSE(tune.WaitForLine("Progress:", 120000).empty()) << "no progress line";
  std::set<std::string> committed;
  for (const auto& t : Trials()) committed.insert(t.uid);
  ASSERT_FALSE(committed.empty());
  tune.Kill(SIGKILL);
  tune.Wait();
  std::map<std::string, TrialRecord> after;
  for (const auto& t : Trials()) after[t.uid] = t;
  for (const auto& uid : committed) EXPECT_TRUE(after.count(uid)) << "trial " << uid << " was committed and is gone";
  // Run again on the same machine: the dead tuner's claims are released, so the budget is met
  // without measuring a config twice.
  ChildProcess again;
  ASSERT_TRUE(StartTune(&again, {"--trials", "24", "--seed", "7"}));
  const std::string out = again.Drain(300000);
  ASSERT_EQ(again.Wait(), 0) << out;
  std::map<std::string, std::set<int64_t>> configs;
  size_t trials = 0;
  for (const auto& t : Trials()) {
    configs[t.template_name + ":" + t.workload_key].insert(t.config_index);  // per task
    ++trials;
  }
  size_t distinct = 0;
  for (const auto& [key, set] : configs) {
    EXPECT_GE(set.size(), 24u) << key;
    distinct += set.size();
  }
  EXPECT_EQ(trials, distinct) << "a config was measured twice";
}

TEST_F(SharedRecords, CopySqliteToPostgresAndBackKeepsTheBestRecords) {
  const std::string sqlite = dir_ + "/local.db", back = dir_ + "/back.db";
  auto tune = RunCommand(std::string("TMPDIR=") + dir_ + " " + TUNEFARM_CLI + " tune " + model_ +
                         " --trials 8 --threads 1 --seed 2 --records " + sqlite);
  ASSERT_EQ(tune.code, 0) << tune.output;
  auto to_pg = RunCommand(std::string(TUNEFARM_CLI) + " records copy --from " + sqlite + " --to " + url_);
  ASSERT_EQ(to_pg.code, 0) << to_pg.output;
  EXPECT_NE(to_pg.output.find("copied 32 trials from " + sqlite + " to " + url_ + " (0 already there)"),
            std::string::npos)
      << to_pg.output;
  auto again = RunCommand(std::string(TUNEFARM_CLI) + " records copy --from " + sqlite + " --to " + url_);
  EXPECT_NE(again.output.find("copied 0 trials from " + sqlite + " to " + url_ + " (32 already there)"),
            std::string::npos)
      << again.output;
  auto to_sqlite = RunCommand(std::string(TUNEFARM_CLI) + " records copy --from " + url_ + " --to " + back);
  ASSERT_EQ(to_sqlite.code, 0) << to_sqlite.output;
  const auto best = [](const std::string& db) {
    auto r = RunCommand(std::string(TUNEFARM_CLI) + " records best --json --records " + db);
    EXPECT_EQ(r.code, 0) << r.output;
    return r.output;
  };
  const std::string original = best(sqlite);
  EXPECT_NE(original.find("best_config_index"), std::string::npos) << original;
  EXPECT_EQ(best(url_), original);
  EXPECT_EQ(best(back), original);
  // Every field of every trial survives the round trip but its job: the tune's run (a job of the
  // source database) stays there, and the copies name none (docs/formats/records_db.md, Copying).
  auto exported = [](const std::string& db) {
    return RunCommand(std::string(TUNEFARM_CLI) + " records export --records " + db).output;
  };
  const std::string source = exported(sqlite);
  EXPECT_NE(source.find("\"job_id\":1,"), std::string::npos) << "the tune's trials belong to its run";
  EXPECT_EQ(source.find("\"job_id\":0,"), std::string::npos);
  std::string outside_jobs = source;
  for (size_t at = 0; (at = outside_jobs.find("\"job_id\":1,", at)) != std::string::npos;)
    outside_jobs.replace(at, 11, "\"job_id\":0,");
  EXPECT_EQ(exported(back), outside_jobs);
  // A database that cannot be reached is named without its password, and nothing is written.
  auto refused = RunCommand(std::string(TUNEFARM_CLI) + " records copy --from " + sqlite +
                            " --to postgresql://tuner:hunter2@127.0.0.1:1/records");
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.output.find(
                "tunefarm records: cannot connect to records database postgresql://tuner@127.0.0.1:1/records: "),
            std::string::npos)
      << refused.output;
  EXPECT_EQ(refused.output.find("hunter2"), std::string::npos);
}

}  // namespace
}  // namespace tunefarm::tuner
