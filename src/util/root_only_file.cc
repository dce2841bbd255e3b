#include "util/root_only_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

namespace mcpcell {
namespace {

bool RootsAlone(const struct stat& st) { return st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0; }

bool InPlaces(const std::filesystem::path& real, const RootPlaces& places) {
  const std::string& r = real.native();
  if (std::any_of(places.dirs.begin(), places.dirs.end(), [&](const char* d) { return r.rfind(d, 0) == 0; })) {
    return true;
  }
  return std::any_of(places.files.begin(), places.files.end(), [&](const char* f) {
    std::error_code ec;
    std::filesystem::path known = std::filesystem::canonical(f, ec);
    return !ec && known == real;
  });
}

}  // namespace

bool IsRootOnlyFile(const std::string& path, const RootPlaces& places) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec || !InPlaces(real, places)) return false;
  struct stat file{};
  if (::stat(real.c_str(), &file) != 0 || !S_ISREG(file.st_mode) || !RootsAlone(file)) return false;
  // Every directory up to /: whoever may write one may put another file, or
  // another directory, in the way to it (adv15: a root-owned bin/ under a
  // directory others may write is renamed away and replaced).
  for (std::filesystem::path dir = real.parent_path();; dir = dir.parent_path()) {
    struct stat st{};
    // A sticky directory (/tmp) others may write is fine: they cannot
    // rename or remove an entry of root's, and the entry below is root's.
    if (::stat(dir.c_str(), &st) != 0 || st.st_uid != 0) return false;
    if ((st.st_mode & S_ISVTX) == 0 && !RootsAlone(st)) return false;
    if (dir == dir.parent_path()) return true;
  }
}

}  // namespace mcpcell
