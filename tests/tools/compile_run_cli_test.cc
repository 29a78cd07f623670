// tunefarm compile / run / records as a user runs them: every bad input gives one clear message
// and a non-zero exit, and touches no stored data (no artifact written, records untouched).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/onnx_builder.h"
#include "common/test_files.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/target.h"

namespace {

using CliRun = tunefarm::testing::CommandResult;
using tunefarm::testing::Exists;
using tunefarm::testing::ReadFile;
using tunefarm::testing::WriteFile;

CliRun Tunefarm(const std::string& args) {
  return tunefarm::testing::RunCommand(std::string(TUNEFARM_CLI) + " " + args);
}

// A float32 .npy of the given shape, all zeros.
std::string Npy(const std::string& shape, size_t elements) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  return out + header + std::string(elements * 4, '\0');
}

class CompileRunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "tunefarm_cli_" + std::to_string(getpid()) + "/";
    ASSERT_EQ(system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str()), 0);
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0); }

  // Every task of `records` with a successful trial, as compile names it: "template:target-neutral key".
  static std::vector<std::string> RecordedTasks(const std::string& records) {
    std::vector<std::string> out;
    CliRun best = Tunefarm("records best --records " + records + " --json");
    EXPECT_EQ(best.code, 0) << best.output;
    const nlohmann::json list = nlohmann::json::parse(best.output, nullptr, false);
    EXPECT_TRUE(list.is_array()) << best.output;
    for (const auto& task : list.is_array() ? list : nlohmann::json::array()) {
      if (!task.contains("best_config_index")) continue;  // no successful trial: nothing to apply
      const std::string implementation = task["template"], key = task["workload"];
      // Version 2 stores "conv2d_nchwc|N1...", version 3 "conv2d|N1...".
      const std::string neutral =
          key.rfind(implementation + "|", 0) == 0 ? "conv2d" + key.substr(implementation.size()) : key;
      out.push_back(implementation + ":" + neutral);
    }
    return out;
  }
  // Compiles squeezenet-1.1 with `records`: every one of `tasks` is applied, none skipped.
  void ExpectAllApplied(const std::string& records, const std::vector<std::string>& tasks, const std::string& when) {
    // At 1 thread, where these records were measured (records are per thread count).
    CliRun c = Tunefarm("compile squeezenet-1.1 --threads 1 --records " + records + " -o " + dir_ + "sq.tfa");
    ASSERT_EQ(c.code, 0) << when << "\n" << c.output;
    EXPECT_EQ(c.output.find("skipped"), std::string::npos) << when << "\n" << c.output;
    for (const std::string& task : tasks) {
      EXPECT_EQ(c.output.find("no tuning record for " + task + " "), std::string::npos)
          << when << ": " << task << " was recorded but not applied\n"
          << c.output;
    }
    EXPECT_NE(c.output.find(" from records)"), std::string::npos) << when << "\n" << c.output;
  }

  std::string dir_;
};

TEST_F(CompileRunCli, MalformedOrTruncatedOnnxIsOneErrorAndWritesNothing) {
  WriteFile(dir_ + "garbage.onnx", std::string("\x08\x07\xff\xff\xff garbage, not protobuf"));
  CliRun r = Tunefarm("compile " + dir_ + "garbage.onnx --records none -o " + dir_ + "out.tfa");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("malformed ONNX model " + dir_ + "garbage.onnx"), std::string::npos) << r.output;
  EXPECT_FALSE(Exists(dir_ + "out.tfa"));

  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  std::string model = std::string(src ? src : ".") + "/../shared/models/mobilenet_v2.onnx";
  if (!Exists(model)) TUNEFARM_MISSING_FIXTURE(model << " not present (truncation case)");
  std::string bytes = ReadFile(model);
  WriteFile(dir_ + "truncated.onnx", bytes.substr(0, bytes.size() / 2));
  WriteFile(dir_ + "out.tfa", "an earlier artifact");
  r = Tunefarm("compile " + dir_ + "truncated.onnx --records none -o " + dir_ + "out.tfa");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("malformed ONNX model " + dir_ + "truncated.onnx"), std::string::npos) << r.output;
  EXPECT_EQ(ReadFile(dir_ + "out.tfa"), "an earlier artifact");  // untouched
}

TEST_F(CompileRunCli, CompileRunAndWrongInputs) {
  // --records none asks for the fallback configs: no warnings.
  CliRun none = Tunefarm("compile squeezenet-1.1 --records none --opt-level 3 -o " + dir_ + "sq.tfa");
  ASSERT_EQ(none.code, 0) << none.output;
  EXPECT_EQ(none.output.find("warning:"), std::string::npos) << none.output;
  // A records database without records for the model: exactly one warning line per distinct node
  // workload (the implementation chosen untuned: alternatives are not warned about separately).
  WriteFile(dir_ + "empty.jsonl", "");
  ASSERT_EQ(Tunefarm("records import " + dir_ + "empty.jsonl --records " + dir_ + "empty.db").code, 0);
  CliRun c = Tunefarm("compile squeezenet-1.1 --records " + dir_ + "empty.db --opt-level 3 -o " + dir_ + "sq.tfa");
  ASSERT_EQ(c.code, 0) << c.output;
  EXPECT_NE(c.output.find("compiled squeezenet-1.1 for llvm"), std::string::npos) << c.output;
  // The summary names each tunable node's implementation: untuned, Winograd for the 3x3 stride-1
  // convs with enough tiles (27x27 and 13x13 outputs), direct for the rest.
  EXPECT_NE(c.output.find("implementations: "), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("conv2d_nchwc_winograd (fallback)"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("conv2d_nchwc (fallback)"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("  conv0  "), std::string::npos) << c.output;
  CliRun tasks = Tunefarm("tasks squeezenet-1.1 --json");
  size_t workloads = 0;
  for (size_t at = 0; (at = tasks.output.find("\"alternative\": false", at)) != std::string::npos; ++at) ++workloads;
  size_t warnings = 0;
  for (size_t at = 0; (at = c.output.find("warning: no tuning record for ", at)) != std::string::npos; ++at) ++warnings;
  EXPECT_EQ(warnings, workloads);
  EXPECT_GT(workloads, 0u);

  CliRun run = Tunefarm("run " + dir_ + "sq.tfa --repeat 3 --json");
  ASSERT_EQ(run.code, 0) << run.output;
  for (const char* key : {"\"mean_ms\"", "\"median_ms\"", "\"min_ms\"", "\"std_ms\"", "\"top5\""}) {
    EXPECT_NE(run.output.find(key), std::string::npos) << key << "\n" << run.output;
  }
  // --profile with --json: each kernel's time with its workload (the GPU kit compares them with cuDNN).
  CliRun profiled = Tunefarm("run " + dir_ + "sq.tfa --repeat 2 --profile --json");
  ASSERT_EQ(profiled.code, 0) << profiled.output;
  EXPECT_NE(profiled.output.find("\"kernels\": ["), std::string::npos) << profiled.output;
  EXPECT_NE(profiled.output.find("\"workload\": \"conv2d_nchwc:conv2d|N1_C3_H224_W224|K64_R3x3_S2x2"),
            std::string::npos)
      << profiled.output;
  EXPECT_EQ(run.output.find("\"kernels\""), std::string::npos) << "per-kernel times only with --profile";
  CliRun text = Tunefarm("run " + dir_ + "sq.tfa --repeat 2");
  EXPECT_NE(text.output.find("mean (ms)   median (ms)"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("Top 5 classes:"), std::string::npos) << text.output;

  WriteFile(dir_ + "good.npy", Npy("(1, 3, 224, 224)", 3 * 224 * 224));
  WriteFile(dir_ + "small.npy", Npy("(1, 3, 32, 32)", 3 * 32 * 32));
  CliRun ok =
      Tunefarm("run " + dir_ + "sq.tfa --input data=" + dir_ + "good.npy --output " + dir_ + "y.npy --repeat 1");
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_TRUE(Exists(dir_ + "y.npy"));
  CliRun wrong_name = Tunefarm("run " + dir_ + "sq.tfa --input image=" + dir_ + "good.npy");
  EXPECT_EQ(wrong_name.code, 1);
  EXPECT_NE(wrong_name.output.find("tunefarm run: the model has no input 'image' (inputs: data)"), std::string::npos)
      << wrong_name.output;
  CliRun wrong_shape = Tunefarm("run " + dir_ + "sq.tfa --input data=" + dir_ + "small.npy");
  EXPECT_EQ(wrong_shape.code, 1);
  EXPECT_NE(wrong_shape.output.find("input 'data' expects float32 [1, 3, 224, 224], " + dir_ +
                                    "small.npy holds float32 [1, 3, 32, 32]"),
            std::string::npos)
      << wrong_shape.output;
  WriteFile(dir_ + "truncated.tfa", ReadFile(dir_ + "sq.tfa").substr(0, 4000));
  CliRun truncated = Tunefarm("run " + dir_ + "truncated.tfa");
  EXPECT_EQ(truncated.code, 1);
  EXPECT_NE(truncated.output.find("corrupt artifact: truncated"), std::string::npos) << truncated.output;
  CliRun bad_level = Tunefarm("compile squeezenet-1.1 --opt-level 7 -o " + dir_ + "x.tfa");
  EXPECT_EQ(bad_level.code, 2);
  EXPECT_NE(bad_level.output.find("--opt-level '7': out of range, expected in [0, 3]"), std::string::npos);
}

// `run`'s files (issue 46): an input named with '=' can be given (P13); a device or a FIFO as an
// input is refused at once (P8); outputs are all or nothing (P12).
TEST_F(CompileRunCli, RunInputsAndOutputsAreCheckedBeforeAnythingIsReadOrWritten) {
  tunefarm::testing::OnnxBuilder b(13);
  b.Input("a=b", {4});
  b.Node("Relu", {"a=b"}, {"y"});
  b.Node("Neg", {"a=b"}, {"z"});
  b.Output("y");
  b.Output("z");
  WriteFile(dir_ + "eq.onnx", b.Bytes());
  ASSERT_EQ(Tunefarm("compile " + dir_ + "eq.onnx --records none -o " + dir_ + "eq.tfa").code, 0);
  WriteFile(dir_ + "x.npy", Npy("(4,)", 4));
  CliRun named = Tunefarm("run " + dir_ + "eq.tfa --input a=b=" + dir_ + "x.npy --output " + dir_ + "o.npy");
  EXPECT_EQ(named.code, 0) << named.output;
  EXPECT_TRUE(Exists(dir_ + "o.npy") && Exists(dir_ + "o_1.npy"));

  ASSERT_EQ(mkfifo((dir_ + "fifo.npy").c_str(), 0600), 0);
  for (const auto& [file, kind] : std::vector<std::pair<std::string, std::string>>{{"/dev/zero", "a character device"},
                                                                                   {dir_ + "fifo.npy", "a FIFO"}}) {
    CliRun refused = Tunefarm("run " + dir_ + "eq.tfa --input a=b=" + file);
    EXPECT_EQ(refused.code, 1) << refused.output;
    EXPECT_NE(refused.output.find(".npy file " + file + " is " + kind + ", not a regular file"), std::string::npos)
        << refused.output;
  }

  // The second output's path is a directory: refused before the first is written.
  std::remove((dir_ + "o.npy").c_str());
  std::remove((dir_ + "o_1.npy").c_str());
  ASSERT_EQ(mkdir((dir_ + "o_1.npy").c_str(), 0700), 0);
  CliRun half = Tunefarm("run " + dir_ + "eq.tfa --output " + dir_ + "o.npy");
  EXPECT_EQ(half.code, 1) << half.output;
  EXPECT_NE(half.output.find(dir_ + "o_1.npy is a directory: tunefarm writes only regular files (no output was "
                                    "written)"),
            std::string::npos)
      << half.output;
  EXPECT_FALSE(Exists(dir_ + "o.npy")) << "the first output was written before the second was refused";
}

// One artifact over a range of batches (docs/dynamic_shapes.md): compile and run say the range,
// run takes an .npy of any batch in it and writes the output at that batch, and a batch outside it
// or another shape is one error naming the input and the shapes it takes.
TEST_F(CompileRunCli, ARangeOfBatchesIsOneArtifactThatRunsEveryBatchInIt) {
  tunefarm::testing::OnnxBuilder b(13);
  b.SymbolicInput("x", {"batch", "4"});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  WriteFile(dir_ + "dyn.onnx", b.Bytes());
  CliRun c = Tunefarm("compile " + dir_ + "dyn.onnx --input-shape x:1..8x4 --records none -o " + dir_ + "dyn.tfa");
  ASSERT_EQ(c.code, 0) << c.output;
  EXPECT_NE(c.output.find("symbolic: 'batch' in [1, 8], one artifact for every size; memory planned for 8"),
            std::string::npos)
      << c.output;
  WriteFile(dir_ + "x3.npy", Npy("(3, 4)", 12));
  CliRun r = Tunefarm("run " + dir_ + "dyn.tfa --input x=" + dir_ + "x3.npy --output " + dir_ + "y3.npy");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("'batch' is symbolic in [1, 8] (memory planned for 8); this run's outputs: y [3, 4]"),
            std::string::npos)
      << r.output;
  EXPECT_NE(ReadFile(dir_ + "y3.npy").find("'shape': (3,4)"), std::string::npos);
  for (const auto& [shape, elements] : std::vector<std::pair<std::string, size_t>>{{"(9, 4)", 36}, {"(3, 5)", 15}}) {
    WriteFile(dir_ + "bad.npy", Npy(shape, elements));
    CliRun bad = Tunefarm("run " + dir_ + "dyn.tfa --input x=" + dir_ + "bad.npy");
    EXPECT_EQ(bad.code, 1) << bad.output;
    EXPECT_NE(bad.output.find("input 'x' expects float32 [1..8, 4], " + dir_ + "bad.npy holds float32 [" +
                              shape.substr(1, shape.size() - 2) + "]"),
              std::string::npos)
        << bad.output;
  }
}

TEST_F(CompileRunCli, RecordsDatabaseErrorsTouchNothing) {
  CliRun missing = Tunefarm("compile squeezenet-1.1 --records " + dir_ + "nope.db -o " + dir_ + "x.tfa");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("records database " + dir_ + "nope.db does not exist"), std::string::npos)
      << missing.output;
  EXPECT_FALSE(Exists(dir_ + "nope.db"));
  EXPECT_FALSE(Exists(dir_ + "x.tfa"));

  // A database from a newer tunefarm: refused before anything is written to it.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ + "newer.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE future(x); PRAGMA user_version = 99;", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const std::string before = ReadFile(dir_ + "newer.db");
  CliRun newer = Tunefarm("compile squeezenet-1.1 --records " + dir_ + "newer.db -o " + dir_ + "x.tfa");
  EXPECT_EQ(newer.code, 1);
  EXPECT_NE(newer.output.find("has schema version 99, newer than this tunefarm understands (3)"), std::string::npos)
      << newer.output;
  EXPECT_EQ(ReadFile(dir_ + "newer.db"), before);
  EXPECT_FALSE(Exists(dir_ + "newer.db-wal"));
  CliRun newer_import = Tunefarm("records import /dev/null --records " + dir_ + "newer.db");
  EXPECT_EQ(newer_import.code, 1);
  EXPECT_EQ(ReadFile(dir_ + "newer.db"), before);

  WriteFile(dir_ + "garbage.db", std::string(4096, 'x'));
  CliRun garbage = Tunefarm("records list --records " + dir_ + "garbage.db");
  EXPECT_EQ(garbage.code, 1);
  EXPECT_NE(garbage.output.find("is not a SQLite database"), std::string::npos) << garbage.output;
  EXPECT_EQ(ReadFile(dir_ + "garbage.db"), std::string(4096, 'x'));
}

TEST_F(CompileRunCli, ApplyHistoryBestUsesTheRecordAndWarnsForTheRest) {
  using namespace tunefarm::compiler;  // NOLINT
  Target host = HostTarget();
  Workload w = Conv2dWorkload(1, 64, 8, 8, 64, 3, 3, 1, 1);  // squeezenet-1.1 has none; use its first conv
  CliRun tasks = Tunefarm("tasks squeezenet-1.1 --json");
  size_t at = tasks.output.find("\"workload\": \"");
  ASSERT_NE(at, std::string::npos) << tasks.output;
  at += 13;
  std::string key = tasks.output.substr(at, tasks.output.find('"', at) - at);
  auto parsed = Workload::FromKey(key);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  w = *parsed;
  w.implementation = "conv2d_nchwc";  // the first task's (squeezenet's first conv, 3 -> 64 channels)
  auto space = GetConfigSpace(w, host);
  ASSERT_TRUE(space.ok());
  auto fallback = FallbackConfigIndex(w, host);
  ASSERT_TRUE(fallback.ok());
  int64_t index = -1;
  for (int64_t i = 0; i < space->size() && index < 0; ++i) {
    auto c = space->Get(i);
    if (c.ok() && space->IsValid(*c) && i != *fallback) index = i;
  }
  ASSERT_GE(index, 0);
  std::string config = space->Get(index)->ToJson();
  std::string escaped;
  for (char ch : config) escaped += ch == '"' ? std::string("\\\"") : std::string(1, ch);
  std::string line = "{\"workload\":\"" + key + "\",\"template\":\"conv2d_nchwc\",\"target\":\"" + host.ToString() +
                     "\",\"status\":\"ok\",\"config_index\":" + std::to_string(index) + ",\"config\":\"" + escaped +
                     "\",\"mean_ms\":0.5,\"costs_ms\":[0.5]}";
  WriteFile(dir_ + "records.jsonl", line + "\n");
  CliRun imported = Tunefarm("records import " + dir_ + "records.jsonl --records " + dir_ + "t.db");
  ASSERT_EQ(imported.code, 0) << imported.output;
  EXPECT_NE(imported.output.find("imported 1 trials"), std::string::npos) << imported.output;
  CliRun again = Tunefarm("records import " + dir_ + "records.jsonl --records " + dir_ + "t.db");
  EXPECT_NE(again.output.find("imported 1 trials"), std::string::npos) << "no uid: a new trial each time\n"
                                                                       << again.output;

  // An imported line without "threads" was measured at 1 thread, so the compile is for 1.
  CliRun c = Tunefarm("compile squeezenet-1.1 --threads 1 --records " + dir_ + "t.db -o " + dir_ + "sq.tfa");
  ASSERT_EQ(c.code, 0) << c.output;
  EXPECT_EQ(c.output.find("no tuning record for " + w.ImplementationKey() + " "), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("from records"), std::string::npos);
  EXPECT_NE(c.output.find(", 1 from records)"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("layouts: planned over the graph with records for 1 tunable nodes; 0 run another config than "
                          "their own fastest record; estimated "),
            std::string::npos)
      << c.output;

  // Export then import into a fresh database keeps every trial once (uids).
  CliRun exported = Tunefarm("records export --records " + dir_ + "t.db -o " + dir_ + "export.jsonl");
  ASSERT_EQ(exported.code, 0) << exported.output;
  CliRun moved = Tunefarm("records import " + dir_ + "export.jsonl --records " + dir_ + "copy.db");
  EXPECT_NE(moved.output.find("imported 2 trials"), std::string::npos) << moved.output;
  CliRun dup = Tunefarm("records import " + dir_ + "export.jsonl --records " + dir_ + "copy.db");
  EXPECT_NE(dup.output.find("imported 0 trials"), std::string::npos) << dup.output;

  WriteFile(dir_ + "bad.jsonl", line + "\n{\"target\":\"x\",\"status\":\"ok\",\"config_index\":1}\n");
  CliRun bad = Tunefarm("records import " + dir_ + "bad.jsonl --records " + dir_ + "copy.db");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.output.find("line 2: missing field 'workload' (nothing imported)"), std::string::npos) << bad.output;
  CliRun stats = Tunefarm("records stats --records " + dir_ + "copy.db --json");
  EXPECT_NE(stats.output.find("\"trials\": 2"), std::string::npos) << stats.output;
}

// tests/data/records_v2.db was written by `tunefarm tune squeezenet-1.1` built before workload keys
// became target-neutral (schema version 2, keys such as "conv2d_nchwc|N1_C3..."; how it was made:
// tests/data/README.md). compile, a reader, applies every task it tuned without writing the file;
// after a writer upgraded it to version 3, compile applies the same records.
TEST_F(CompileRunCli, ARecordsDatabaseFromBeforeTargetNeutralKeysStillAppliesItsRecords) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  const std::string fixture = std::string(src ? src : ".") + "/tests/data/records_v2.db";
  if (!Exists(fixture)) TUNEFARM_MISSING_FIXTURE(fixture << " not present");
  const std::string db = dir_ + "old.db", original = ReadFile(fixture);
  WriteFile(db, original);
  auto user_version = [&] { return tunefarm::testing::RunCommand("sqlite3 " + db + " 'PRAGMA user_version'").output; };
  ASSERT_EQ(user_version(), "2\n") << "the fixture is a version-2 database";

  const std::vector<std::string> tasks = RecordedTasks(db);
  EXPECT_GE(tasks.size(), 10u);
  ExpectAllApplied(db, tasks, "read as version 2");
  EXPECT_EQ(user_version(), "2\n") << "a reader never upgrades the file";
  EXPECT_TRUE(ReadFile(db) == original) << "a reader never writes the file";

  // Copied as it is read into a new database, the trials get this schema's keys.
  ASSERT_EQ(Tunefarm("records copy --from " + db + " --to " + dir_ + "copy.db").code, 0);
  EXPECT_EQ(RecordedTasks(dir_ + "copy.db"), tasks);
  ExpectAllApplied(dir_ + "copy.db", tasks, "copied into a new database");

  WriteFile(dir_ + "none.jsonl", "");
  ASSERT_EQ(Tunefarm("records import " + dir_ + "none.jsonl --records " + db).code, 0);  // a writer: upgrades it
  ASSERT_EQ(user_version(), "3\n");
  EXPECT_EQ(RecordedTasks(db), tasks) << "the same tasks, now with target-neutral keys";
  CliRun old_keys = tunefarm::testing::RunCommand("sqlite3 " + db +
                                                  " \"SELECT COUNT(*) FROM workloads WHERE key LIKE 'conv2d_nchwc%'\"");
  EXPECT_EQ(old_keys.output, "0\n");
  ExpectAllApplied(db, tasks, "upgraded to version 3");
}

// A records database as the version before issue 47's refactors wrote it (tests/data/records_v3.db,
// schema version 3, by tunefarm built from 102ff0d): compile applies every task it tuned, and reading
// it changes nothing.
TEST_F(CompileRunCli, ARecordsDatabaseOfTheLastSchemaStillAppliesItsRecords) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  const std::string fixture = std::string(src ? src : ".") + "/tests/data/records_v3.db";
  if (!Exists(fixture)) TUNEFARM_MISSING_FIXTURE(fixture << " not present");
  const std::string db = dir_ + "v3.db", original = ReadFile(fixture);
  WriteFile(db, original);
  ASSERT_EQ(tunefarm::testing::RunCommand("sqlite3 " + db + " 'PRAGMA user_version'").output, "3\n");
  const std::vector<std::string> tasks = RecordedTasks(db);
  EXPECT_GE(tasks.size(), 10u);
  ExpectAllApplied(db, tasks, "written by 102ff0d");
  EXPECT_TRUE(ReadFile(db) == original) << "a reader never writes the file";
}

// Readers of a database they cannot write (a team's records in a read-only directory): records
// list/best/stats/export and compile --records work, and nothing appears beside the file.
TEST_F(CompileRunCli, ReadersWorkOnADatabaseInAReadOnlyDirectory) {
  const std::string line =
      "{\"workload\":\"dense_pack|N1_I16|O8|NC|float32\",\"target\":\"" + tunefarm::compiler::HostTarget().ToString() +
      "\",\"status\":\"ok\",\"config_index\":0,\"config\":\"{}\",\"mean_ms\":0.5,\"costs_ms\":[0.5]}";
  WriteFile(dir_ + "one.jsonl", line + "\n");
  ASSERT_EQ(system(("mkdir -p " + dir_ + "ro " + dir_ + "out && chmod 0777 " + dir_ + "out").c_str()), 0);
  CliRun imported = Tunefarm("records import " + dir_ + "one.jsonl --records " + dir_ + "ro/team.db");
  ASSERT_EQ(imported.code, 0) << imported.output;
  ASSERT_EQ(system(("chmod 0555 " + dir_ + "ro && chmod 0444 " + dir_ + "ro/team.db").c_str()), 0);
  // Root writes anywhere: the reader then runs as nobody, as a compile job's account would.
  std::string as_reader = std::string(TUNEFARM_CLI) + " ";
  if (geteuid() == 0) {
    if (system("setpriv --version > /dev/null 2>&1") != 0)
      TUNEFARM_MISSING_FIXTURE("setpriv (util-linux) not installed");
    as_reader = "setpriv --reuid=65534 --regid=65534 --clear-groups " + as_reader;
  }
  const std::string db = " --records " + dir_ + "ro/team.db";
  for (const std::string& reader : {"records list" + db, "records best" + db, "records stats --json" + db,
                                    "records export -o " + dir_ + "out/export.jsonl" + db,
                                    "compile squeezenet-1.1 -o " + dir_ + "out/sq.tfa" + db}) {
    CliRun r = tunefarm::testing::RunCommand(as_reader + reader);
    EXPECT_EQ(r.code, 0) << reader << "\n" << r.output;
    EXPECT_EQ(r.output.find("readonly"), std::string::npos) << reader << "\n" << r.output;
  }
  // Imported as written before schema version 3 (the key began with its template): exported with
  // the target-neutral key and the template beside it.
  EXPECT_NE(ReadFile(dir_ + "out/export.jsonl")
                .find("\"workload\":\"dense|N1_I16|O8|NC|float32\",\"template\":\"dense_pack\""),
            std::string::npos)
      << ReadFile(dir_ + "out/export.jsonl");
  CliRun listing = tunefarm::testing::RunCommand("ls -A " + dir_ + "ro");
  EXPECT_EQ(listing.output, "team.db\n") << "a reader left files beside the database";
  // A writer is refused with SQLite's reason, and the database is unchanged.
  CliRun writer = tunefarm::testing::RunCommand(as_reader + "records import " + dir_ + "one.jsonl" + db);
  EXPECT_EQ(writer.code, 1) << writer.output;
  EXPECT_NE(writer.output.find("records database " + dir_ + "ro/team.db"), std::string::npos) << writer.output;
  ASSERT_EQ(system(("chmod 0755 " + dir_ + "ro").c_str()), 0);
  EXPECT_NE(Tunefarm("records stats --json" + db).output.find("\"trials\": 1"), std::string::npos);
}

}  // namespace
