#include "source/npx_cache.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "util/remove_tree.h"

namespace mcpcell {
namespace fs = std::filesystem;

namespace {

// "<@scope+name>@<version>" -> package, version; false for anything else.
bool SplitCacheName(const std::string& name, std::string* package, std::string* version) {
  if (name.empty() || name[0] == '.') return false;
  auto at = name.rfind('@');
  if (at == std::string::npos || at == 0 || at + 1 == name.size()) return false;
  *package = name.substr(0, at);
  *version = name.substr(at + 1);
  if (package->front() == '@') std::replace(package->begin(), package->end(), '+', '/');
  return true;
}

// Bytes of regular files below `dir`, not following symlinks.
std::uint64_t TreeBytes(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    struct stat st{};
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += static_cast<std::uint64_t>(st.st_size);
  }
  return total;
}

}  // namespace

std::vector<CachedPackage> ListNpxCache(const std::string& root, const std::vector<std::string>& in_use) {
  std::vector<CachedPackage> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    CachedPackage p;
    struct stat st{};
    // Our own directories only: lstat, so a symlink planted here is no entry.
    if (::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
    if (!SplitCacheName(e.path().filename().string(), &p.package, &p.version)) continue;
    p.dir = e.path().string();
    p.installed = static_cast<std::int64_t>(st.st_mtime);
    p.bytes = TreeBytes(e.path());
    p.in_use = std::find(in_use.begin(), in_use.end(), p.dir) != in_use.end();
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const CachedPackage& a, const CachedPackage& b) {
    return a.package != b.package ? a.package < b.package : a.installed > b.installed;
  });
  return out;
}

std::vector<CachedPackage> ChoosePrune(const std::vector<CachedPackage>& cached, bool all, const std::string& only) {
  std::vector<CachedPackage> out;
  std::map<std::string, int> seen;  // versions of each kind:package met so far (newest first)
  for (const auto& p : cached) {
    bool newest = seen[p.kind + ":" + p.package]++ == 0;  // an npx and a uvx package may share a name
    bool named = only.empty() || only == p.package || only == p.package + "@" + p.version;
    if (p.in_use || !named) continue;
    // Naming package@version removes that version even when it is the newest.
    bool chosen = all || !newest || (!only.empty() && only == p.package + "@" + p.version);
    if (chosen) out.push_back(p);
  }
  return out;
}

bool RemoveCachedPackage(const CachedPackage& p) { return RemoveInstallAside(p.dir, "pruned"); }

bool RemoveInstallAside(const std::string& dir, const std::string& why) {
  std::string parent = fs::path(dir).parent_path().string();
  for (int n = 0; n < 100; ++n) {
    std::string aside = parent + "/.install-" + std::to_string(::getpid()) + "-" + why + "-" + std::to_string(n);
    if (::renameat2(AT_FDCWD, dir.c_str(), AT_FDCWD, aside.c_str(), RENAME_NOREPLACE) == 0) return RemoveTree(aside);
    if (errno != EEXIST) return false;
  }
  return false;
}

}  // namespace mcpcell
