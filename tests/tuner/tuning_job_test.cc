// TuningJob's three forms (tunefarm/tuner/tuning_job.h): the jobs table's JSON, which must read
// back what earlier versions stored, and the gRPC messages.
#include "tunefarm/tuner/tuning_job.h"

#include <gtest/gtest.h>

#include "tunefarm/tuner/tuning_run.h"

namespace tunefarm::tuner {
namespace {

bool SameSpec(const TuningJobSpec& a, const TuningJobSpec& b) {
  return a.model == b.model && a.target == b.target && a.tuner == b.tuner && a.trials_per_task == b.trials_per_task &&
         a.total_trials == b.total_trials && a.scheduler == b.scheduler && a.early_stopping == b.early_stopping &&
         a.threads == b.threads && a.tracker == b.tracker && a.key == b.key && a.seed == b.seed &&
         a.keep_model_layout == b.keep_model_layout && a.transfer == b.transfer && a.input_shapes == b.input_shapes;
}

TuningJobSpec FullSpec() {
  TuningJobSpec spec;
  spec.model = "/models/unet.onnx";
  spec.target = "llvm -mcpu=znver4";
  spec.tuner = TunerKind::kGa;
  spec.total_trials = 900;
  spec.scheduler = SchedulerKind::kRoundRobin;
  spec.early_stopping = 40;
  spec.threads = 2;
  spec.tracker = "10.0.0.2:9190";
  spec.key = "rasp4b";
  spec.seed = 18446744073709551557ull;  // past int64: proto JSON writes it as a string
  spec.keep_model_layout = false;
  spec.transfer = false;  // --no-transfer
  spec.input_shapes = {"image:1x3x256x256"};
  return spec;
}

// Rows written before the domain type existed: proto JSON of v1.TuningJobSpec and v1.TuningJob
// (64-bit integers as strings, zero fields left out), as a version-1 database holds them.
TEST(StoredJob, ReadsTheRowsEarlierVersionsWrote) {
  auto spec =
      ParseStoredSpec(R"({"model":"resnet-18","target":"native","tuner":"random","trials_per_task":64,"threads":1,)"
                      R"("seed":"42","layouts":"any","input_shapes":["data:1x3x224x224"]})");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->model, "resnet-18");
  EXPECT_EQ(spec->tuner, TunerKind::kRandom);
  EXPECT_EQ(spec->trials_per_task, 64);
  EXPECT_EQ(spec->total_trials, 0);
  EXPECT_EQ(spec->seed, 42u);
  EXPECT_FALSE(spec->keep_model_layout);
  EXPECT_EQ(spec->input_shapes, std::vector<std::string>{"data:1x3x224x224"});

  TuningJob job;
  ASSERT_TRUE(ParseStoredProgress(R"({"id":"3","state":"running","trials_done":17,"trials_budget":128,)"
                                  R"("message":"[Task  1/2] ...","tasks":[{"workload":"conv2d_nchwc:conv2d|N1",)"
                                  R"("trials":17,"best_gflops":88.5,"weight":2,"flops":2.3e8},)"
                                  R"({"workload":"dense_pack:dense|N1","alternative_of":"dense:dense|N1"}]})",
                                  &job)
                  .ok());
  EXPECT_EQ(job.state, JobState::kRunning);
  EXPECT_EQ(job.trials_done, 17);
  EXPECT_EQ(job.trials_budget, 128);
  ASSERT_EQ(job.tasks.size(), 2u);
  EXPECT_EQ(job.tasks[0].weight, 2);
  EXPECT_DOUBLE_EQ(job.tasks[0].best_gflops, 88.5);
  EXPECT_EQ(job.tasks[1].weight, 1);  // left out: proto JSON omits nothing but zeros, and weight is never 0
  EXPECT_EQ(job.tasks[1].alternative_of, "dense:dense|N1");
}

TEST(StoredJob, WritesWhatItReadsInTheStoredWords) {
  const TuningJobSpec spec = FullSpec();
  const std::string json = StoredSpecJson(spec);
  EXPECT_NE(json.find(R"("tuner":"ga")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("scheduler":"round-robin")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("seed":"18446744073709551557")"), std::string::npos) << json;
  auto back = ParseStoredSpec(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(SameSpec(*back, spec)) << json;
  // The dashboard tells a sequential budget by a spec without total_trials, as proto JSON wrote it.
  TuningJobSpec sequential;
  sequential.model = "resnet-18";
  sequential = WithDefaults(sequential);
  EXPECT_EQ(StoredSpecJson(sequential).find("total_trials"), std::string::npos) << StoredSpecJson(sequential);

  TuningJob job;
  job.state = JobState::kCancelled;
  job.trials_done = 5;
  job.message = "cancelled";
  job.tasks.push_back(JobTask{"conv2d_nchwc:conv2d|N1", 5, 12.5, 9.0, 3, 1e9, ""});
  TuningJob read;
  ASSERT_TRUE(ParseStoredProgress(StoredProgressJson(job), &read).ok());
  EXPECT_EQ(read.state, JobState::kCancelled);
  EXPECT_EQ(read.trials_done, 5);
  EXPECT_EQ(read.message, "cancelled");
  ASSERT_EQ(read.tasks.size(), 1u);
  EXPECT_EQ(read.tasks[0].weight, 3);
  EXPECT_DOUBLE_EQ(read.tasks[0].fallback_gflops, 9.0);
}

TEST(StoredJob, RefusesWhatItCannotReadNamingIt) {
  EXPECT_EQ(ParseStoredSpec("{not json").status().message(), "stored job spec is not a JSON object: {not json");
  EXPECT_EQ(ParseStoredSpec(R"({"model":"m","tuner":"anneal"})").status().message(),
            "unknown tuner 'anneal' (xgb, ga, random, grid)");
  EXPECT_EQ(ParseStoredSpec(R"({"model":"m","layouts":"blocked"})").status().message(),
            "stored job spec: unknown layouts 'blocked' (model, any)");
  TuningJob job;
  EXPECT_EQ(ParseStoredProgress("[]", &job).message(), "stored job progress is not a JSON object");
  EXPECT_EQ(ParseStoredProgress(R"({"state":"paused"})", &job).message(),
            "unknown job state 'paused' (queued, running, done, failed, cancelled)");
}

TEST(JobProto, RoundTripsAndRefusesEnumValuesItDoesNotKnow) {
  TuningJob job;
  job.id = 7;
  job.spec = FullSpec();
  job.state = JobState::kFailed;
  job.trials_done = 3;
  job.trials_budget = 900;
  job.message = "the farm went away";
  job.tasks.push_back(JobTask{"dense_pack:dense|N1", 3, 1.5, 1.0, 1, 2e6, "dense:dense|N1"});
  const v1::TuningJob sent = ToProto(job);
  EXPECT_EQ(sent.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(sent.spec().tuner(), v1::TUNER_GA);
  EXPECT_EQ(sent.spec().scheduler(), v1::SCHEDULER_ROUND_ROBIN);
  auto back = FromProto(sent);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(SameSpec(back->spec, job.spec));
  EXPECT_EQ(back->state, JobState::kFailed);
  EXPECT_EQ(back->message, job.message);
  ASSERT_EQ(back->tasks.size(), 1u);
  EXPECT_EQ(back->tasks[0].alternative_of, "dense:dense|N1");
  EXPECT_EQ(NameOf(sent.state()), "failed");

  v1::TuningJobSpec plain;  // UNSPECIFIED: the defaults
  plain.set_model("resnet-18");
  auto defaults = FromProto(plain);
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->tuner, TunerKind::kXgb);
  EXPECT_EQ(defaults->scheduler, SchedulerKind::kGradient);
  EXPECT_TRUE(defaults->keep_model_layout);
  EXPECT_TRUE(defaults->transfer);

  plain.set_scheduler(static_cast<v1::Scheduler>(7));
  EXPECT_EQ(FromProto(plain).status().message(), "job spec: unknown scheduler 7");
  v1::TuningJob newer = sent;
  newer.set_state(static_cast<v1::JobState>(12));
  EXPECT_EQ(FromProto(newer).status().message(), "job 7: unknown state 12");
  EXPECT_EQ(NameOf(newer.state()), "unspecified");
}

// The one rule both runners end a run by (tuning_run.h): a cancel wins; then a search error or no
// successful trial over any task fails the run, saying why; a daemon's stop leaves the job running.
TEST(TuningRun, FinalStateOfARunFollowsOneRule) {
  TaskSummary broken, measured;
  broken.errors = {{"runtime_error", 4}, {"compile_error", 2}};
  measured.best_gflops = 12.5;
  using Summaries = std::vector<TaskSummary>;

  TuningRunEnd end = FinalStateOf(Summaries{broken, broken}, false, StopCause::kCancelled);
  EXPECT_EQ(end.state, JobState::kFailed);
  EXPECT_TRUE(end.no_trial_succeeded);
  EXPECT_EQ(end.message,
            "no trial succeeded (compile_error 4, runtime_error 8); the measurements fail, not the configs");
  EXPECT_EQ(end.summaries.size(), 2u);

  end = FinalStateOf(Summaries{broken, measured}, false, StopCause::kCancelled);
  EXPECT_EQ(end.state, JobState::kDone);
  EXPECT_EQ(end.message, "finished");
  end = FinalStateOf(Summaries{broken, measured}, true, StopCause::kTimeLimit);
  EXPECT_EQ(end.state, JobState::kDone);
  EXPECT_EQ(end.message, "stopped at the time limit");
  end = FinalStateOf(Summaries{broken}, true, StopCause::kCancelled);  // a cancel wins over the failures
  EXPECT_EQ(end.state, JobState::kCancelled);
  EXPECT_EQ(end.message, "cancelled");
  end = FinalStateOf(Summaries{measured}, true, StopCause::kShutdown);
  EXPECT_EQ(end.state, JobState::kRunning);  // resumes when the daemon starts again
  end = FinalStateOf(Status::IOError("tracker unreachable"), false, StopCause::kCancelled);
  EXPECT_EQ(end.state, JobState::kFailed);
  EXPECT_EQ(end.message, "tracker unreachable");
  EXPECT_FALSE(end.no_trial_succeeded);
  EXPECT_TRUE(end.summaries.empty());
}

// A spec maps to the search's and the scheduler's options in one place, defaults included.
TEST(TuningRun, OptionsComeFromTheSpec) {
  TuningJobSpec spec = WithDefaults(FullSpec());
  const TuneOptions o = TuneOptionsOf(spec);
  EXPECT_EQ(o.tuner, TunerKind::kGa);
  EXPECT_EQ(o.early_stopping, 40);
  EXPECT_EQ(o.threads, 2);
  EXPECT_EQ(o.seed, spec.seed);
  EXPECT_FALSE(o.keep_model_layout);
  EXPECT_FALSE(o.transfer);
  const ScheduleOptions schedule = ScheduleOptionsOf(spec);
  EXPECT_EQ(schedule.total_trials, 900);
  EXPECT_EQ(schedule.scheduler, SchedulerKind::kRoundRobin);
  spec = WithDefaults(TuningJobSpec());
  EXPECT_EQ(TuneOptionsOf(spec).trials, 64);
  EXPECT_EQ(ScheduleOptionsOf(spec).total_trials, 0);
}

}  // namespace
}  // namespace tunefarm::tuner
