// The records tests' fixtures, shared by the test file of each role (trial_log_test.cc,
// best_configs_test.cc, records_queries_test.cc, job_store_test.cc, records_maintenance_test.cc)
// and records_test.cc (opening, engines, schema). RecordsOnEachEngine is instantiated once, in
// records_test.cc, for every file's TEST_Ps.
#ifndef TUNEFARM_TESTS_COMMON_RECORDS_FIXTURES_H_
#define TUNEFARM_TESTS_COMMON_RECORDS_FIXTURES_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/postgres_server.h"
#include "tunefarm/tuner/records.h"

namespace tunefarm::tuner::records_test {

inline TrialRecord Trial(const std::string& target, const std::string& model, const std::string& keys, int64_t config,
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

// PostgreSQL only: what a user gets wrong in a URL, and two daemons of one name.
class PostgresRecordsTest : public ::testing::Test {};

}  // namespace tunefarm::tuner::records_test

#endif  // TUNEFARM_TESTS_COMMON_RECORDS_FIXTURES_H_
