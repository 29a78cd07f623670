// The tunefarm CLI as a user runs it: exit codes and the one-line messages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/test_files.h"

namespace {

using CliRun = tunefarm::testing::CommandResult;

CliRun Tunefarm(const std::string& args) {
  return tunefarm::testing::RunCommand(std::string(TUNEFARM_CLI) + " " + args);
}

TEST(Cli, HelpListsCommands) {
  CliRun r = Tunefarm("help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("tasks"), std::string::npos);
}

TEST(Cli, UserErrorsAreOneClearMessage) {
  CliRun unknown = Tunefarm("frobnicate");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.output.find("unknown command 'frobnicate'"), std::string::npos);
  CliRun missing = Tunefarm("tasks /nonexistent.onnx");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("tunefarm tasks: model '/nonexistent.onnx' is neither a file nor a zoo model"),
            std::string::npos)
      << missing.output;
  CliRun zoo = Tunefarm("tasks squeezenet-1.1");
  EXPECT_EQ(zoo.code, 0) << zoo.output;
  EXPECT_NE(zoo.output.find("22 tasks for squeezenet-1.1"), std::string::npos) << zoo.output;
  CliRun bad_target = Tunefarm("tasks x.onnx --target nonsense");
  EXPECT_EQ(bad_target.code, 1);
  EXPECT_NE(bad_target.output.find("unknown target kind 'nonsense'"), std::string::npos);
  // Each integer flag names itself and its range.
  CliRun threads = Tunefarm("tune squeezenet-1.1 --threads 0");
  EXPECT_EQ(threads.code, 2);
  EXPECT_NE(threads.output.find("tunefarm tune: --threads '0': out of range, expected in [1, 1024]"), std::string::npos)
      << threads.output;
  CliRun total = Tunefarm("tune squeezenet-1.1 --total-trials 0");
  EXPECT_EQ(total.code, 2);
  EXPECT_NE(total.output.find("--total-trials '0': out of range, expected in [1, 100000000]"), std::string::npos)
      << total.output;
  CliRun bad_flag = Tunefarm("tasks x.onnx --frob 1");
  EXPECT_EQ(bad_flag.code, 2);
  EXPECT_NE(bad_flag.output.find("unknown flag --frob"), std::string::npos);
}

// Each command declares its flags once (CLI11): its --help, usage line and errors come from there.
TEST(Cli, EveryCommandHasHelpAndOneUsageFromItsDeclaration) {
  for (const char* command : {"tune", "dashboard", "jobs", "ops", "tasks", "compile", "run", "records", "tracker"}) {
    CliRun help = Tunefarm(std::string(command) + " --help");
    EXPECT_EQ(help.code, 0) << command << ": " << help.output;
    EXPECT_NE(help.output.find(std::string("Usage: tunefarm ") + command), std::string::npos) << help.output;
  }
  CliRun compile_help = Tunefarm("compile --help");
  EXPECT_NE(compile_help.output.find("-o,--output OUT REQUIRED"), std::string::npos) << compile_help.output;
  EXPECT_NE(compile_help.output.find("--opt-level N"), std::string::npos) << compile_help.output;
  CliRun import_help = Tunefarm("records import --help");
  EXPECT_NE(import_help.output.find("Usage: tunefarm records import [OPTIONS] FILE"), std::string::npos)
      << import_help.output;

  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"compile squeezenet-1.1",
            "tunefarm compile: --output is required\nusage: tunefarm compile [OPTIONS] MODEL"},
           {"compile squeezenet-1.1 -o x.tfa --opt-level 7",
            "tunefarm compile: --opt-level '7': out of range, expected in [0, 3]"},
           {"records import", "tunefarm records import: FILE is required"},
           {"records frob", "tunefarm records: unexpected argument 'frob'"},
           {"records list --target native", "tunefarm records list: unknown flag --target"},
           {"tune m.onnx --trials 3 --total-trials 5", "tunefarm tune: --trials excludes --total-trials"},
           {"tune m.onnx --scheduler gradient", "tunefarm tune: --scheduler requires --total-trials"},
           {"tune m.onnx --tracker 127.0.0.1:1", "tunefarm tune: --tracker requires --key"},
           {"tune m.onnx --daemon 127.0.0.1:1 --records r.db", "tunefarm tune: --records excludes --daemon"},
           {"tune m.onnx --tuner bayes", "tunefarm tune: --tuner: bayes not in {xgb,ga,random,grid}"},
           {"tune m.onnx --layouts blocked", "tunefarm tune: --layouts: blocked not in {model,any}"},
           {"jobs watch x --daemon 127.0.0.1:1", "tunefarm jobs watch: JOB_ID 'x': expected an integer"},
           {"jobs list", "tunefarm jobs list: --daemon is required"},
           {"tracker status", "tunefarm tracker status: --tracker is required"},
           {"run a.tfa --input x", "tunefarm run: --input takes NAME=FILE.npy, got 'x'"},
           {"run a.tfa --device gpu",
            "tunefarm run: --device: unknown device 'gpu': expected cpu, cuda or cuda:N (N from 0 to 1023)"},
           {"ops extra", "tunefarm ops: unexpected argument 'extra'"},
       }) {
    CliRun r = Tunefarm(c.args);
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << ": " << r.output;
  }
}

TEST(Cli, TasksOfTheReferenceModel) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  std::string model = std::string(src ? src : ".") + "/../shared/models/resnet18.onnx";
  if (FILE* f = fopen(model.c_str(), "rb")) {
    fclose(f);
  } else {
    TUNEFARM_MISSING_FIXTURE(model << " not present");
  }
  CliRun r = Tunefarm("tasks " + model + " --json");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("\"template\": \"dense_pack\",\n    \"workload\": \"dense|N1_I512|O1000|NC|float32\""),
            std::string::npos)
      << r.output;
  // The dense layer's second implementation is a task of its own, marked as an alternative: the
  // same target-neutral workload, another template.
  EXPECT_NE(r.output.find("\"template\": \"dense_nopack\",\n    \"workload\": \"dense|N1_I512|O1000|NC|float32\""),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\"alternative_of\": \"dense_pack:dense|N1_I512|O1000|NC|float32\""), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\"alternative\": true"), std::string::npos) << r.output;
}

// Hostile outputs and inputs (issue 15): refused before any work, with the reason, nothing replaced.
TEST(Cli, OutputsThatAreNotRegularFilesAndBrokenInputsAreRefused) {
  const std::string dir = ::testing::TempDir() + "tunefarm_cli_hostile_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  CliRun dev_null = Tunefarm("compile squeezenet-1.1 -o /dev/null");
  EXPECT_EQ(dev_null.code, 2);
  EXPECT_NE(
      dev_null.output.find("tunefarm compile: -o: /dev/null is a character device: tunefarm writes only regular files"),
      std::string::npos)
      << dev_null.output;
  CliRun directory = Tunefarm("compile " + dir + " -o " + dir + "/m.tfa");
  EXPECT_EQ(directory.code, 1);
  EXPECT_NE(directory.output.find("ONNX file " + dir + " is a directory"), std::string::npos) << directory.output;

  const std::string db = dir + "/r.db";
  ASSERT_EQ(system(("sqlite3 " + db + " 'CREATE TABLE x(y); PRAGMA user_version = -1'").c_str()), 0);
  CliRun damaged = Tunefarm("records list --records " + db);
  EXPECT_EQ(damaged.code, 1);
  EXPECT_NE(damaged.output.find("has schema version -1, which no tunefarm writes: its header is damaged"),
            std::string::npos)
      << damaged.output;

  const std::string good_db = dir + "/good.db", lines = dir + "/lines.jsonl";
  std::FILE* f = std::fopen(lines.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(
      R"({"workload":"w","template":"t","target":"llvm -mcpu=no-such-cpu-at-all","status":"timeout","config_index":0})"
      "\n",
      f);
  std::fclose(f);
  CliRun import = Tunefarm("records import " + lines + " --records " + good_db);
  EXPECT_EQ(import.code, 1);
  EXPECT_NE(import.output.find("line 1: field 'target': "), std::string::npos) << import.output;
  EXPECT_NE(import.output.find("(nothing imported)"), std::string::npos) << import.output;
  CliRun export_dev = Tunefarm("records export -o /dev/null --records " + good_db);
  EXPECT_EQ(export_dev.code, 1);
  EXPECT_NE(export_dev.output.find("/dev/null is a character device"), std::string::npos) << export_dev.output;
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

// `records check` lists what makes a database refused and exits 1; `records repair` keeps the sound
// trials in another database, naming the ones left out (issue 30).
TEST(Cli, RecordsCheckAndRepairAHostileDatabase) {
  const std::string dir = ::testing::TempDir() + "tunefarm_cli_repair_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  const std::string lines = dir + "/t.jsonl", bad = dir + "/bad.db", good = dir + "/good.db";
  std::FILE* f = std::fopen(lines.c_str(), "w");
  ASSERT_NE(f, nullptr);
  for (int c = 1; c <= 2; ++c) {
    std::fprintf(f,
                 "{\"workload\":\"w\",\"template\":\"t\",\"target\":\"llvm\",\"status\":\"ok\",\"config_index\":%d,"
                 "\"mean_ms\":%d.0}\n",
                 c, c);
  }
  std::fclose(f);
  ASSERT_EQ(Tunefarm("records import " + lines + " --records " + bad).code, 0);
  ASSERT_EQ(system(("sqlite3 " + bad +
                    " \"UPDATE trials SET mean_ms = -1 WHERE config_index = 2; "
                    "CREATE TRIGGER eat AFTER INSERT ON trials BEGIN DELETE FROM trials; END;\"")
                       .c_str()),
            0);
  CliRun check = Tunefarm("records check --records " + bad);
  EXPECT_EQ(check.code, 1) << check.output;
  EXPECT_NE(check.output.find("records database " + bad +
                              ": 2 problem(s)\n  trigger 'eat': SQL that would run inside "
                              "tunefarm"),
            std::string::npos)
      << check.output;
  EXPECT_NE(check.output.find("  trial 2: field 'mean_ms' must not be negative"), std::string::npos) << check.output;
  CliRun repair = Tunefarm("records repair --records " + bad + " -o " + good);
  EXPECT_EQ(repair.code, 0) << repair.output;
  EXPECT_NE(repair.output.find("kept 1 trials of " + bad + " in " + good +
                               " (1 new there); left out 1\n"
                               "  trial 2: field 'mean_ms' must not be negative"),
            std::string::npos)
      << repair.output;
  CliRun clean = Tunefarm("records check --records " + good);
  EXPECT_EQ(clean.code, 0) << clean.output;
  EXPECT_NE(clean.output.find("no problems found"), std::string::npos) << clean.output;
  CliRun same = Tunefarm("records repair --records " + bad + " -o " + bad);
  EXPECT_EQ(same.code, 1);
  EXPECT_NE(same.output.find("is the database --records names (the source is only read)"), std::string::npos)
      << same.output;
  // The same file under another name (issue 46, P11): refused too, and the source is unchanged.
  const std::string before = tunefarm::testing::ReadFile(bad);
  CliRun alias = Tunefarm("records repair --records " + bad + " -o " + dir + "/./" + bad.substr(bad.rfind('/') + 1));
  EXPECT_EQ(alias.code, 1) << alias.output;
  EXPECT_NE(alias.output.find("is the database --records names"), std::string::npos) << alias.output;
  EXPECT_EQ(tunefarm::testing::ReadFile(bad), before);
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

// Under a file size limit (issue 30): compile and tune fail with exit 1 and one message naming the
// limit, never a silent death by SIGXFSZ, and leave no artifact behind.
TEST(Cli, AFileSizeLimitIsOneClearErrorNotASignal) {
  const std::string dir = ::testing::TempDir() + "tunefarm_cli_fsize_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  const std::string limited = "ulimit -f 16; TMPDIR=" + dir + " exec " + std::string(TUNEFARM_CLI) + " ";
  CliRun compile =
      tunefarm::testing::RunCommand("bash -c '" + limited + "compile squeezenet-1.1 -o " + dir + "/m.tfa'");
  EXPECT_EQ(compile.code, 1) << compile.output;  // 128 + SIGXFSZ (153) before
  EXPECT_NE(compile.output.find("tunefarm compile: cannot write " + dir), std::string::npos) << compile.output;
  EXPECT_NE(compile.output.find("tunefarm: a write went past this process's file size limit (ulimit -f: 16384 bytes)"),
            std::string::npos)
      << compile.output;
  EXPECT_NE(access((dir + "/m.tfa").c_str(), F_OK), 0) << "a partial artifact was left";
  CliRun tune = tunefarm::testing::RunCommand("bash -c '" + limited +
                                              "tune squeezenet-1.1 --total-trials 4 --records " + dir + "/t.db'");
  EXPECT_EQ(tune.code, 1) << tune.output;
  EXPECT_NE(
      tune.output.find("tunefarm: a write went past this process's file size limit (ulimit -f: 16384 bytes), which is "
                       "why the command failed"),
      std::string::npos)
      << tune.output;
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
