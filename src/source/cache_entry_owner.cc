#include "source/cache_entry_owner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "util/terminal_text.h"

namespace mcpcell {

namespace fs = std::filesystem;

namespace {

/// Why `st` is not a component mcpcell may run code through, or "".
std::string WhyNotOwned(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return "is a symbolic link (an install makes none on the way to the program)";
  if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) return "is neither a directory nor a regular file";
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return "is owned by uid " + std::to_string(st.st_uid) +
           ", not you: another user made it, and can change the code mcpcell would run as this package";
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "is writable by its group or by others, who could change the code mcpcell would run as this package";
  }
  return "";
}

}  // namespace

Status CheckOwnedBelow(const std::string& root, const std::string& path, const std::string& remedy) {
  fs::path base = fs::path(root).lexically_normal();
  fs::path rel = fs::path(path).lexically_normal().lexically_relative(base);
  if (rel.empty() || rel == "." || rel.is_absolute() || *rel.begin() == "..") {
    return MakeError("check the cached package", VisibleOnTerminal(path), "is not below " + VisibleOnTerminal(root));
  }
  fs::path at = base;
  for (const fs::path& part : rel) {
    at /= part;
    struct stat st{};
    if (::lstat(at.c_str(), &st) != 0) return ErrnoError("check the cached package", VisibleOnTerminal(at.string()));
    if (std::string why = WhyNotOwned(st); !why.empty()) {
      return MakeError("check the cached package", VisibleOnTerminal(at.string()), why + "; " + remedy);
    }
  }
  return {};
}

}  // namespace mcpcell
