// The tunefarm CLI as a user runs it: exit codes and the one-line messages.
#include <gtest/gtest.h>

#include <string>

#include "common/test_files.h"

namespace {

using CliRun = tunefarm::testing::CommandResult;

CliRun Tunefarm(const std::string& args) { return tunefarm::testing::RunCommand(std::string(TUNEFARM_CLI) + " " + args); }

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
  EXPECT_NE(zoo.output.find("18 tasks for squeezenet-1.1"), std::string::npos) << zoo.output;
  CliRun bad_target = Tunefarm("tasks x.onnx --target nonsense");
  EXPECT_EQ(bad_target.code, 1);
  EXPECT_NE(bad_target.output.find("unknown target kind 'nonsense'"), std::string::npos);
  CliRun bad_flag = Tunefarm("tasks x.onnx --frob 1");
  EXPECT_EQ(bad_flag.code, 2);
  EXPECT_NE(bad_flag.output.find("unknown flag --frob"), std::string::npos);
}

TEST(Cli, TasksOfTheReferenceModel) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  std::string model = std::string(src ? src : ".") + "/../shared/models/resnet18.onnx";
  if (FILE* f = fopen(model.c_str(), "rb")) {
    fclose(f);
  } else {
    GTEST_SKIP() << model << " not present";
  }
  CliRun r = Tunefarm("tasks " + model + " --json");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("\"workload\": \"dense_pack|N1_I512|O1000|NC|float32\""), std::string::npos) << r.output;
  // The dense layer's second implementation is a task of its own, marked as an alternative.
  EXPECT_NE(r.output.find("\"workload\": \"dense_nopack|N1_I512|O1000|NC|float32\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"alternative\": true"), std::string::npos) << r.output;
}

}  // namespace
