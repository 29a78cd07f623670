// Loop-nest features (fixed length, config-dependent), the task scheduler (a global budget spent
// exactly, every task measured, round-robin and gradient), and transfer learning (a task starts
// from the records of a similar workload).
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "tunefarm/tuner/features.h"
#include "tunefarm/tuner/tuner.h"

namespace tunefarm::tuner {
namespace {

compiler::Workload ConvA() { return compiler::Conv2dWorkload(1, 32, 14, 14, 64, 3, 3, 1, 1); }
compiler::Workload ConvB() { return compiler::Conv2dWorkload(1, 64, 7, 7, 64, 3, 3, 1, 1); }

TEST(Features, LoopNestFeaturesHaveOneLengthAndDependOnTheConfig) {
  const compiler::Target host = compiler::HostTarget();
  std::set<std::vector<float>> distinct;
  for (const auto& w : {ConvA(), ConvB(), compiler::DenseWorkload(1, 512, 1000)}) {
    auto space = compiler::GetConfigSpace(w, host);
    ASSERT_TRUE(space.ok());
    std::mt19937_64 rng(1);
    for (int i = 0; i < 6; ++i) {
      auto c = space->RandomValid(rng);
      ASSERT_TRUE(c.ok());
      compiler::KernelSpec spec{w, {}, host, c->index(), "f"};
      auto f = compiler::LoopNestFeatures(spec);
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      EXPECT_EQ(int(f->size()), compiler::LoopNestFeatureCount());
      distinct.insert(*f);
    }
    TaskFeatures features(w, host, *space);
    auto rows = features.Get({0, 1, 2, space->size() + 5});
    for (const auto& r : rows) EXPECT_EQ(r.size(), features.Width());
  }
  EXPECT_GT(distinct.size(), 12u) << "features barely depend on the config";
}

class Scheduler : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "tunefarm_sched_" + std::to_string(getpid());
    ASSERT_EQ(system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str()), 0);
    options_.batch = 4;
    options_.timing.number = 2;
    options_.timing.repeat = 1;
    options_.tmp_root = dir_;
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0); }
  std::unique_ptr<RecordsDb> Db(const std::string& name) {
    auto db = RecordsDb::Open(dir_ + "/" + name, RecordsDb::Mode::kCreate);
    EXPECT_TRUE(db.ok());
    return std::move(*db);
  }
  std::string dir_;
  TuneOptions options_;
};

TEST_F(Scheduler, GlobalBudgetIsSpentExactlyAndEveryTaskIsMeasured) {
  const compiler::Target host = compiler::HostTarget();
  LocalMeasurer local(MEASURE_CHILD, dir_, 1);
  for (SchedulerKind strategy : {SchedulerKind::kRoundRobin, SchedulerKind::kGradient}) {
    auto db = Db(std::string(NameOf(strategy)) + ".db");
    ScheduleOptions schedule{strategy, 20};
    options_.tuner = TunerKind::kRandom;
    std::vector<int> progress_totals;
    auto summaries = TuneTasks({{ConvA(), 2, std::nullopt}, {ConvB(), 1, std::nullopt}}, host, options_, schedule,
                               local, *db, [&](const TaskProgress& p) { progress_totals.push_back(p.total_done); });
    ASSERT_TRUE(summaries.ok()) << summaries.status().ToString();
    ASSERT_EQ(summaries->size(), 2u);
    EXPECT_EQ((*summaries)[0].trials + (*summaries)[1].trials, 20) << NameOf(strategy);
    EXPECT_GT((*summaries)[0].trials, 0);
    EXPECT_GT((*summaries)[1].trials, 0);
    EXPECT_EQ(*db->CountTrials(), 20);
    ASSERT_FALSE(progress_totals.empty());
    EXPECT_EQ(progress_totals.back(), 20);
    // Resumed trials count against the budget: the same call again measures nothing.
    auto again = TuneTasks({{ConvA(), 2, std::nullopt}, {ConvB(), 1, std::nullopt}}, host, options_, schedule, local,
                           *db, nullptr);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)[0].trials + (*again)[1].trials, 0);
  }
}

// Winograd and direct convolution of the same nodes are alternatives: the gradient scheduler
// measures both (each can win) within the exact budget, and the records then hold both, for
// apply-history-best to pick the faster.
TEST_F(Scheduler, AlternativeImplementationsOfANodeAreBothTuned) {
  const compiler::Target host = compiler::HostTarget();
  LocalMeasurer local(MEASURE_CHILD, dir_, 1);
  auto db = Db("alternatives.db");
  compiler::Workload winograd = ConvA();
  winograd.implementation = "conv2d_nchwc_winograd";
  ScheduleOptions schedule{SchedulerKind::kGradient, 24};
  options_.tuner = TunerKind::kRandom;
  auto summaries =
      TuneTasks({{ConvA(), 2, std::nullopt}, {winograd, 2, ConvA()}}, host, options_, schedule, local, *db, nullptr);
  ASSERT_TRUE(summaries.ok()) << summaries.status().ToString();
  ASSERT_EQ(summaries->size(), 2u);
  EXPECT_EQ((*summaries)[0].trials + (*summaries)[1].trials, 24);
  EXPECT_GT((*summaries)[0].trials, 0);
  EXPECT_GT((*summaries)[1].trials, 0);
  EXPECT_GT((*summaries)[1].best_gflops, 0) << "no Winograd config was measured successfully";
}

TEST_F(Scheduler, XgbStartsFromTheRecordsOfASimilarWorkload) {
  const compiler::Target host = compiler::HostTarget();
  LocalMeasurer local(MEASURE_CHILD, dir_, 1);
  auto db = Db("transfer.db");
  options_.tuner = TunerKind::kRandom;
  options_.trials = 12;
  ASSERT_TRUE(TuneTask(ConvA(), host, options_, local, *db, 1, 2, nullptr).ok());
  options_.tuner = TunerKind::kXgb;
  auto tuner = TaskTuner::Create(ConvB(), host, options_, local, *db, 2, 2);
  ASSERT_TRUE(tuner.ok()) << tuner.status().ToString();
  EXPECT_GE((*tuner)->summary().transfer_rows, 8);
  EXPECT_EQ((*tuner)->summary().resumed, 0);  // another workload's trials are learned from, not resumed
  auto n = (*tuner)->RunBatch();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 4);
  options_.transfer = false;
  auto cold = TaskTuner::Create(ConvB(), host, options_, local, *db, 2, 2);
  ASSERT_TRUE(cold.ok());
  EXPECT_EQ((*cold)->summary().transfer_rows, 0);
}

}  // namespace
}  // namespace tunefarm::tuner
