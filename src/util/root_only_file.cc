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
  // The directory too: whoever may write it may put another file in the
  // file's place.
  struct stat file{}, dir{};
  return ::stat(real.c_str(), &file) == 0 && S_ISREG(file.st_mode) && RootsAlone(file) &&
         ::stat(real.parent_path().c_str(), &dir) == 0 && RootsAlone(dir);
}

}  // namespace mcpcell
