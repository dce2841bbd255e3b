#pragma once
// Lowers `mcpcell run` flags into a CellSpec: resolves the server command,
// adds the system directories it needs to start, its own directory, the
// user's --read/--write paths (credential locations refused or masked), the
// environment and the limits. Policy and profile add to the result later.

#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "core/run_request.h"
#include "util/error.h"

namespace mcpcell {

/// Defaults chosen for MCP servers (Node/Python runtimes), not CTF jails.
inline constexpr std::uint64_t kDefaultMemoryBytes = 1ULL << 30;  // 1 GiB
inline constexpr std::uint64_t kDefaultPids = 512;
inline constexpr std::uint64_t kDefaultTmpBytes = 128ULL << 20;   // 128 MiB
inline constexpr const char* kCellPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Error::what of a server command or script that is not in the cell (exit 127).
inline constexpr const char* kNotInCell = "find the server in the cell";

/// Refuses (kNotInCell) a server command given as a path, or an interpreter's
/// script, that does not exist in the cell, saying when the current directory
/// was not mounted. Without this the runtime fails inside with its own error.
Status CheckServerPaths(const CellSpec& spec);

/// Warnings for server arguments that name a host file relative to the
/// caller's cwd when that cwd is not in the cell: inside, they name nothing.
std::vector<std::string> UnreachableRelativeArgs(const CellSpec& spec);

/// Builds the spec for running `argv` with the flags in `req`. `notes` receives
/// one line per thing a user may want to know (auto-mounted dirs, masks).
Result<CellSpec> BuildCellSpec(const RunRequest& req, const std::vector<std::string>& argv,
                               std::vector<std::string>* notes);

/// Adds a bind of `host_spec` ("PATH" or "HOST:CELL"). Credential locations are
/// refused unless `force`; ones beneath a named directory are masked.
Status AddUserBind(CellSpec* spec, const std::string& host_spec, bool writable, bool force,
                   const std::string& why, std::vector<std::string>* notes);

/// The host directory a "PATH" or "HOST:CELL" bind names, resolved as
/// AddUserBind resolves it; "" when it does not exist.
std::string BindHostPath(const std::string& host_spec);

/// Refuses `path` (a file mcpcell itself reads or writes: --audit-log,
/// --policy, --permission-profile) when the cell could change it: it, or any
/// directory on the way to it (resolved through symlinks, and as written),
/// lies at or below a writable bind of `spec`. The error names `flag`, the
/// path and the grant (issue 10 item 10).
Status CheckNotWritableByCell(const CellSpec& spec, const std::string& flag, const std::string& path);

/// CheckNotWritableByCell for a directory mcpcell keeps its own files in
/// (its caches, the pin directory), and also refuses a writable bind at or
/// below it: a cell that can write one file in there (--write
/// ~/.cache/mcpcell/secret-db) forges what a later run reads as mcpcell's own.
Status CheckDirNotWritableByCell(const CellSpec& spec, const std::string& what, const std::string& dir);

/// System directories a dynamically linked runtime needs; /etc network files only when networked.
std::vector<MountSpec> SystemMounts(bool networked);

}  // namespace mcpcell
