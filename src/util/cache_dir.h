#pragma once
// mcpcell's per-user caches (the compiled secret rules, grant scans, npx and
// uvx packages): under $XDG_CACHE_HOME when it is absolute, else
// $HOME/.cache. What a cache holds steers a later run, so below the base the
// directories "mcpcell" and the cache's own are opened one at a time without
// following symlinks and must be the caller's and writable by nobody else
// (util/owned_file.h); a cell may never write there (CheckDirNotWritableByCell).

#include <string>
#include <string_view>

#include "util/error.h"
#include "util/owned_file.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// $XDG_CACHE_HOME when absolute, else $HOME/.cache; "" when neither is.
/// Where packages go (npx, uvx): the user's choice of cache.
std::string UserCacheBase();

/// The passwd home's .cache, whatever $HOME and $XDG_CACHE_HOME say: where
/// the caches whose content steers isolation live (the compiled secret
/// rules, the grant scans). A run's environment can name any directory, one
/// an earlier cell could write among them (adversary pass, 2026-11-28);
/// this one is always out of every cell's reach (McpcellOwnDirs). "" when
/// the account has no absolute home.
std::string AccountCacheBase();

/// <base>/mcpcell/<leaf>, as a path.
std::string CacheDirPath(const std::string& base, std::string_view leaf);

/// Opens <base>/mcpcell/<leaf> (creating what is missing, 0700, when
/// `create`). The base may be reached through symlinks (it is the user's
/// choice); "mcpcell" and `leaf` are opened with O_NOFOLLOW and held to
/// `rules` (the caller's, no group or other write). Errors name rules.what.
Result<UniqueFd> OpenCacheDir(const std::string& base, std::string_view leaf, bool create, const OwnedRules& rules);

}  // namespace mcpcell
