// The runtime's public headers (runtime/include/tunefarm/runtime/) are what a program embedding the
// runtime compiles, on a workstation or a board: nothing in them reaches CLI11, the programs' flag
// helper, which lives in its own library (runtime/command_line/, tunefarm_command_line).
#include <gtest/gtest.h>

#include <sstream>

#include "common/source_scan.h"

namespace tunefarm::runtime {
namespace {

TEST(RuntimeHeaders, TheRuntimesPublicHeadersIncludeNoCli11) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const auto offenders = testing::LinesBreakingARule(src, {"runtime/include"}, {}, [](const std::string& line) {
    return line.find("#include") != std::string::npos &&
           (line.find("CLI/") != std::string::npos || line.find("command_line") != std::string::npos);
  });
  std::ostringstream all;
  for (const auto& o : offenders) all << o << "\n";
  EXPECT_TRUE(offenders.empty()) << "CLI11 belongs to tunefarm_command_line (runtime/command_line/):\n" << all.str();
}

}  // namespace
}  // namespace tunefarm::runtime
