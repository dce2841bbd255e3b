#pragma once
// Whether one path lies at or below another, compared component by
// component: "/a/bc" is not below "/a/b". Lexical: no symlink is resolved,
// so callers compare paths they resolved (or wrote) the same way.

#include <string_view>

namespace mcpcell {

/// Whether `path` is `dir` or lies below it; every absolute path lies below "/".
inline bool PathAtOrBelow(std::string_view path, std::string_view dir) {
  if (dir == "/") return !path.empty() && path.front() == '/';
  if (path.substr(0, dir.size()) != dir) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

}  // namespace mcpcell
