#pragma once
// Programs mcpcell runs on the host, outside any cell (today: npm, to
// install npx:// packages). They run with the caller's identity and no
// cell around them, so nothing a cell could have written may choose what
// runs: not a program planted in a --write directory on the caller's PATH
// (npm itself, or the `node` its `#!/usr/bin/env node` looks up), not a
// relative PATH entry ("", ".", "bin") resolved against a directory a cell
// wrote, not a project .npmrc in the caller's working directory (it can
// name the `git` npm runs, or another registry). See docs/THREAT_MODEL.md.

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace mcpcell {

/// `path_env` (a PATH value) with only absolute entries that are neither
/// one of `cell_writable` (resolved host directories) nor beneath one, nor
/// inside a `node_modules` directory (a package's or a repository's bins,
/// which a client's env block may put first).
/// Entries are compared after resolving symlinks; one that does not exist is dropped.
std::string HostToolPath(const std::string& path_env, const std::vector<std::string>& cell_writable);

/// `path` without the entries a project brings along (adv24), for the PATH
/// a host tool is looked up in and runs with: an entry inside a Python venv
/// (an ancestor holds pyvenv.cfg: its bin has every installed package's
/// console scripts, of any name), or at or below the client's workspace —
/// `cwd`, or the repository it lies in (the nearest ancestor holding .git,
/// below `home`) — unless cwd is "/" or `home` (the account's, not $HOME) or
/// an ancestor of it. Compared after resolving symlinks.
std::string WithoutProjectEntries(const std::string& path, const std::string& cwd, const std::string& home);

/// The first executable regular file `name` in `path` ("" when none).
std::string FindHostTool(const std::string& name, const std::string& path);

/// The environment a host tool gets: `environ` with PATH replaced by `path`.
std::vector<std::string> HostToolEnvironment(char** environ_in, const std::string& path);

/// A file or directory a host install (pip under /usr/bin/python3, npm)
/// reads for itself, and why it matters.
struct HostToolInput {
  std::string path;
  std::string what;  ///< "pip's user config (chooses the index)"
};

/// What the host's Python, pip and npm read when mcpcell installs a uvx:// or
/// npx:// package, for each home ($HOME and the account's own, which may
/// differ): their config files, Python's user site-packages, and mcpcell's
/// default package cache whatever XDG_CACHE_HOME this run has. A cell that
/// can write one of them chooses the code the next install runs or fetches,
/// outside every cell, so no grant may make one writable.
std::vector<HostToolInput> HostToolInputs();

/// The package cache of one source kind ("npx", "uvx"):
/// $XDG_CACHE_HOME/mcpcell/KIND, else $HOME/.cache/mcpcell/KIND.
Result<std::string> PackageCacheRoot(std::string_view kind);

/// The working directory a host tool starts in: "/" (no project config of
/// the caller's directory is read, no relative path lands in it).
inline constexpr const char* kHostToolCwd = "/";

}  // namespace mcpcell
