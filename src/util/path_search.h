#pragma once
// The one PATH lookup. What the policy judges (TrustFacts.local_path), what a
// run without a cell executes, what the native cell binds as the server's
// executable, what the cell's PID 1 executes and what `doctor` reports must be
// the same file: each asks here. Rules of execvp(3) (glibc posix/execvpe.c):
// entries are tried in order; an EMPTY entry is the current directory (as is
// ".", "./"); a relative entry ("bin") is relative to the current directory;
// the first entry holding a regular file the caller may execute wins (a
// directory or a non-executable file is passed over, as execve's EACCES is).

#include <string>
#include <string_view>

namespace mcpcell {

/// PATH when the variable is unset (the lookup never falls back to none).
inline constexpr const char* kDefaultHostPath = "/usr/local/bin:/usr/bin:/bin";

/// True when `path` is a regular file (after symlinks) this process may execute.
bool IsExecutableFile(const std::string& path);

/// Where execvp(3) would find `name` with `path_value` as PATH, spelled as
/// found ("/usr/bin/node", "./node" for an empty entry, "bin/node"): relative
/// spellings are relative to the current directory at the time of the call.
/// A `name` holding a '/' is not searched: it is returned when it is an
/// executable file. "" when nothing matches (or `name` is empty).
std::string SearchPath(const std::string& name, std::string_view path_value);

/// SearchPath on this process's PATH (kDefaultHostPath when unset), made
/// absolute and lexically normal against the current directory: the file
/// execvp(name) from here would run. "" when none.
std::string FindOnHostPath(const std::string& name);

/// Whether `path` (followed) is a system program: it lies under /usr, /bin,
/// /sbin, /opt or /nix/store, and the file and every directory above it are
/// root's and writable by no one else. What a run without a cell may start as an
/// interpreter (adv14: a repository's node_modules/.bin/node, /tmp/x/python3;
/// root's own files elsewhere are not the system's either).
bool IsSystemProgram(const std::string& path);

/// `path` with every link followed ("" for ""; `path` itself when it cannot
/// be followed): the file a later exec of it starts, whatever a link on the
/// way points at by then.
std::string RealPathOf(const std::string& path);

/// FindOnHostPath over the absolute entries of PATH only: what runs does
/// not depend on the current directory (an empty, "." or "node_modules/.bin"
/// entry is skipped). "" when none.
std::string FindOnAbsoluteHostPath(const std::string& name);

}  // namespace mcpcell
