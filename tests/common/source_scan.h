// Scans of the project's own sources for tests that check a rule of the code base (nothing asks a
// target its kind outside the backends; no second list of templates): every line of the .cc and .h
// files under some top-level folders that breaks the rule, as "path:line: text".
#ifndef TUNEFARM_TESTS_COMMON_SOURCE_SCAN_H_
#define TUNEFARM_TESTS_COMMON_SOURCE_SCAN_H_

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace tunefarm::testing {

// `src`: the repository root (TUNEFARM_SOURCE_DIR); `dirs`: folders under it; files whose path
// relative to src starts with one of `allowed` are skipped; `breaks(line)` says a line breaks the rule.
inline std::vector<std::string> LinesBreakingARule(const std::string& src, const std::vector<std::string>& dirs,
                                                   const std::vector<std::string>& allowed,
                                                   const std::function<bool(const std::string&)>& breaks) {
  std::vector<std::string> offenders;
  for (const std::string& dir : dirs) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(src) / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      const std::string rel = std::filesystem::relative(e.path(), src).string();
      bool skip = false;
      for (const auto& a : allowed) skip = skip || rel.rfind(a, 0) == 0;
      if (skip) continue;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        if (breaks(line)) offenders.push_back(rel + ":" + std::to_string(n) + ": " + line);
      }
    }
  }
  return offenders;
}

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_SOURCE_SCAN_H_
