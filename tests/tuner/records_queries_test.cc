// RecordsQueries, the dashboard's role: aggregates, trial streams by id and error groups, the same
// answers on both engines.
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

// The dashboard's read side and transfer learning's query, the same answers on both engines.
TEST_P(RecordsOnEachEngine, AggregatesStreamsAndErrorGroupsAgree) {
  auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  RecordsQueries& queries = **db;
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

  auto stats = queries.TaskStatsOf();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->size(), 3u);  // W on llvm, W on llvm -mcpu=b, V on llvm
  EXPECT_EQ((*stats)[0].trials, 4);
  EXPECT_EQ((*stats)[0].ok_trials, 2);
  EXPECT_DOUBLE_EQ((*stats)[0].best_ms, 2.0);
  EXPECT_EQ((*stats)[0].best_trial_id, trials[1].id);
  EXPECT_EQ((*stats)[0].last_trial_id, trials[3].id);
  auto of_job = queries.TaskStatsOf(*job, 0);
  ASSERT_TRUE(of_job.ok());
  ASSERT_EQ(of_job->size(), 1u);
  EXPECT_EQ((*of_job)[0].trials, 1);
  EXPECT_EQ(*queries.CountTrialsOfJob(*job), 1);
  EXPECT_EQ(*queries.CountTrialsOfJob(0), 5);

  auto rows = queries.FindWorkloads("conv2d|W");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  const WorkloadInfo* w = &rows->front();
  auto after = queries.TrialsAfter(trials[1].id, w->id, 10);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_EQ(after->size(), 3u);
  EXPECT_EQ((*after)[0].status, "timeout");
  EXPECT_EQ((*after)[0].mean_ms, 0.0);
  EXPECT_EQ(queries.TrialsAfter(0, 0, 100)->size(), 6u);
  auto groups = queries.ErrorGroups(0, 10);
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_EQ((*groups)[0].count, 2);
  EXPECT_EQ((*groups)[0].last_trial_id, trials[3].id);
  EXPECT_EQ(queries.RecentFailures(1)->at(0).id, trials[3].id);
  auto fastest = queries.FastestTrials(w->id, 2);
  ASSERT_TRUE(fastest.ok());
  ASSERT_EQ(fastest->size(), 2u);
  EXPECT_EQ((*fastest)[0].config_index, 5);
  EXPECT_EQ((*fastest)[1].config_index, 2);
  EXPECT_EQ(queries.Workloads()->size(), 2u);
  EXPECT_EQ(queries.Targets()->size(), 2u);
  EXPECT_EQ(*queries.LastTrialId(), trials.back().id);
  auto similar = (*db)->ListSimilar("conv2d_nchwc", "llvm", "conv2d|W", 10);
  ASSERT_TRUE(similar.ok());
  ASSERT_EQ(similar->size(), 1u);
  EXPECT_EQ((*similar)[0].config_index, 9);
  EXPECT_EQ(queries.GetWorkload(w->id + 100).status().message(),
            "no task " + std::to_string(w->id + 100) + " in " + queries.location());
}

}  // namespace tunefarm::tuner::records_test
