#pragma once
// Small file operations on cgroupfs, with errors as values. Internal to the
// cgroup module (namespaced so they cannot clash with other modules' helpers).

#include <string>
#include <string_view>

#include "util/error.h"

namespace mcpcell::cgroupfs {

/// Whole contents of a (small) file.
Result<std::string> ReadText(const std::string& path);
/// Writes `text` with one write(2): cgroupfs parses each write as one command.
Status WriteText(const std::string& path, std::string_view text);
bool Exists(const std::string& path);
/// mkdir(2) mode 0755; an existing directory is success.
Status MakeDir(const std::string& path);
/// True when <dir>/cgroup.procs lists at least one process (false if unreadable or gone).
bool HasProcesses(const std::string& dir);
/// "a" + "/" + "b", without doubling the slash.
std::string Join(const std::string& a, const std::string& b);
/// rmdir(2) a cgroup, retrying EBUSY for up to ~0.5 s: the kernel releases a
/// cgroup a moment after its last process has exited. ENOENT counts as removed.
Status RemoveCgroupDir(const std::string& dir);

}  // namespace mcpcell::cgroupfs
