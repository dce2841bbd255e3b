#pragma once
// What a path is itself, without following a final symlink (lstat(2)):
// walks of trees a package wrote (node_modules) must not be led elsewhere
// by a link, nor hang on a FIFO where a file was expected.

#include <sys/stat.h>

#include <string>

namespace mcpcell {

inline bool IsRealDir(const std::string& p) {
  struct stat st{};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

inline bool IsRealFile(const std::string& p) {
  struct stat st{};
  return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace mcpcell
