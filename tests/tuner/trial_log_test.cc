// TrialLog, the tuner's role: trials kept whole or refused whole, the claims that give each config
// to one of several tuners sharing a database, and reading what other tuners measured since.
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

TEST_P(RecordsOnEachEngine, ClaimsGiveEachConfigToOneTunerUntilItsTrialOrItsExpiry) {
  auto a = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  auto b = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);  // a second tuner's connection
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString();
  TrialLog& tuner_a = **a;
  TrialLog& tuner_b = **b;
  const TrialRecord task = Trial("llvm", "", "cpu", 0, 1.0);
  const int64_t minute = 60000;
  EXPECT_EQ(*tuner_a.Claim(task, {1, 2, 3}, "A", minute), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(*tuner_b.Claim(task, {2, 3, 4}, "B", minute), (std::vector<int64_t>{4}));  // A holds 2 and 3
  TrialRecord two = Trial("llvm", "", "cpu", 2, 1.5);
  ASSERT_TRUE(tuner_a.AddTrial(&two, "A").ok());
  EXPECT_TRUE(tuner_b.Claim(task, {2}, "B", minute)->empty()) << "measured: never again";
  // A holder that died: its claim lapses, and only then another may take the config.
  EXPECT_EQ(*tuner_a.Claim(task, {5}, "A", -1), (std::vector<int64_t>{5}));
  EXPECT_EQ(*tuner_b.Claim(task, {5}, "B", minute), (std::vector<int64_t>{5}));
  // A failure a tuner decided to measure again, up to the trial it saw: once.
  EXPECT_EQ(*tuner_b.Claim(task, {2}, "B", minute, {{2, two.id}}), (std::vector<int64_t>{2}));
  EXPECT_TRUE(tuner_a.Claim(task, {2}, "A", minute, {{2, two.id}})->empty()) << "B measures it now";
  // Claims come back in ascending order, each once, whatever order the search proposed.
  EXPECT_EQ(*tuner_a.Claim(task, {9, 7, 9, 8}, "A", minute), (std::vector<int64_t>{7, 8, 9}));
  // What the other tuner recorded since a given trial.
  TrialRecord four = Trial("llvm", "", "cpu", 4, 0.5);
  ASSERT_TRUE(tuner_b.AddTrial(&four, "B").ok());
  auto fresh = tuner_a.TrialsOfTaskAfter(task.workload_key, task.template_name, "llvm", two.id);
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
  TrialLog& tuner_a = **a;
  TrialLog& tuner_b = **b;
  const TrialRecord task = Trial("llvm", "", "cpu", 0, 1.0);
  const int64_t day = 24LL * 3600 * 1000;
  ASSERT_TRUE(tuner_a.HoldClaimHolder("A").ok());
  ASSERT_TRUE(tuner_b.HoldClaimHolder("B").ok());
  EXPECT_EQ(*tuner_a.Claim(task, {1, 2}, "A", day), (std::vector<int64_t>{1, 2}));
  if (GetParam() == "postgresql") {
    ASSERT_TRUE(tuner_b.ReleaseDeadClaims("B").ok());
    EXPECT_TRUE(tuner_b.Claim(task, {1}, "B", day)->empty()) << "A is alive: its claims stay";
  }
  a->reset();  // A dies (its session ends moments after its connection)
  std::vector<int64_t> taken;
  for (int i = 0; i < 100 && taken.empty(); ++i) {
    ASSERT_TRUE(tuner_b.ReleaseDeadClaims("B").ok());
    taken = *tuner_b.Claim(task, {1}, "B", day);
    if (taken.empty()) usleep(50000);
  }
  EXPECT_EQ(taken, (std::vector<int64_t>{1}));
  // A batch that failed half-way gives its claims back.
  ASSERT_TRUE(tuner_b.ReleaseClaims(task, {1}, "B").ok());
  auto c = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(c.ok());
  TrialLog& tuner_c = **c;
  EXPECT_EQ(*tuner_c.Claim(task, {1, 2}, "C", day), (std::vector<int64_t>{1, 2}));
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

}  // namespace tunefarm::tuner::records_test
