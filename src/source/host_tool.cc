#include "source/host_tool.h"

#include <limits.h>
#include <stdlib.h>

#include "util/path_search.h"

namespace mcpcell {
namespace {

bool AtOrBelow(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string HostToolPath(const std::string& path_env, const std::vector<std::string>& cell_writable) {
  std::string out;
  for (const auto& dir : SplitPath(path_env)) {
    if (dir.empty() || dir[0] != '/') continue;  // relative: resolved against whatever the cwd is
    char buf[PATH_MAX];
    if (::realpath(dir.c_str(), buf) == nullptr) continue;
    std::string real = buf;
    bool writable = false;
    for (const auto& w : cell_writable) writable |= !w.empty() && AtOrBelow(real, w);
    if (writable) continue;
    out += (out.empty() ? "" : ":") + dir;
  }
  return out;
}

std::string FindHostTool(const std::string& name, const std::string& path) {
  // Not SearchPath: a host tool is looked up in absolute entries only (an
  // empty or relative one would be the cwd, which a cell may have written).
  for (const auto& dir : SplitPath(path)) {
    if (dir.empty() || dir[0] != '/') continue;
    std::string cand = dir + "/" + name;
    if (IsExecutableFile(cand)) return cand;
  }
  return {};
}

std::vector<std::string> HostToolEnvironment(char** environ_in, const std::string& path) {
  std::vector<std::string> env;
  for (char** e = environ_in; e != nullptr && *e != nullptr; ++e) {
    if (std::string(*e).rfind("PATH=", 0) != 0) env.emplace_back(*e);
  }
  env.push_back("PATH=" + path);
  return env;
}

}  // namespace mcpcell
