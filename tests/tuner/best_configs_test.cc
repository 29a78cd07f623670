// BestConfigs, apply-history-best's role: the fastest usable trial by target string, then device
// model, then a shared key; times no measurement gives are never the best.
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

TEST_P(RecordsOnEachEngine, KeepsEveryTrialAndFindsTheBestByTargetThenModelThenKey) {
  auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  BestConfigs& best_configs = **db;
  EXPECT_EQ(*(*db)->SchemaVersion(), kRecordsSchemaVersion);
  std::vector<TrialRecord> trials = {Trial("llvm -mcpu=a", "", "cpu", 1, 3.0), Trial("llvm -mcpu=a", "", "cpu", 2, 2.0),
                                     Trial("llvm -mcpu=a", "", "cpu", 3, 0.0, "timeout"),
                                     Trial("llvm -model=pi", "pi", "arm_cpu,cpu", 4, 1.0),
                                     Trial("llvm -mcpu=b", "", "gpu", 5, 0.5)};
  for (auto& t : trials) ASSERT_TRUE((*db)->AddTrial(&t).ok());
  EXPECT_EQ(*(*db)->CountTrials(), 5);  // failures are kept too

  std::string on;
  auto exact = best_configs.Best("conv2d|W", "conv2d_nchwc", {"llvm -mcpu=a", "", {"cpu"}}, &on);
  ASSERT_TRUE(exact.ok() && exact->has_value());
  EXPECT_EQ((*exact)->config_index, 2);  // the fastest ok trial; the failed one never wins
  EXPECT_EQ(on, "target");
  auto by_model =
      best_configs.Best("conv2d|W", "conv2d_nchwc", {"llvm -model=pi -mattr=+neon", "pi", {"arm_cpu", "cpu"}}, &on);
  ASSERT_TRUE(by_model.ok() && by_model->has_value());
  EXPECT_EQ((*by_model)->config_index, 4);
  EXPECT_EQ(on, "model");
  auto by_key = best_configs.Best("conv2d|W", "conv2d_nchwc", {"llvm -mcpu=c", "", {"cpu"}}, &on);
  ASSERT_TRUE(by_key.ok() && by_key->has_value());
  EXPECT_EQ((*by_key)->config_index, 4);  // fastest among targets sharing the key "cpu"
  EXPECT_EQ(on, "keys");
  auto none = best_configs.Best("conv2d|W", "conv2d_nchwc", {"cuda", "", {"cuda"}});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
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

}  // namespace tunefarm::tuner::records_test
