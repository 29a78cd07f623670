// The tuner: every strategy proposes each config at most once and only layout-keeping ones; a
// model-based search learns (beats random on a synthetic objective); TuneTask commits every trial
// and a second run resumes without re-measuring.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <set>
#include <thread>

#include "tunefarm/runtime/cuda_driver.h"
#include "tunefarm/tuner/tuner.h"
#include "tuner/search/candidate_build.h"

namespace tunefarm::tuner {
namespace {

compiler::Workload SmallConv() { return compiler::Conv2dWorkload(1, 32, 14, 14, 64, 3, 3, 1, 1); }

TEST(Search, StrategiesNeverRepeatAndOnlyProposeAcceptedConfigs) {
  const compiler::Target host = compiler::HostTarget();
  const compiler::Workload w = SmallConv();
  auto space = compiler::GetConfigSpace(w, host);
  ASSERT_TRUE(space.ok());
  for (TunerKind name : {TunerKind::kRandom, TunerKind::kGrid, TunerKind::kGa, TunerKind::kXgb}) {
    SearchOptions o;
    o.seed = 1;
    o.accept = [&](const compiler::Config& c) { return compiler::KeepsModelLayout(w, host, c); };
    auto s = MakeSearch(name, *space, o);
    ASSERT_TRUE(s.ok());
    std::set<int64_t> seen;
    for (int round = 0; round < 5; ++round) {
      auto batch = (*s)->NextBatch(16);
      ASSERT_FALSE(batch.empty()) << NameOf(name);
      std::vector<double> g;
      for (int64_t c : batch) {
        EXPECT_TRUE(seen.insert(c).second) << NameOf(name) << " proposed config " << c << " twice";
        auto cfg = space->Get(c);
        ASSERT_TRUE(cfg.ok());
        EXPECT_TRUE(space->IsValid(*cfg));
        EXPECT_TRUE(compiler::KeepsModelLayout(w, host, *cfg)) << NameOf(name);
        g.push_back(double(c % 97));
      }
      (*s)->Update(batch, g);
    }
  }
}

// One table names each kind: what users type, the CLI offers and the jobs table stores.
TEST(TuningKinds, EachNameParsesBackAndUnknownWordsAreRefusedNamingTheChoices) {
  for (const std::string& name : TunerKindNames()) EXPECT_EQ(NameOf(*ParseTunerKind(name)), name);
  for (const std::string& name : SchedulerKindNames()) EXPECT_EQ(NameOf(*ParseSchedulerKind(name)), name);
  EXPECT_EQ(AllJobStates().size(), 5u);
  for (JobState s : AllJobStates()) {
    EXPECT_EQ(*ParseJobState(NameOf(s)), s);
    EXPECT_EQ(IsFinal(s), s != JobState::kQueued && s != JobState::kRunning) << NameOf(s);
  }
  EXPECT_EQ(TunerKindNames(), (std::vector<std::string>{"xgb", "ga", "random", "grid"}));
  EXPECT_EQ(ParseTunerKind("anneal").status().message(), "unknown tuner 'anneal' (xgb, ga, random, grid)");
  EXPECT_EQ(ParseSchedulerKind("fastest-first").status().message(),
            "unknown task scheduler 'fastest-first' (gradient, round-robin)");
  EXPECT_EQ(ParseJobState("paused").status().message(),
            "unknown job state 'paused' (queued, running, done, failed, cancelled)");
}

TEST(Search, XgbLearnsASyntheticObjectiveFasterThanRandom) {
  const compiler::Target host = compiler::HostTarget();
  auto space = compiler::GetConfigSpace(SmallConv(), host);
  ASSERT_TRUE(space.ok());
  // A smooth function of the features with one best region.
  auto objective = [&](int64_t index) {
    auto c = space->Get(index);
    auto f = ConfigFeatures(*space, *c);
    double v = 0;
    for (size_t i = 0; i < f.size(); ++i) v -= std::pow(f[i] - 1.5 * double(i % 3), 2);
    return 100.0 + v;
  };
  auto best_after = [&](TunerKind name, int seed) {
    SearchOptions o;
    o.seed = uint64_t(seed);
    auto s = MakeSearch(name, *space, o);
    double best = -1e30;
    for (int round = 0; round < 6; ++round) {
      auto batch = (*s)->NextBatch(16);
      std::vector<double> g;
      for (int64_t c : batch) {
        g.push_back(objective(c));
        best = std::max(best, g.back());
      }
      (*s)->Update(batch, g);
    }
    return best;
  };
  double xgb = 0, random = 0;
  for (int seed = 0; seed < 3; ++seed) {
    xgb += best_after(TunerKind::kXgb, seed);
    random += best_after(TunerKind::kRandom, seed);
  }
  EXPECT_GT(xgb, random) << "xgb " << xgb / 3 << " vs random " << random / 3;
}

TEST(Tune, TrialsAreCommittedAndARerunResumesWithoutRemeasuring) {
  const std::string dir = ::testing::TempDir() + "tunefarm_tune_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  auto db = RecordsDb::Open(dir + "/t.db", RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  LocalMeasurer local(MEASURE_CHILD, dir, 1);
  TuneOptions o;
  o.tuner = TunerKind::kRandom;
  o.trials = 8;
  o.batch = 4;
  o.timing.number = 2;
  o.timing.repeat = 1;
  o.tmp_root = dir;
  const compiler::Workload w = SmallConv();
  const compiler::Target host = compiler::HostTarget();
  auto first = TuneTask(w, host, o, local, **db, 1, 1, nullptr);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->trials, 8);
  EXPECT_GT(first->best_gflops, 0.0);
  EXPECT_GT(first->fallback_gflops, 0.0);  // the fallback config is always measured
  EXPECT_EQ(*(*db)->CountTrials(), 8);

  o.trials = 12;
  auto second = TuneTask(w, host, o, local, **db, 1, 1, nullptr);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->resumed, 8);
  EXPECT_EQ(second->trials, 4);  // only the missing ones
  auto all = (*db)->List(w.Key(), -1, w.implementation);
  ASSERT_TRUE(all.ok());
  std::set<int64_t> distinct;
  for (const auto& t : *all)
    EXPECT_TRUE(distinct.insert(t.config_index).second) << "config " << t.config_index << " measured twice";
  EXPECT_EQ(distinct.size(), 12u);
  auto third = TuneTask(w, host, o, local, **db, 1, 1, nullptr);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->trials, 0);
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

// Tuning a CUDA task: candidates are built as PTX on this machine, the XGBoost model gets the GPU
// features, every trial is recorded. On a machine without a GPU every measurement fails saying
// why (one failed trial each, never a crash of the tuner); on a GPU host they succeed.
TEST(Tune, CudaTaskBuildsPtxCandidatesAndRecordsEveryTrial) {
  const std::string dir = ::testing::TempDir() + "tunefarm_tune_cuda_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  auto db = RecordsDb::Open(dir + "/t.db", RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  LocalMeasurer local(MEASURE_CHILD, dir, 1);
  TuneOptions o;
  o.tuner = TunerKind::kXgb;
  o.trials = 8;
  o.batch = 4;
  o.tmp_root = dir;
  compiler::Workload w = compiler::DenseWorkload(1, 256, 100);
  w.implementation = "dense_cuda";
  auto target = compiler::ParseTarget("h100");
  ASSERT_TRUE(target.ok());
  auto summary = TuneTask(w, *target, o, local, **db, 1, 1, nullptr);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->trials, 8);
  auto trials = (*db)->List(w.Key(), -1, w.implementation);
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->size(), 8u);
  const bool gpu = CudaDriver::Load().ok();
  for (const auto& t : *trials) {
    EXPECT_EQ(t.target, target->ToString());
    if (gpu) {
      EXPECT_EQ(t.status, "ok") << t.error_message;
    } else {
      EXPECT_EQ(t.status, "runtime_error");
      EXPECT_NE(t.error_message.find("cannot open the GPU: no CUDA driver"), std::string::npos) << t.error_message;
    }
  }
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

// The build pool hands builds back as they finish; a wait with a limit returns without the slow
// one, which stays in the pool until it finishes; the destructor waits for running builds.
TEST(BuildPool, HandsBuildsBackAsTheyFinishAndLetsAStragglerRunOn) {
  auto build = [](int64_t config, int ms) {
    return [config, ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      Built b;
      b.config = config;
      return b;
    };
  };
  BuildPool pool(3);
  pool.Submit(build(1, 600));
  pool.Submit(build(2, 10));
  pool.Submit(build(3, 200));
  std::vector<Built> ready;
  ASSERT_TRUE(pool.TakeToMeasure(&ready));
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].config, 2);
  pool.DoneMeasuring();
  ASSERT_TRUE(pool.TakeToMeasure(&ready));
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].config, 3);
  pool.DoneMeasuring();
  EXPECT_FALSE(pool.TakeToMeasure(&ready, 50)) << "the 600 ms build cannot have finished";
  EXPECT_EQ(pool.running(), 1);
  EXPECT_EQ(pool.queued(), 0);
  ASSERT_TRUE(pool.TakeToMeasure(&ready));
  EXPECT_EQ(ready[0].config, 1);
  pool.DoneMeasuring();
  EXPECT_FALSE(pool.TakeToMeasure(&ready, 50)) << "nothing queued, running or finished";
  {
    BuildPool busy(1);
    busy.Submit(build(4, 100));
    busy.Submit(build(5, 100));  // queued behind the first: dropped by the destructor
  }                              // returns once build 4 is done, without crashing on the queued one
}

// Measuring on this machine's cores (exclusive): everything submitted builds before a measurement
// starts, and no build runs during one; not exclusive, a finished build is measured at once while
// the others go on.
TEST(BuildPool, ExclusiveMeasurementsRunWithNoBuildBesideThem) {
  std::atomic<int> running{0}, most_while_measuring{0};
  std::atomic<bool> measuring{false};
  auto build = [&](int64_t config, int ms) {
    return [&, config, ms] {
      ++running;
      const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
      do {
        if (measuring) most_while_measuring = std::max(most_while_measuring.load(), running.load());
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      } while (std::chrono::steady_clock::now() < end);
      --running;
      Built b;
      b.config = config;
      return b;
    };
  };
  {
    BuildPool pool(2);
    pool.SetExclusiveMeasurements(true);
    for (int64_t c = 1; c <= 4; ++c) pool.Submit(build(c, 40 * int(c)));
    std::vector<Built> ready;
    ASSERT_TRUE(pool.TakeToMeasure(&ready));
    EXPECT_EQ(ready.size(), 4u) << "an exclusive measurement waits for the whole batch";
    measuring = true;
    pool.Submit(build(5, 20));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(most_while_measuring.load(), 0) << "a build ran during an exclusive measurement";
    EXPECT_EQ(pool.queued(), 1);
    measuring = false;
    pool.DoneMeasuring();
    ASSERT_TRUE(pool.TakeToMeasure(&ready, 5000));
    EXPECT_EQ(ready.size(), 1u);
    pool.DoneMeasuring();
    EXPECT_FALSE(pool.TakeToMeasure(&ready, 50)) << "nothing left to measure";
  }
  {
    BuildPool pool(2);
    pool.Submit(build(1, 20));
    pool.Submit(build(2, 400));
    std::vector<Built> ready;
    ASSERT_TRUE(pool.TakeToMeasure(&ready));
    ASSERT_EQ(ready.size(), 1u);
    EXPECT_EQ(ready[0].config, 1) << "measured while the slow build goes on";
    EXPECT_EQ(pool.running(), 1);
    pool.DoneMeasuring();
    ASSERT_TRUE(pool.TakeToMeasure(&ready, 5000));
    EXPECT_EQ(ready[0].config, 2);
    pool.DoneMeasuring();
  }
}

// A candidate whose ptxas runs past the build timeout is a compile_error naming the limit, and a
// pool destroyed while one runs (the tuner stopping) kills it rather than waiting: here a "ptxas"
// that sleeps 30 s (TUNEFARM_PTXAS) costs 0.3 s, and the destructor returns within seconds.
TEST(BuildOne, APtxasPastTheBuildTimeoutIsACompileErrorAndAStoppedPoolKillsIt) {
  const std::string dir = ::testing::TempDir() + "tunefarm_build_timeout_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  const std::string slow = dir + "/ptxas";
  ASSERT_EQ(system(("printf '#!/bin/sh\\nexec sleep 30\\n' > " + slow + " && chmod +x " + slow).c_str()), 0);
  const char* old = std::getenv("TUNEFARM_PTXAS");
  const std::string saved = old ? old : "";
  setenv("TUNEFARM_PTXAS", slow.c_str(), 1);
  compiler::Workload w = compiler::Conv2dWorkload(1, 16, 14, 14, 16, 3, 3, 1, 1);
  w.implementation = "conv2d_nchw_cuda";
  auto target = compiler::ParseTarget("h100");
  ASSERT_TRUE(target.ok());
  auto config = compiler::FallbackConfigIndex(w, *target);
  ASSERT_TRUE(config.ok());
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  Built late = BuildOne(w, *target, *config, dir, BuildLimits{300, nullptr});
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 10.0);
  EXPECT_EQ(late.status, TrialStatus::kCompile);
  EXPECT_FALSE(late.cancelled);
  EXPECT_NE(late.message.find("ran past its 0.3 s limit and was stopped"), std::string::npos) << late.message;
  EXPECT_TRUE(late.library.empty());

  t0 = Clock::now();
  {
    BuildPool pool(1);
    pool.Submit([&] { return BuildOne(w, *target, *config, dir, BuildLimits{0, pool.cancel()}); });
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // lowered, in "ptxas" by now
    EXPECT_EQ(pool.running(), 1);
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 10.0) << "the pool waited for the 30 s ptxas";
  if (old) {
    setenv("TUNEFARM_PTXAS", saved.c_str(), 1);
  } else {
    unsetenv("TUNEFARM_PTXAS");
  }
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

// A CUDA task tuned with more build jobs than this machine has cores: builds finish out of order
// while the pipeline goes on with the next batch (tuning_pipeline.h). Whatever the order,
// every config is recorded exactly once, the budget is met exactly, and no claim is left behind.
TEST(Tune, CudaCandidatesCarriedAcrossBatchesAreEachRecordedOnce) {
  const std::string dir = ::testing::TempDir() + "tunefarm_tune_carry_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  auto db = RecordsDb::Open(dir + "/t.db", RecordsDb::Mode::kCreate);
  ASSERT_TRUE(db.ok());
  LocalMeasurer local(MEASURE_CHILD, dir, 1);
  TuneOptions o;
  o.tuner = TunerKind::kRandom;
  o.trials = 12;
  o.batch = 4;
  o.build_jobs = 6;
  o.tmp_root = dir;
  compiler::Workload w = compiler::Conv2dWorkload(1, 32, 28, 28, 32, 3, 3, 1, 1);
  w.implementation = "conv2d_nchw_cuda";
  auto target = compiler::ParseTarget("h100");
  ASSERT_TRUE(target.ok());
  auto summary = TuneTask(w, *target, o, local, **db, 1, 1, nullptr);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->trials, 12);
  EXPECT_EQ(summary->built, 12);
  auto trials = (*db)->List(w.Key(), -1, w.implementation);
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->size(), 12u);
  std::set<int64_t> configs;
  for (const auto& t : *trials)
    EXPECT_TRUE(configs.insert(t.config_index).second) << "config " << t.config_index << " twice";
  db->reset();
  // No claim is left live without its trial (a carried build that was never measured is released).
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open((dir + "/t.db").c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(raw, "SELECT count(*) FROM claims WHERE trial_id IS NULL AND expires_ms > 0", -1, &q, nullptr),
      SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), 0);
  sqlite3_finalize(q);
  sqlite3_close(raw);
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace tunefarm::tuner
