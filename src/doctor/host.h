#pragma once
// Small read-only helpers the doctor's probes share: read a file, name an
// errno. (Programs on PATH: util/path_search.h, the lookup every part uses.)

#include <optional>
#include <string>

namespace mcpcell::doctor {

/// The whole content of `path` (proc/sys files included), or nullopt with errno set.
std::optional<std::string> ReadHostFile(const std::string& path);

/// "Permission denied (EACCES)".
std::string ErrnoText(int err);

/// The path of the running mcpcell binary (/proc/self/exe), "mcpcell" if unknown.
std::string SelfExePath();

}  // namespace mcpcell::doctor
