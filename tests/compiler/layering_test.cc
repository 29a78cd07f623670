// The compiler's folders are its layers: the include graph between them (a file in folder A
// including "compiler/B/...") has no cycle, so each folder can be read knowing only those below it.
// model/passes counts as a folder of its own (the graph passes sit between the operator registry
// and the model driver). It had four cycles (ir <-> te, te <-> passes, ops (now compute) <-> schedule, and
// graph passes <-> operators <-> model <-> frontend) before the folders were re-shelved.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace tunefarm::compiler {
namespace {

std::string FolderOf(const std::string& path_below_compiler) {
  std::vector<std::string> parts;
  std::stringstream ss(path_below_compiler);
  for (std::string p; std::getline(ss, p, '/');) parts.push_back(p);
  if (parts.size() > 2 && parts[1] == "passes" && (parts[0] == "model" || parts[0] == "graph"))
    return parts[0] + "/passes";
  if (parts.size() > 2 && parts[0] == "model" && parts[1] == "lowering") return "model/lowering";
  return parts.empty() ? "" : parts[0];
}

// An edge path that closes a cycle through `from`, or empty.
std::vector<std::string> CycleThrough(const std::map<std::string, std::set<std::string>>& edges,
                                      const std::string& from) {
  std::vector<std::string> path;
  std::set<std::string> seen;
  std::function<bool(const std::string&)> walk = [&](const std::string& at) {
    path.push_back(at);
    auto it = edges.find(at);
    if (it != edges.end()) {
      for (const std::string& next : it->second) {
        if (next == from) {
          path.push_back(next);
          return true;
        }
        if (seen.insert(next).second && walk(next)) return true;
      }
    }
    path.pop_back();
    return false;
  };
  return walk(from) ? path : std::vector<std::string>{};
}

TEST(Layering, NoIncludeCycleBetweenCompilerFolders) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const std::filesystem::path root = std::filesystem::path(src) / "compiler";
  std::map<std::string, std::set<std::string>> edges;
  std::map<std::pair<std::string, std::string>, std::string> example;
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
    const std::string rel = std::filesystem::relative(e.path(), root).string();
    const std::string from = FolderOf(rel);
    if (rel.find('/') == std::string::npos || from == "include")
      continue;  // the public headers include nothing internal
    ++files;
    std::ifstream in(e.path());
    const std::string prefix = "#include \"compiler/";
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(prefix, 0) != 0) continue;
      const std::string to = FolderOf(line.substr(prefix.size(), line.find('"', prefix.size()) - prefix.size()));
      if (to == from) continue;
      edges[from].insert(to);
      example.emplace(std::make_pair(from, to), rel);
    }
  }
  EXPECT_GT(files, 150);
  // The layers the issue named, checked by name as well as by the absence of cycles.
  for (const auto& [low, high] : std::vector<std::pair<std::string, std::string>>{{"ir", "te"},
                                                                                  {"te", "passes"},
                                                                                  {"compute", "schedule"},
                                                                                  {"graph", "operators"},
                                                                                  {"operators", "model"},
                                                                                  {"operators", "model/passes"},
                                                                                  {"operators", "model/lowering"},
                                                                                  {"model/lowering", "model/passes"},
                                                                                  {"model/passes", "model"},
                                                                                  {"codegen", "backend"}}) {
    EXPECT_EQ(edges[low].count(high), 0u) << low << "/ includes " << high << "/ (" << example[{low, high}] << ")";
  }
  for (const auto& [folder, _] : edges) {
    const std::vector<std::string> cycle = CycleThrough(edges, folder);
    if (cycle.empty()) continue;
    std::string text;
    for (size_t i = 0; i + 1 < cycle.size(); ++i) {
      text += cycle[i] + "/ -> " + cycle[i + 1] + "/ (" + example[{cycle[i], cycle[i + 1]}] + ")\n";
    }
    ADD_FAILURE() << "an include cycle through compiler/" << folder << "/:\n" << text;
    break;
  }
}

// Every graph pass (model/passes/, one per file) is declared in one namespace, tunefarm::graph, the
// namespace of the IR it rewrites; only the ordered list (pipeline.h) is the compiler's.
TEST(Layering, EveryGraphPassIsInTheGraphNamespace) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  int passes = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(src) / "compiler/model/passes")) {
    if (e.path().extension() != ".h" || e.path().filename() == "pipeline.h") continue;
    ++passes;
    std::ifstream in(e.path());
    std::set<std::string> namespaces;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("namespace tunefarm", 0) == 0) namespaces.insert(line);
    }
    EXPECT_EQ(namespaces, std::set<std::string>{"namespace tunefarm::graph {"}) << e.path().filename();
  }
  EXPECT_GE(passes, 11);
}

}  // namespace
}  // namespace tunefarm::compiler
