// Small helpers the integration tests share: files, the shared reference models, running a
// command and capturing its output.
#ifndef TUNEFARM_TESTS_COMMON_TEST_FILES_H_
#define TUNEFARM_TESTS_COMMON_TEST_FILES_H_

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tunefarm::testing {

// Whether a missing fixture (the shared models, qemu, a cross-built binary, openssl, ONNX's test
// data) fails the test instead of skipping it: CI sets TUNEFARM_REQUIRE_FIXTURES=1 (.ci/run), so a
// machine that lacks one cannot pass by skipping.
inline bool FixturesRequired() {
  const char* v = std::getenv("TUNEFARM_REQUIRE_FIXTURES");
  return v && std::string(v) == "1";
}

// The names in a directory (no hidden ones), sorted; none when it cannot be read.
inline std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// ../shared/models/ beside the source tree (tests skip when it is absent).
// TUNEFARM_MODELS_DIR overrides it (a GPU check kit's own copy, or none).
inline std::string SharedModelsDir() {
  if (const char* dir = std::getenv("TUNEFARM_MODELS_DIR"); dir && *dir) return std::string(dir) + "/";
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  return std::string(src ? src : ".") + "/../shared/models/";
}

// A program built with the tests (rpc_server, tunefarm-measure-child, ...): the one beside this
// test binary when there is one -- build/bin, or the bin/ of a GPU check kit unpacked anywhere --
// else `built_path`, the build tree's path compiled in.
inline std::string ProgramPath(const std::string& built_path) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    std::string dir(self, size_t(n));
    dir.resize(dir.rfind('/') + 1);
    const std::string beside = dir + built_path.substr(built_path.rfind('/') + 1);
    if (Exists(beside)) return beside;
  }
  return built_path;
}

struct CommandResult {
  int code = -1;  // exit status, -1 when the command did not exit normally
  std::string output;
};

// Runs a shell command, stdout and stderr together.
inline CommandResult RunCommand(const std::string& command) {
  CommandResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) r.output.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace tunefarm::testing

// Skips the test for a missing fixture -- or fails it where fixtures are required. `what` is a
// stream expression: TUNEFARM_MISSING_FIXTURE(path << " not present").
#define TUNEFARM_MISSING_FIXTURE(what)                                           \
  do {                                                                           \
    if (::tunefarm::testing::FixturesRequired()) {                               \
      GTEST_FAIL() << "missing fixture (TUNEFARM_REQUIRE_FIXTURES=1): " << what; \
    } else {                                                                     \
      GTEST_SKIP() << what;                                                      \
    }                                                                            \
  } while (0)

#endif  // TUNEFARM_TESTS_COMMON_TEST_FILES_H_
