// The folder dependencies of docs/ARCHITECTURE.md ("Allowed includes") hold in the code: every
// project #include under core/, kernels/ and gui/ goes to its own folder or to one the table allows,
// every folder is in the table, the table has no cycle (so neither has the code), and no Qt header is
// included under core/ or kernels/. A failure names the file and line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_models.h"

namespace inferscope::test {
namespace {

namespace fs = std::filesystem;

using Allowed = std::map<std::string, std::set<std::string>>;

// The folder a repository path is in: its first two components ("core/spec"), or the top folder for
// a file directly in it ("gui/main.cpp" is in "gui").
std::string folder_of(const std::string& path) {
  const size_t first = path.find('/');
  const size_t second = path.find('/', first + 1);
  return second == std::string::npos ? path.substr(0, first) : path.substr(0, second);
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" `");
  const size_t e = s.find_last_not_of(" `");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The "| folder | may include |" table: each folder and the folders it may include ("—": none).
Allowed read_table(const std::string& markdown_path) {
  std::ifstream in(markdown_path);
  Allowed allowed;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| folder | may include |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.rfind("| ---", 0) == 0) continue;
    if (line.empty() || line[0] != '|') break;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) cells.push_back(trim(cell));
    if (cells.size() < 2) continue;
    std::set<std::string>& to = allowed[cells[0]];
    std::stringstream list(cells[1]);
    for (std::string name; std::getline(list, name, ',');) {
      if (trim(name) != "—") to.insert(trim(name));
    }
  }
  return allowed;
}

// A cycle among the allowed folders, as "a -> b -> a"; empty when there is none.
std::string find_cycle(const Allowed& allowed) {
  std::map<std::string, int> state;  // 1: on the path, 2: done
  std::vector<std::string> path;
  std::string cycle;
  std::function<bool(const std::string&)> visit = [&](const std::string& f) {
    state[f] = 1;
    path.push_back(f);
    const auto it = allowed.find(f);
    if (it != allowed.end()) {
      for (const std::string& to : it->second) {
        if (state[to] == 1) {
          for (auto p = std::find(path.begin(), path.end(), to); p != path.end(); ++p) cycle += *p + " -> ";
          cycle += to;
          return true;
        }
        if (state[to] == 0 && visit(to)) return true;
      }
    }
    path.pop_back();
    state[f] = 2;
    return false;
  };
  for (const auto& [f, to] : allowed) {
    if (state[f] == 0 && visit(f)) return cycle;
  }
  return {};
}

TEST(Architecture, TheFolderTableHasNoCycle) {
  const Allowed allowed = read_table(source_path("docs/ARCHITECTURE.md"));
  ASSERT_FALSE(allowed.empty()) << "no \"| folder | may include |\" table in docs/ARCHITECTURE.md";
  EXPECT_EQ(find_cycle(allowed), "");
  for (const auto& [f, to] : allowed) {
    for (const std::string& t : to) EXPECT_TRUE(allowed.contains(t)) << f << " may include " << t << ", which the table does not list";
  }
}

TEST(Architecture, EveryIncludeIsOneTheTableAllows) {
  const Allowed allowed = read_table(source_path("docs/ARCHITECTURE.md"));
  ASSERT_FALSE(allowed.empty());
  const std::regex project_include(R"(^\s*#\s*include\s+"((core|kernels|gui|tests)/[^"]+)\")");
  const std::regex qt_include(R"(^\s*#\s*include\s+<(Q[A-Za-z]+|qcustomplot\.h)>)");
  int files = 0;
  for (const char* top : {"core", "kernels", "gui"}) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(source_path(top))) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".cu" && ext != ".cuh")) continue;
      const std::string rel = fs::relative(e.path(), source_path("")).generic_string();
      const std::string from = folder_of(rel);
      ++files;
      const auto it = allowed.find(from);
      if (it == allowed.end()) {
        ADD_FAILURE() << rel << ": folder " << from << " is not in docs/ARCHITECTURE.md's table of allowed includes";
        continue;
      }
      std::ifstream in(e.path());
      int number = 0;
      for (std::string line; std::getline(in, line);) {
        ++number;
        std::smatch m;
        if (std::regex_search(line, m, project_include)) {
          const std::string to = folder_of(m[1].str());
          if (to != from && !it->second.contains(to)) {
            ADD_FAILURE() << rel << ":" << number << " includes " << m[1].str() << ", but " << from
                          << " may not include " << to << " (docs/ARCHITECTURE.md, \"Allowed includes\")";
          }
        }
        if (top != std::string("gui") && std::regex_search(line, m, qt_include)) {
          ADD_FAILURE() << rel << ":" << number << " includes the Qt header " << m[1].str() << " outside gui/";
        }
      }
    }
  }
  EXPECT_GT(files, 100) << "the source tree was not found under " << source_path("");
}

}  // namespace
}  // namespace inferscope::test
