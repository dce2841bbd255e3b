#pragma once
// The npx and uvx install caches (source/npx_install.h, uvx_install.h) as a user sees them: what is
// installed, how big, and removing what is no longer wanted. Layout:
//   <root>/<@scope+name>@<version>/node_modules/...   one per package version
//   <root>/.install-<pid>-XXXXXX                      an install under way
// A version a running cell uses (its record names the directory,
// cell/cell_record.h) is never removed; a removed one is first renamed out
// of its name, so a run that starts meanwhile installs afresh instead of
// binding a half-deleted tree.

#include <cstdint>
#include <string>
#include <vector>

namespace mcpcell {

struct CachedPackage {
  std::string kind;       ///< "npx" or "uvx": which cache root (the caller sets it)
  std::string dir;        ///< full path
  std::string package;    ///< "@scope/name" or "name"
  std::string version;
  std::uint64_t bytes = 0;
  std::int64_t installed = 0;  ///< mtime of the directory (when the install was published), unix seconds
  bool in_use = false;         ///< a running cell of this user binds it
};

/// The package versions under `root` (sorted by package, newest install
/// first); `in_use` lists directories running cells bind.
std::vector<CachedPackage> ListNpxCache(const std::string& root, const std::vector<std::string>& in_use);

/// What prune removes: with `all`, every version not in use; else the
/// versions of each package older than its newest install, and (when
/// `only` is not empty) only those of that package or package@version.
std::vector<CachedPackage> ChoosePrune(const std::vector<CachedPackage>& cached, bool all, const std::string& only);

/// Removes one cached version (rename aside, then delete). False when it is gone or cannot be removed.
bool RemoveCachedPackage(const CachedPackage& p);

/// Moves the install directory `dir` aside, under a short name of an
/// install of ours under way (".install-<pid>-<why>-<n>": a kill
/// mid-removal is swept like one), then removes it. Short whatever `dir`'s
/// own name: a name@version of 233 bytes or more made the old aside name
/// pass NAME_MAX and nothing was removed (adv21). False when it could not
/// be moved or removed.
bool RemoveInstallAside(const std::string& dir, const std::string& why);

}  // namespace mcpcell
