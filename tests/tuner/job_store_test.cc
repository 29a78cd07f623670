// JobStore, the daemons' role: jobs keep their runner, an update of a missing job is NotFound, and a
// daemon name is held by one process at a time.
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

TEST_P(RecordsOnEachEngine, JobsKeepTheirDaemonAndAnUpdateOfAMissingJobIsNotFound) {
  auto db = RecordsDb::Open(location_, RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  JobStore& jobs = **db;
  auto id = jobs.AddJob("{\"model\":\"resnet-18\"}", "daemon-a");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(jobs.UpdateJob(*id, JobState::kRunning, "{\"trials_done\":3}").ok());
  auto job = jobs.GetJob(*id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, "running");
  EXPECT_EQ(job->daemon, "daemon-a");
  EXPECT_EQ(job->progress_json, "{\"trials_done\":3}");
  auto missing = jobs.UpdateJob(*id + 100, JobState::kDone, "{}");
  EXPECT_EQ(missing.message(), "no job " + std::to_string(*id + 100) + " in " + jobs.location());
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

}  // namespace tunefarm::tuner::records_test
