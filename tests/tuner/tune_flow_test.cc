// End-to-end tuning with real processes: `tunefarm tune` killed with SIGKILL and run again, the
// tuner-daemon's job API (submit, watch, list, cancel, errors) and a daemon killed mid-job and
// started again, tuning through rpc_tracker + 2 rpc_servers and through the emulated rasp4b
// server (qemu; skipped when missing), each followed by a compile that uses the records.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <random>
#include <set>
#include <thread>

#include "common/local_farm.h"
#include "common/onnx_builder.h"
#include "common/postgres_server.h"
#include "common/process.h"
#include "common/small_model.h"
#include "common/test_certificates.h"
#include "common/test_files.h"
#include "tunefarm/runtime/artifact.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/tuner/records.h"
#include "tunefarm/tuner/tuning_job.h"
#include "tunefarm/v1/tuner.grpc.pb.h"

namespace tunefarm::tuner {
namespace {

using tunefarm::testing::ChildProcess;
using tunefarm::testing::RunCommand;

const char* kToken = "tune-flow-test-token-0123456789";

class TuneFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "tunefarm_tune_flow_" + std::to_string(getpid());
    ASSERT_EQ(system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str()), 0);
    model_ = dir_ + "/small.onnx";
    ASSERT_TRUE(tunefarm::testing::WriteSmallCnnOnnx(model_));
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0); }

  // The CLI as argv (no shell in between, so a signal reaches tunefarm itself).
  bool StartCli(ChildProcess* p, std::vector<std::string> args) const {
    args.insert(args.begin(), TUNEFARM_CLI);
    return p->Start(args, {std::string("TUNEFARM_TOKEN=") + kToken, "TMPDIR=" + dir_});
  }
  std::string Cli(const std::string& args) const {
    return std::string("TUNEFARM_TOKEN=") + kToken + " TMPDIR=" + dir_ + " " + TUNEFARM_CLI + " " + args;
  }

  // Distinct (workload, config) pairs, and whether any pair was stored twice.
  struct Counts {
    size_t trials = 0, distinct = 0;
    std::map<std::string, size_t> per_workload;  // per task: "template:workload key"
    std::set<std::string> device_keys, targets;
  };
  static Counts Count(const std::string& db_path) {
    Counts c;
    auto db = RecordsDb::Open(db_path, RecordsDb::Mode::kMustExist);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return c;
    auto all = (*db)->List();
    EXPECT_TRUE(all.ok());
    std::set<std::pair<std::string, int64_t>> seen;
    for (const auto& t : *all) {
      ++c.trials;
      const std::string task = t.template_name + ":" + t.workload_key;
      if (seen.insert({task, t.config_index}).second) ++c.per_workload[task];
      c.device_keys.insert(t.device_key);
      c.targets.insert(t.target);
    }
    c.distinct = seen.size();
    return c;
  }

  std::string dir_, model_;
};

TEST_F(TuneFlow, KilledTuneResumesToTheSameDistinctConfigsWithoutDuplicates) {
  const std::string flags = " --total-trials 40 --seed 3 --threads 1";
  // Reference: the same tuning, never interrupted.
  auto ref = RunCommand(Cli("tune " + model_ + flags + " --records " + dir_ + "/ref.db"));
  ASSERT_EQ(ref.code, 0) << ref.output;
  const Counts expected = Count(dir_ + "/ref.db");
  EXPECT_EQ(expected.trials, expected.distinct);
  // the conv2d (direct and Winograd) and the dense (pack and nopack)
  EXPECT_EQ(expected.per_workload.size(), 4u) << ref.output;
  // The closing line says where the time went, over the 40 measurements.
  EXPECT_NE(ref.output.find("\ntime: "), std::string::npos) << ref.output;
  EXPECT_NE(ref.output.find(" s for 40 measurements ("), std::string::npos) << ref.output;
  EXPECT_NE(ref.output.find("(loading kernels "), std::string::npos) << ref.output;

  ChildProcess tune;
  ASSERT_TRUE(StartCli(&tune, {"tune", model_, "--total-trials", "40", "--seed", "3", "--threads", "1", "--records",
                               dir_ + "/killed.db"}));
  ASSERT_FALSE(tune.WaitForLine("Progress:", 120000).empty()) << "no progress line";
  tune.Kill(SIGKILL);
  tune.Wait();
  const Counts partial = Count(dir_ + "/killed.db");
  EXPECT_GT(partial.trials, 0u);
  EXPECT_LT(partial.trials, expected.trials) << "killed after it finished: nothing was resumed";

  auto rerun = RunCommand(Cli("tune " + model_ + flags + " --records " + dir_ + "/killed.db"));
  ASSERT_EQ(rerun.code, 0) << rerun.output;
  EXPECT_NE(rerun.output.find("resumed"), std::string::npos);
  const Counts resumed = Count(dir_ + "/killed.db");
  EXPECT_EQ(resumed.distinct, expected.distinct);
  EXPECT_EQ(resumed.trials, resumed.distinct) << "a config was measured twice";
  EXPECT_EQ(resumed.per_workload, expected.per_workload);
}

// The durability campaign (issue 15): `tune` SIGKILLed at 10 moments drawn from a fixed seed, then
// run to the end. SQLite's integrity check passes and the database holds exactly the budget's
// number of distinct configs, none twice. The assertions are on the database, not on timing.
TEST_F(TuneFlow, TenSigkillsLeaveAnIntactDatabaseWithTheExactBudget) {
  const std::string db = dir_ + "/durable.db";
  const std::string flags = " --total-trials 120 --seed 11 --threads 1 --records " + db;
  std::mt19937 rng(2026);
  for (int k = 0; k < 10; ++k) {
    ChildProcess tune;
    std::vector<std::string> argv = {"tune",      model_, "--total-trials", "120", "--seed", "11",
                                     "--threads", "1",    "--records",      db};
    ASSERT_TRUE(StartCli(&tune, argv));
    // Even kills count from the start (they may land before the database exists: start-up is
    // slower under ASan); odd ones from the moment it exists, so most land mid-tuning wherever
    // the build's speed puts start-up.
    if (k % 2 == 1) {
      for (int waited = 0; waited < 120000 && access(db.c_str(), F_OK) != 0; waited += 10)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 600));
    tune.Kill(SIGKILL);
    tune.Wait();
  }
  const Counts killed = Count(db);
  std::printf("after 10 SIGKILLs: %zu trials of the 120 committed\n", killed.trials);
  EXPECT_EQ(killed.trials, killed.distinct) << "a config was measured twice";
  auto finish = RunCommand(Cli("tune " + model_ + flags));
  ASSERT_EQ(finish.code, 0) << finish.output;
  auto check = RunCommand("sqlite3 " + db + " 'PRAGMA integrity_check'");
  EXPECT_EQ(check.output, "ok\n");
  const Counts counts = Count(db);
  EXPECT_EQ(counts.distinct, 120u);
  EXPECT_EQ(counts.trials, counts.distinct) << "a config was measured twice";
}

// The daemon's job API over gRPC.
class DaemonClient {
 public:
  explicit DaemonClient(const std::string& address) : stub_(v1::TunerDaemon::NewStub(service::FarmChannel(address))) {}
  grpc::Status Submit(const v1::TuningJobSpec& spec, v1::TuningJob* job, const std::string& token = kToken) {
    grpc::ClientContext ctx;
    service::AttachToken(&ctx, token);
    v1::SubmitJobRequest req;
    *req.mutable_spec() = spec;
    v1::SubmitJobResponse resp;
    grpc::Status s = stub_->SubmitJob(&ctx, req, &resp);
    *job = resp.job();
    return s;
  }
  std::vector<v1::TuningJob> List() {
    std::vector<v1::TuningJob> jobs;
    const grpc::Status s = TryList(&jobs);
    EXPECT_TRUE(s.ok()) << s.error_code() << ": " << s.error_message();
    return jobs;
  }
  // For polls: a daemon busy measuring on a loaded machine (the sanitizer pass) may miss one
  // connection's handshake deadline; the caller polls again.
  grpc::Status TryList(std::vector<v1::TuningJob>* jobs) {
    grpc::ClientContext ctx;
    service::AttachToken(&ctx, kToken);
    v1::ListJobsResponse resp;
    const grpc::Status s = stub_->ListJobs(&ctx, v1::ListJobsRequest(), &resp);
    jobs->assign(resp.jobs().begin(), resp.jobs().end());
    return s;
  }
  grpc::Status Cancel(int64_t id, v1::TuningJob* job) {
    grpc::ClientContext ctx;
    service::AttachToken(&ctx, kToken);
    v1::CancelJobRequest req;
    req.set_job_id(id);
    v1::CancelJobResponse resp;
    grpc::Status s = stub_->CancelJob(&ctx, req, &resp);
    *job = resp.job();
    return s;
  }
  // Streams the job's events until it ends; returns them.
  std::vector<v1::JobEvent> Watch(int64_t id, grpc::Status* status) {
    grpc::ClientContext ctx;
    service::AttachToken(&ctx, kToken);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(300));
    v1::WatchJobRequest req;
    req.set_job_id(id);
    auto reader = stub_->WatchJob(&ctx, req);
    std::vector<v1::JobEvent> events;
    v1::JobEvent e;
    while (reader->Read(&e)) events.push_back(e);
    *status = reader->Finish();
    return events;
  }

 private:
  std::unique_ptr<v1::TunerDaemon::Stub> stub_;
};

std::string StartDaemon(ChildProcess* daemon, const std::string& db, const std::string& dir, int max_running = 2,
                        std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {
      TUNER_DAEMON, "--listen", "127.0.0.1:0", "--records", db, "--max-running", std::to_string(max_running)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  if (!daemon->Start(argv, {std::string("TUNEFARM_TOKEN=") + kToken, "TMPDIR=" + dir})) {
    return "";
  }
  const std::string address = tunefarm::testing::AddressFromLine(daemon->WaitForLine("listening on", 20000));
  if (address.empty()) ADD_FAILURE() << "tuner-daemon did not start; it printed:\n" << daemon->Drain(2000);
  return address;
}

TEST_F(TuneFlow, DaemonJobApiSubmitWatchListCancelAndErrors) {
  ChildProcess daemon;
  const std::string address = StartDaemon(&daemon, dir_ + "/daemon.db", dir_);
  ASSERT_FALSE(address.empty());
  DaemonClient client(address);
  v1::TuningJob job;

  v1::TuningJobSpec bad;
  bad.set_model(model_);
  bad.set_target("llvm -mcpu=no-such-cpu");
  grpc::Status s = client.Submit(bad, &job);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("no-such-cpu"), std::string::npos) << s.error_message();
  bad.set_target("native");
  bad.set_tuner(static_cast<v1::Tuner>(9));  // a newer client's
  s = client.Submit(bad, &job);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "job spec: unknown tuner 9");
  bad.set_tuner(v1::TUNER_XGB);
  {
    // An older client's spec: field 3 held the tuner as a word ("ga": tag 0x1a, length 2).
    v1::TuningJobSpec old;
    ASSERT_TRUE(old.ParseFromString(bad.SerializeAsString() + std::string("\x1a\x02ga", 4)));
    s = client.Submit(old, &job);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(),
              "job spec: field 3 (tuner as a word) is from an earlier version of the API; this daemon takes the "
              "Tuner enum (update the client)");
  }
  bad.set_layouts("blocked");
  s = client.Submit(bad, &job);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "job spec: unknown layouts 'blocked' (model, any)");
  EXPECT_EQ(client.Submit(bad, &job, "wrong-token-0123456789abcdef").error_code(), grpc::StatusCode::UNAUTHENTICATED);

  v1::TuningJobSpec spec;
  spec.set_model(model_);
  spec.set_total_trials(12);
  ASSERT_TRUE(client.Submit(spec, &job).ok());
  const int64_t id = job.id();
  auto events = client.Watch(id, &s);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().job().state(), v1::JOB_STATE_DONE) << events.back().job().message();
  EXPECT_EQ(events.back().job().trials_done(), 12);
  bool progress_line = false;
  for (const auto& e : events) progress_line = progress_line || e.line().find("Progress: (") != std::string::npos;
  EXPECT_TRUE(progress_line);

  // A second job cancelled right away ends `cancelled`; both are listed.
  spec.set_total_trials(400);
  ASSERT_TRUE(client.Submit(spec, &job).ok());
  v1::TuningJob cancelled;
  ASSERT_TRUE(client.Cancel(job.id(), &cancelled).ok());
  events = client.Watch(job.id(), &s);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().job().state(), v1::JOB_STATE_CANCELLED);
  EXPECT_LT(events.back().job().trials_done(), 400);
  auto jobs = client.List();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(client.Cancel(999, &cancelled).error_code(), grpc::StatusCode::NOT_FOUND);

  // The same through `tunefarm jobs`.
  auto listed = RunCommand(Cli("jobs list --daemon " + address));
  EXPECT_EQ(listed.code, 0) << listed.output;
  EXPECT_NE(listed.output.find("done"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("cancelled"), std::string::npos) << listed.output;
  auto missing = RunCommand(Cli("jobs cancel 999 --daemon " + address));
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("no job 999"), std::string::npos) << missing.output;
  EXPECT_EQ(RunCommand(Cli("jobs pause 1 --daemon " + address)).code, 2);
  // A job that has ended is not "cancelling" (issue 46, D17).
  auto again = RunCommand(Cli("jobs cancel " + std::to_string(job.id()) + " --daemon " + address));
  EXPECT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("had already ended (cancelled): nothing to cancel"), std::string::npos) << again.output;

  // Every trial of the jobs carries its job id.
  const Counts counts = Count(dir_ + "/daemon.db");
  EXPECT_EQ(counts.trials, counts.distinct);

  // A cancel is stored at once: a daemon killed right after it does not resume the job.
  spec.set_total_trials(4000);
  ASSERT_TRUE(client.Submit(spec, &job).ok());
  ASSERT_TRUE(client.Cancel(job.id(), &cancelled).ok());
  EXPECT_EQ(cancelled.state(), v1::JOB_STATE_CANCELLED);
  daemon.Kill(SIGKILL);
  daemon.Wait();
  {
    auto db = RecordsDb::Open(dir_ + "/daemon.db", RecordsDb::Mode::kMustExist);
    ASSERT_TRUE(db.ok());
    auto stored = (*db)->GetJob(job.id());
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(stored->state, "cancelled");
  }
  ChildProcess restarted;
  ASSERT_FALSE(StartDaemon(&restarted, dir_ + "/daemon.db", dir_).empty());
  restarted.Kill(SIGTERM);
  EXPECT_EQ(restarted.Wait(), 0);
  {
    auto db = RecordsDb::Open(dir_ + "/daemon.db", RecordsDb::Mode::kMustExist);
    ASSERT_TRUE(db.ok());
    EXPECT_EQ((*db)->GetJob(job.id())->state, "cancelled") << "a restarted daemon resumed a cancelled job";
  }
}

// A job whose model the daemon did not survive twice is failed, not resumed (issue 46, P3): under
// systemd's Restart=on-failure a model that takes the daemon down while it is imported would do so
// on every restart. Each run is counted when it starts; measuring (past the import) leaves one run
// counted, a clean stop (SIGTERM) gives it back. So a job killed while it measures resumes every
// time, and one whose runs died before measuring is failed at the next start.
TEST_F(TuneFlow, AJobThatTookTheDaemonDownTwiceIsFailedNotResumed) {
  const std::string db = dir_ + "/crash.db";
  ChildProcess daemon;
  std::string address = StartDaemon(&daemon, db, dir_);
  ASSERT_FALSE(address.empty());
  v1::TuningJobSpec spec;
  spec.set_model(model_);
  spec.set_total_trials(100000);
  v1::TuningJob job;
  ASSERT_TRUE(DaemonClient(address).Submit(spec, &job).ok());
  auto stored = [&] {
    auto records = RecordsDb::Open(db, RecordsDb::Mode::kMustExist);
    EXPECT_TRUE(records.ok());
    return *(*records)->GetJob(job.id());
  };
  // Until the job has measured trials in this run (past the import, where a bad model would strike).
  auto wait_measuring = [&](const std::string& at) {
    int before = -1;
    bool measuring = false;
    for (int i = 0; i < 1200 && !measuring; ++i) {
      std::vector<v1::TuningJob> jobs;
      const grpc::Status polled = DaemonClient(address).TryList(&jobs);
      ASSERT_TRUE(polled.ok() || polled.error_code() == grpc::StatusCode::UNAVAILABLE) << polled.error_message();
      for (const auto& j : jobs) {
        if (before < 0) before = j.trials_done();
        measuring = j.state() == v1::JOB_STATE_RUNNING && j.trials_done() > before;
      }
      if (!measuring) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(measuring) << at;
  };
  for (int kill = 0; kill < 2; ++kill) {
    wait_measuring("run " + std::to_string(kill + 1));
    daemon.Kill(SIGKILL);  // as an abort or the OOM killer would
    daemon.Wait();
    EXPECT_NE(stored().progress_json.find("\"interrupted_runs\":1"), std::string::npos) << stored().progress_json;
    EXPECT_EQ(stored().state, "running");
    address = StartDaemon(&daemon, db, dir_);  // resumed: it had measured
    ASSERT_FALSE(address.empty());
  }
  wait_measuring("run 3");
  daemon.Kill(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
  EXPECT_EQ(stored().progress_json.find("interrupted_runs"), std::string::npos) << stored().progress_json;

  // Two runs that died before measuring, as a model that aborts the import leaves the row.
  ASSERT_EQ(system(("sqlite3 " + db + " \"UPDATE jobs SET progress = json_set(progress, '\\$.interrupted_runs', 2) " +
                    "WHERE id = " + std::to_string(job.id()) + "\"")
                       .c_str()),
            0);
  address = StartDaemon(&daemon, db, dir_);
  ASSERT_FALSE(address.empty());
  std::vector<v1::TuningJob> jobs = DaemonClient(address).List();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(jobs[0].message().rfind("the daemon ended 2 times while running this job (a crash, an abort or a kill; "
                                    "last at ",
                                    0),
            0u)
      << jobs[0].message();
  EXPECT_NE(jobs[0].message().find("): not resuming it; see the daemon's log, then submit it again"), std::string::npos)
      << jobs[0].message();
  daemon.Kill(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
  EXPECT_EQ(stored().state, "failed");
}

// Jobs wait for memory (issue 30): with --job-memory 300 (MiB) a job on the small model reserves
// about 257 MiB to import it and 256 MiB while it tunes, so a second one waits for the first,
// saying why; a model whose estimate exceeds the whole budget is refused at submit, naming both.
TEST_F(TuneFlow, DaemonJobsWaitForMemoryAndOneThatCannotFitIsRefused) {
  ChildProcess daemon;
  const std::string address = StartDaemon(&daemon, dir_ + "/memory.db", dir_, 2, {"--job-memory", "300"});
  ASSERT_FALSE(address.empty());
  DaemonClient client(address);
  const std::string big = dir_ + "/big.onnx";
  ASSERT_EQ(system(("truncate -s 100M " + big).c_str()), 0);  // sparse: its size is what counts
  v1::TuningJobSpec spec;
  spec.set_model(big);
  v1::TuningJob job;
  grpc::Status s = client.Submit(spec, &job);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "job spec: model " + big +
                " needs an estimated 556 MiB to import and tune, over this daemon's job memory of 300 MiB "
                "(tuner-daemon --job-memory MiB)");

  // Weights beside the model count as much as weights inside it (issue 46, P5): a tiny model naming
  // 200 MiB of external data is estimated with them.
  {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(int64_t(50) << 20);  // 200 MiB of float32
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = t->add_external_data();
    kv->set_key("location");
    kv->set_value("w.bin");
    const std::string external = dir_ + "/external.onnx";
    tunefarm::testing::WriteFile(external, m.SerializeAsString());
    const int64_t bytes = int64_t(m.ByteSizeLong()) + (int64_t(200) << 20);
    const int64_t mib = ((int64_t(256) << 20) + 3 * bytes + (1 << 20) - 1) >> 20;
    spec.set_model(external);
    s = client.Submit(spec, &job);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "job spec: model " + external + " needs an estimated " + std::to_string(mib) +
                                     " MiB to import and tune, over this daemon's job memory of 300 MiB "
                                     "(tuner-daemon --job-memory MiB)");
  }

  spec.set_model(model_);
  spec.set_total_trials(4000);  // still running when the second job comes; cancelled below
  v1::TuningJob first, second;
  ASSERT_TRUE(client.Submit(spec, &first).ok());
  auto state_of = [&](int64_t id) {
    for (const auto& j : client.List()) {
      if (j.id() == id) return j;
    }
    return v1::TuningJob();
  };
  for (int i = 0; i < 600 && state_of(first.id()).state() != v1::JOB_STATE_RUNNING; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(state_of(first.id()).state(), v1::JOB_STATE_RUNNING);
  spec.set_total_trials(8);
  ASSERT_TRUE(client.Submit(spec, &second).ok());
  std::string waiting;
  for (int i = 0; i < 200 && waiting.empty(); ++i) {
    const v1::TuningJob j = state_of(second.id());
    if (j.message().find("waiting for memory") != std::string::npos)
      waiting = std::string(NameOf(j.state())) + ": " + j.message();
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(
      waiting.rfind("queued: waiting for memory: needs an estimated 257 MiB; running jobs hold 256 MiB of 300 MiB", 0),
      0u)
      << waiting;
  v1::TuningJob cancelled;
  ASSERT_TRUE(client.Cancel(first.id(), &cancelled).ok());
  EXPECT_EQ(client.Watch(first.id(), &s).back().job().state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(client.Watch(second.id(), &s).back().job().state(),
            v1::JOB_STATE_DONE);  // the memory it waited for came back
}

// One tuner per database (issue 15): a second `tune` and a daemon on the database a `tune` is
// writing are refused naming the holder; the database then holds each config once.
TEST_F(TuneFlow, ASecondTunerOnOneDatabaseIsRefused) {
  const std::string db = dir_ + "/shared.db";
  ChildProcess first;
  ASSERT_TRUE(StartCli(&first, {"tune", model_, "--total-trials", "400", "--seed", "9", "--records", db}));
  ASSERT_FALSE(first.WaitForLine("Progress:", 120000).empty());
  auto second = RunCommand(Cli("tune " + model_ + " --total-trials 40 --records " + db));
  EXPECT_EQ(second.code, 1);
  EXPECT_NE(second.output.find("tunefarm tune: records database " + db + " is being tuned by another process (pid " +
                               std::to_string(first.pid()) + ": tunefarm tune " + model_ +
                               "); one tuner writes a database at a time"),
            std::string::npos)
      << second.output;
  auto daemon = RunCommand(std::string("TUNEFARM_TOKEN=") + kToken + " " + TUNER_DAEMON +
                           " --listen 127.0.0.1:0 --records " + db);
  EXPECT_EQ(daemon.code, 1);
  EXPECT_NE(daemon.output.find("is being tuned by another process (pid " + std::to_string(first.pid())),
            std::string::npos)
      << daemon.output;
  first.Kill(SIGKILL);
  first.Wait();
  const Counts counts = Count(db);
  EXPECT_GT(counts.trials, 0u);
  EXPECT_EQ(counts.trials, counts.distinct) << "a config was measured twice";
  // The holder is gone (killed): the next tuner gets the database.
  auto after = RunCommand(Cli("tune " + model_ + " --total-trials 8 --records " + dir_ + "/other.db"));
  EXPECT_EQ(after.code, 0) << after.output;
  ChildProcess next;
  ASSERT_FALSE(StartDaemon(&next, db, dir_).empty()) << "the lock outlived its holder";
  next.Kill(SIGTERM);
  EXPECT_EQ(next.Wait(), 0);
}

// A run whose every trial fails (here no candidate can be built: TMPDIR is missing) fails and says
// why, instead of ending done with nothing to compile from -- from `tunefarm tune` (exit 1) and from a
// tuner-daemon's job alike: both go through the one runner (tunefarm/tuner/tuning_run.h).
TEST_F(TuneFlow, ARunWithNoSuccessfulTrialFailsAlikeFromTheCliAndTheDaemon) {
  const std::string why = "no trial succeeded (compile_error 6); the measurements fail, not the configs";
  auto r = RunCommand(std::string("TMPDIR=/nonexistent ") + TUNEFARM_CLI + " tune " + model_ +
                      " --total-trials 6 --records " + dir_ + "/failing.db");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("tunefarm tune: " + why), std::string::npos) << r.output;
  {
    ChildProcess daemon;
    const std::string address = StartDaemon(&daemon, dir_ + "/daemon_failing.db", "/nonexistent");
    ASSERT_FALSE(address.empty());
    DaemonClient client(address);
    v1::TuningJobSpec spec;
    spec.set_model(model_);
    spec.set_total_trials(6);
    v1::TuningJob job;
    ASSERT_TRUE(client.Submit(spec, &job).ok());
    grpc::Status s;
    auto events = client.Watch(job.id(), &s);
    ASSERT_FALSE(events.empty()) << s.error_message();
    EXPECT_EQ(events.back().job().state(), v1::JOB_STATE_FAILED);
    EXPECT_EQ(events.back().job().message(), why);
    daemon.Kill(SIGTERM);
    EXPECT_EQ(daemon.Wait(), 0);
  }
  // Once the machine is fixed, the same command measures those configs again (the failures were the
  // machine's: nothing on this target ever succeeded), the fallback included.
  auto fixed = RunCommand(Cli("tune " + model_ + " --total-trials 8 --records " + dir_ + "/failing.db"));
  EXPECT_EQ(fixed.code, 0) << fixed.output;
  auto db = RecordsDb::Open(dir_ + "/failing.db", RecordsDb::Mode::kMustExist);
  ASSERT_TRUE(db.ok());
  int ok = 0, failed = 0;
  auto trials = (*db)->List();
  ASSERT_TRUE(trials.ok());
  for (const auto& t : *trials) (t.status == "ok" ? ok : failed)++;
  EXPECT_EQ(failed, 6);
  EXPECT_GE(ok, 1) << "the retried configs never succeeded";
  EXPECT_EQ(fixed.output.find(" 0.00x"), std::string::npos) << "a fallback still hidden by the broken run:\n"
                                                            << fixed.output;
  // Each run is in the jobs table, as the dashboard lists it: the broken one failed, saying why.
  auto runs = (*db)->ListJobs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].daemon, "tunefarm tune");
  EXPECT_EQ((*runs)[0].state, "failed");
  TuningJob stored;
  ASSERT_TRUE(ParseStoredProgress((*runs)[0].progress_json, &stored).ok());
  EXPECT_EQ(stored.message, why);
  EXPECT_EQ((*runs)[1].state, "done");
}

// Apply-history-best (issue 15): the fastest record of a workload whose config no longer matches
// the space (here a corrupted config) gives way to the next valid record instead of hiding them all.
// Records are validated on read (issue 30): the corrupt config and an 'ok' trial whose time was
// edited to -5 ms are each counted in a warning by compile and by a resumed tune (with a third
// trial whose status no tunefarm writes), never applied.
TEST_F(TuneFlow, ACorruptFastestRecordGivesWayToTheNextValidOne) {
  const std::string db_path = dir_ + "/best.db", out = dir_ + "/m.tfa";
  auto tune = RunCommand(Cli("tune " + model_ + " --trials 6 --seed 4 --records " + db_path));
  ASSERT_EQ(tune.code, 0) << tune.output;
  TrialRecord valid;
  {
    auto db = RecordsDb::Open(db_path, RecordsDb::Mode::kMustExist);
    ASSERT_TRUE(db.ok());
    auto trials = (*db)->List();
    ASSERT_TRUE(trials.ok());
    for (const auto& t : *trials) {
      if (t.status == "ok" && t.template_name.rfind("conv2d", 0) == 0 &&
          (valid.mean_ms == 0 || t.mean_ms < valid.mean_ms))
        valid = t;
    }
    ASSERT_GT(valid.mean_ms, 0);
    TrialRecord corrupt = valid;
    corrupt.uid.clear();
    corrupt.mean_ms = valid.mean_ms / 10;
    corrupt.costs_ms = {corrupt.mean_ms};
    corrupt.config_json = R"({"index":0,"knobs":{"not":"this space"}})";
    ASSERT_TRUE((*db)->AddTrial(&corrupt).ok());
    TrialRecord edited = valid;
    edited.uid.clear();
    edited.mean_ms = valid.mean_ms / 20;
    edited.costs_ms = {edited.mean_ms};
    ASSERT_TRUE((*db)->AddTrial(&edited).ok());
    ASSERT_EQ(
        system(("sqlite3 " + db_path + " 'UPDATE trials SET mean_ms = -5 WHERE id = " + std::to_string(edited.id) + "'")
                   .c_str()),
        0);
    // And a status no tunefarm writes, on another trial of the same workload.
    const std::string others =
        "SELECT MIN(id) FROM trials WHERE workload_id = (SELECT workload_id FROM trials WHERE id = " +
        std::to_string(valid.id) + ") AND id NOT IN (" + std::to_string(valid.id) + ", " + std::to_string(corrupt.id) +
        ", " + std::to_string(edited.id) + ")";
    ASSERT_EQ(
        system(("sqlite3 " + db_path + " \"UPDATE trials SET status = 'weird' WHERE id = (" + others + ")\"").c_str()),
        0);
  }
  auto compile = RunCommand(Cli("compile " + model_ + " --records " + db_path + " -o " + out));
  ASSERT_EQ(compile.code, 0) << compile.output;
  EXPECT_NE(compile.output.find("warning: skipped 1 record(s) of " + valid.template_name + ":" + valid.workload_key),
            std::string::npos)
      << compile.output;
  EXPECT_NE(
      compile.output.find("whose config is not a valid point of its space (stale or edited records); none was applied"),
      std::string::npos)
      << compile.output;
  EXPECT_NE(compile.output.find("warning: skipped 1 successful trial(s) of " + valid.template_name + ":" +
                                valid.workload_key),
            std::string::npos)
      << compile.output;
  auto artifact = runtime::Artifact::ReadFile(out);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  bool found = false;
  for (const auto& k : artifact->kernels) {
    if (k.workload != valid.template_name + ":" + valid.workload_key) continue;
    found = true;
    EXPECT_EQ(k.config_origin, runtime::ConfigOrigin::kRecords);
    EXPECT_EQ(k.config_index, valid.config_index);
  }
  EXPECT_TRUE(found) << "no kernel of " << valid.workload_key;
  auto resumed = RunCommand(Cli("tune " + model_ + " --trials 6 --seed 4 --records " + db_path));
  ASSERT_EQ(resumed.code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("skipped 3 record(s) read back from the database"), std::string::npos)
      << resumed.output;
}

// Records per thread count (issue 50): a config tuned for one core can lose on two. A compile for 2
// threads applies no 1-thread record and says so per workload; the artifact keeps its thread count,
// `run` defaults to it and warns once at another; a tune at 2 threads measures the task afresh (it
// does not resume the 1-thread trials) and the same database then serves both counts.
TEST_F(TuneFlow, RecordsApplyOnlyAtTheThreadCountTheyWereMeasuredAt) {
  const std::string db = dir_ + "/threads.db", one = dir_ + "/one.tfa", two = dir_ + "/two.tfa";
  auto tune1 = RunCommand(Cli("tune " + model_ + " --trials 3 --threads 1 --records " + db));
  ASSERT_EQ(tune1.code, 0) << tune1.output;
  EXPECT_NE(tune1.output.find("measured at 1 thread (compile with:"), std::string::npos) << tune1.output;
  EXPECT_NE(tune1.output.find("--threads 1 -o OUT"), std::string::npos) << tune1.output;
  const size_t tuned_at_one = Count(db).trials;

  auto c2 = RunCommand(Cli("compile " + model_ + " --records " + db + " --threads 2 -o " + two));
  ASSERT_EQ(c2.code, 0) << c2.output;
  EXPECT_NE(c2.output.find("records measured at 1 thread, none at 2 threads (tune with --threads 2); its fallback "
                           "config is used"),
            std::string::npos)
      << c2.output;
  EXPECT_NE(c2.output.find("at opt level 3, 2 threads:"), std::string::npos) << c2.output;
  EXPECT_NE(c2.output.find(", 0 from records)"), std::string::npos) << c2.output;
  auto c1 = RunCommand(Cli("compile " + model_ + " --records " + db + " --threads 1 -o " + one));
  ASSERT_EQ(c1.code, 0) << c1.output;
  EXPECT_EQ(c1.output.find("none at"), std::string::npos) << c1.output;
  EXPECT_EQ(c1.output.find(", 0 from records)"), std::string::npos) << c1.output;

  auto artifact = runtime::Artifact::ReadFile(two);
  ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
  EXPECT_EQ(artifact->threads, 2);
  // Untuned at 2 threads: nothing measured at a count, nothing to warn about at another.
  auto run_untuned = RunCommand(Cli("run " + two + " --repeat 1 --threads 1"));
  ASSERT_EQ(run_untuned.code, 0) << run_untuned.output;
  EXPECT_EQ(run_untuned.output.find("warning"), std::string::npos) << run_untuned.output;

  auto tune2 = RunCommand(Cli("tune " + model_ + " --trials 3 --threads 2 --records " + db));
  ASSERT_EQ(tune2.code, 0) << tune2.output;
  EXPECT_EQ(Count(db).trials, 2 * tuned_at_one) << tune2.output;  // 3 more per task, none resumed
  auto again = RunCommand(Cli("compile " + model_ + " --records " + db + " --threads 2 -o " + two));
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_EQ(again.output.find("none at"), std::string::npos) << again.output;
  EXPECT_EQ(again.output.find(", 0 from records)"), std::string::npos) << again.output;
  auto run_default = RunCommand(Cli("run " + two + " --repeat 1"));
  ASSERT_EQ(run_default.code, 0) << run_default.output;
  EXPECT_NE(run_default.output.find(", 2 threads,"), std::string::npos) << run_default.output;
  EXPECT_EQ(run_default.output.find("warning"), std::string::npos) << run_default.output;
  auto run_other = RunCommand(Cli("run " + two + " --repeat 1 --threads 1"));
  ASSERT_EQ(run_other.code, 0) << run_other.output;
  EXPECT_NE(run_other.output.find("warning: " + two +
                                  " was compiled for 2 threads (its tuned configs were measured at that count); "
                                  "running on 1 (compile --threads 1 for records measured at 1)"),
            std::string::npos)
      << run_other.output;
  // `tunefarm records` tells the counts apart.
  auto best = RunCommand(Cli("records best --records " + db));
  ASSERT_EQ(best.code, 0) << best.output;
  EXPECT_NE(best.output.find(" at 1 thread: 3 trials"), std::string::npos) << best.output;
  EXPECT_NE(best.output.find(" at 2 threads: 3 trials"), std::string::npos) << best.output;
}

TEST_F(TuneFlow, DaemonJobsShareTheRunnerFairly) {
  const std::string other = dir_ + "/other.onnx";
  ASSERT_TRUE(tunefarm::testing::WriteSmallCnnOnnx(other, 24, 48));  // no workload in common with model_
  ChildProcess daemon;
  const std::string address = StartDaemon(&daemon, dir_ + "/fair.db", dir_);
  ASSERT_FALSE(address.empty());
  DaemonClient client(address);
  v1::TuningJobSpec a, b;
  a.set_model(model_);
  a.set_total_trials(48);
  b = a;
  b.set_model(other);
  v1::TuningJob ja, jb;
  ASSERT_TRUE(client.Submit(a, &ja).ok());
  ASSERT_TRUE(client.Submit(b, &jb).ok());
  grpc::Status s;
  EXPECT_EQ(client.Watch(ja.id(), &s).back().job().state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(client.Watch(jb.id(), &s).back().job().state(), v1::JOB_STATE_DONE);
  // Both jobs measured on the one local runner at the same time: in the first half of all trials
  // (in commit order) each job has a fair share, not one job first and the other after.
  auto db = RecordsDb::Open(dir_ + "/fair.db", RecordsDb::Mode::kMustExist);
  ASSERT_TRUE(db.ok());
  auto trials = (*db)->List();
  ASSERT_TRUE(trials.ok());
  std::map<int64_t, int> all, first_half;
  for (const auto& t : *trials) ++all[t.job_id];
  for (size_t i = 0; i < trials->size() / 2; ++i) ++first_half[(*trials)[i].job_id];
  ASSERT_EQ(all.size(), 2u);
  const int smaller = std::min(all[ja.id()], all[jb.id()]);
  ASSERT_GE(smaller, 16);
  EXPECT_GE(first_half[ja.id()], smaller / 4) << "job " << ja.id() << " starved";
  EXPECT_GE(first_half[jb.id()], smaller / 4) << "job " << jb.id() << " starved";

  // A third job on the same model as a running one waits for it instead of measuring the same configs.
  a.set_total_trials(64);
  v1::TuningJob j1, j2;
  ASSERT_TRUE(client.Submit(a, &j1).ok());
  ASSERT_TRUE(client.Submit(a, &j2).ok());
  EXPECT_EQ(client.Watch(j2.id(), &s).back().job().state(), v1::JOB_STATE_DONE);
  const Counts counts = Count(dir_ + "/fair.db");
  EXPECT_EQ(counts.trials, counts.distinct) << "two jobs measured the same config";
}

TEST_F(TuneFlow, DaemonKilledMidJobResumesItAfterRestart) {
  const std::string db = dir_ + "/daemon.db";
  // Reference: the same job in a daemon never interrupted.
  v1::TuningJobSpec spec;
  spec.set_model(model_);
  spec.set_total_trials(40);
  spec.set_seed(5);
  Counts expected;
  {
    ChildProcess daemon;
    const std::string address = StartDaemon(&daemon, dir_ + "/ref.db", dir_);
    ASSERT_FALSE(address.empty());
    DaemonClient client(address);
    v1::TuningJob job;
    ASSERT_TRUE(client.Submit(spec, &job).ok());
    grpc::Status s;
    auto events = client.Watch(job.id(), &s);
    ASSERT_FALSE(events.empty());
    ASSERT_EQ(events.back().job().state(), v1::JOB_STATE_DONE);
    expected = Count(dir_ + "/ref.db");
  }

  // `tunefarm tune --daemon` submits and streams; the daemon is SIGKILLed after the first batch.
  ChildProcess daemon;
  std::string address = StartDaemon(&daemon, db, dir_);
  ASSERT_FALSE(address.empty());
  ChildProcess submit;
  ASSERT_TRUE(StartCli(&submit, {"tune", model_, "--daemon", address, "--total-trials", "40", "--seed", "5"}));
  ASSERT_FALSE(submit.WaitForLine("Progress:", 120000).empty());
  daemon.Kill(SIGKILL);
  daemon.Wait();
  EXPECT_NE(submit.Wait(), 0);  // its progress stream broke
  const Counts partial = Count(db);
  EXPECT_GT(partial.trials, 0u);
  EXPECT_LT(partial.trials, expected.trials);

  // Started again on the same database, the daemon resumes the job by itself.
  ChildProcess restarted;
  address = StartDaemon(&restarted, db, dir_);
  ASSERT_FALSE(address.empty());
  DaemonClient client(address);
  auto jobs = client.List();
  ASSERT_EQ(jobs.size(), 1u);
  grpc::Status s;
  auto events = client.Watch(jobs[0].id(), &s);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().job().state(), v1::JOB_STATE_DONE) << events.back().job().message();
  const Counts resumed = Count(db);
  EXPECT_EQ(resumed.distinct, expected.distinct);
  EXPECT_EQ(resumed.trials, resumed.distinct) << "a config was measured twice";
  EXPECT_EQ(resumed.per_workload, expected.per_workload);
}

// Two daemons sharing one PostgreSQL database: the same job on both measures each config once
// (claims), a third daemon taking a name in use is refused, and a restarted daemon resumes and
// lists only its own jobs.
TEST_F(TuneFlow, DaemonsSharingAPostgresDatabaseSplitTheWorkAndKeepTheirOwnJobs) {
  tunefarm::testing::PostgresServer server;
  TUNEFARM_START_POSTGRES(server);
  std::string error;
  const std::string url = server.CreateDatabase("daemons", &error);
  ASSERT_FALSE(url.empty()) << error;
  auto start = [&](ChildProcess* d, const std::string& name) {
    if (!d->Start({TUNER_DAEMON, "--listen", "127.0.0.1:0", "--records", url, "--name", name},
                  {std::string("TUNEFARM_TOKEN=") + kToken, "TMPDIR=" + dir_})) {
      return std::string();
    }
    return tunefarm::testing::AddressFromLine(d->WaitForLine("listening on", 20000));
  };
  ChildProcess a, b;
  const std::string address_a = start(&a, "room-a"), address_b = start(&b, "room-b");
  ASSERT_FALSE(address_a.empty());
  ASSERT_FALSE(address_b.empty());
  ChildProcess twin;
  ASSERT_TRUE(twin.Start({TUNER_DAEMON, "--listen", "127.0.0.1:0", "--records", url, "--name", "room-a"},
                         {std::string("TUNEFARM_TOKEN=") + kToken}));
  EXPECT_NE(
      twin.Drain(20000).find("is in use by another tuner-daemon named 'room-a'; give each daemon sharing a database "
                             "its own --name"),
      std::string::npos);
  EXPECT_NE(twin.Wait(), 0);

  v1::TuningJobSpec spec;
  spec.set_model(model_);
  spec.set_trials_per_task(12);
  spec.set_seed(4);  // the same seed on both: they propose the same configs
  DaemonClient client_a(address_a), client_b(address_b);
  v1::TuningJob job_a, job_b;
  ASSERT_TRUE(client_a.Submit(spec, &job_a).ok());
  ASSERT_TRUE(client_b.Submit(spec, &job_b).ok());
  grpc::Status s;
  auto events_a = client_a.Watch(job_a.id(), &s);
  auto events_b = client_b.Watch(job_b.id(), &s);
  ASSERT_FALSE(events_a.empty() || events_b.empty());
  EXPECT_EQ(events_a.back().job().state(), v1::JOB_STATE_DONE) << events_a.back().job().message();
  EXPECT_EQ(events_b.back().job().state(), v1::JOB_STATE_DONE) << events_b.back().job().message();
  const Counts counts = Count(url);
  EXPECT_EQ(counts.trials, counts.distinct) << "a config was measured twice";
  for (const auto& [key, n] : counts.per_workload) EXPECT_GE(n, 12u) << key;

  a.Kill(SIGTERM);
  a.Wait();
  ChildProcess again;
  const std::string address = start(&again, "room-a");
  ASSERT_FALSE(address.empty());
  auto jobs = DaemonClient(address).List();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id(), job_a.id());
}

TEST_F(TuneFlow, TunesThroughTrackerAndTwoServersThenCompilesWithTheRecords) {
  tunefarm::testing::LocalFarm farm(kToken);
  ASSERT_EQ(farm.StartTracker(RPC_TRACKER), "");
  for (int i = 0; i < 2; ++i) ASSERT_EQ(farm.StartServer({RPC_SERVER, MEASURE_CHILD, "x86-test", dir_, ""}), "");
  const std::string db = dir_ + "/farm.db";
  auto r = RunCommand(
      Cli("tune " + model_ + " --trials 8 --tracker " + farm.tracker_address() + " --key x86-test --records " + db));
  ASSERT_EQ(r.code, 0) << r.output;
  const Counts c = Count(db);
  EXPECT_EQ(c.per_workload.size(), 4u);  // conv2d (direct and Winograd), dense_pack, dense_nopack
  EXPECT_EQ(c.trials, 32u);
  EXPECT_EQ(c.device_keys, std::set<std::string>{"x86-test"});
  ASSERT_EQ(c.targets.size(), 1u);
  EXPECT_NE(c.targets.begin()->find("x86_64"), std::string::npos);
  // A farm device's trials are measured at 1 thread unless --threads says otherwise: compiled for 1.
  auto compiled = RunCommand(Cli("compile " + model_ + " --threads 1 --records " + db + " -o " + dir_ + "/small.tfa"));
  ASSERT_EQ(compiled.code, 0) << compiled.output;
  EXPECT_EQ(compiled.output.find("no tuning record"), std::string::npos) << compiled.output;  // every task tuned
  EXPECT_EQ(compiled.output.find("none at"), std::string::npos) << compiled.output;
  auto ran = RunCommand(Cli("run " + dir_ + "/small.tfa"));
  EXPECT_EQ(ran.code, 0) << ran.output;
}

// A farm that takes only mutual TLS (docs/security.md): `tunefarm tune --tracker` with the client's
// certificate tunes through it; without one it cannot reach the tracker, and says so as it retries.
TEST_F(TuneFlow, TunesThroughAFarmThatTakesOnlyMutualTls) {
  if (!tunefarm::testing::HaveOpenssl()) TUNEFARM_MISSING_FIXTURE("openssl not installed");
  ASSERT_EQ(tunefarm::testing::WriteTestCertificates(dir_), "");
  tunefarm::testing::LocalFarm farm(kToken);
  farm.set_daemon_flags(tunefarm::testing::ServerTlsFlags(dir_));
  ASSERT_EQ(farm.StartTracker(RPC_TRACKER), "");
  ASSERT_EQ(farm.StartServer({RPC_SERVER, MEASURE_CHILD, "x86-tls", dir_, ""}), "");
  std::string tls;
  for (const std::string& flag : tunefarm::testing::ClientTlsFlags(dir_)) tls += " " + flag;
  const std::string tune = "tune " + model_ + " --trials 2 --tracker " + farm.tracker_address() + " --key x86-tls";
  auto r = RunCommand(Cli(tune + tls + " --records " + dir_ + "/tls.db"));
  ASSERT_EQ(r.code, 0) << r.output;
  const Counts c = Count(dir_ + "/tls.db");
  EXPECT_EQ(c.trials, 8u);  // 2 for each of the 4 tasks
  EXPECT_EQ(c.device_keys, std::set<std::string>{"x86-tls"});
  ChildProcess plain;  // keeps asking for a lease, saying why each time, until stopped
  ASSERT_TRUE(StartCli(&plain, {"tune", model_, "--trials", "2", "--tracker", farm.tracker_address(), "--key",
                                "x86-tls", "--records", dir_ + "/plain.db"}));
  EXPECT_FALSE(plain.WaitForLine("farm: cannot lease a 'x86-tls' server yet", 30000).empty());
  plain.Kill(SIGKILL);
  plain.Wait();
  EXPECT_EQ(Count(dir_ + "/plain.db").trials, 0u);
}

TEST_F(TuneFlow, TunesThroughTheEmulatedRasp4bServerThenCompilesForIt) {
  const std::string farm_dir = TUNEFARM_FARM_AARCH64_DIR;
  if (!tunefarm::testing::Exists(farm_dir + "/rpc_server"))
    TUNEFARM_MISSING_FIXTURE("cross-built aarch64 rpc_server missing");
  if (system("qemu-aarch64 --version > /dev/null 2>&1") != 0) TUNEFARM_MISSING_FIXTURE("qemu-aarch64 not installed");
  tunefarm::testing::LocalFarm farm(kToken);
  ASSERT_EQ(farm.StartTracker(RPC_TRACKER), "");
  ASSERT_EQ(farm.StartServer({farm_dir + "/rpc_server", farm_dir + "/tunefarm-measure-child", "rasp4b", dir_,
                              "qemu-aarch64", 60000}),
            "");
  const std::string db = dir_ + "/pi.db";
  auto r = RunCommand(Cli("tune " + model_ + " --target rasp4b --trials 4 --tracker " + farm.tracker_address() +
                          " --key rasp4b --records " + db));
  ASSERT_EQ(r.code, 0) << r.output;
  const Counts c = Count(db);
  EXPECT_EQ(c.per_workload.size(), 4u);  // conv2d (direct and Winograd), dense_pack, dense_nopack
  EXPECT_EQ(c.device_keys, std::set<std::string>{"rasp4b"});
  ASSERT_EQ(c.targets.size(), 1u);
  EXPECT_NE(c.targets.begin()->find("aarch64"), std::string::npos) << *c.targets.begin();
  auto compiled = RunCommand(Cli("compile " + model_ + " --target rasp4b --records " + db + " -o " + dir_ + "/pi.tfa"));
  ASSERT_EQ(compiled.code, 0) << compiled.output;
  EXPECT_EQ(compiled.output.find("no tuning record"), std::string::npos) << compiled.output;
}

}  // namespace
}  // namespace tunefarm::tuner
