#pragma once
// Small read-only helpers the doctor's probes share: read a file, find a
// program on PATH, name an errno.

#include <optional>
#include <string>

namespace mcpcell::doctor {

/// The whole content of `path` (proc/sys files included), or nullopt with errno set.
std::optional<std::string> ReadHostFile(const std::string& path);

/// The first executable `name` in $PATH, or "" when there is none.
std::string FindOnPath(const std::string& name);

/// "Permission denied (EACCES)".
std::string ErrnoText(int err);

/// The path of the running mcpcell binary (/proc/self/exe), "mcpcell" if unknown.
std::string SelfExePath();

}  // namespace mcpcell::doctor
