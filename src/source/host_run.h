#pragma once
// Running a package tool (npm, pip, python3 -m venv) on the host, outside
// any cell, for an install: stdin from /dev/null, stdout captured or sent to
// our stderr (mcpcell's stdout belongs to JSON-RPC), in a process group of
// its own that dies with mcpcell (PR_SET_PDEATHSIG) and is killed whole
// after a time limit. The program is found as source/host_tool.h says: never
// in a directory a cell may write.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "util/error.h"

namespace mcpcell {

struct HostToolRun {
  std::vector<std::string> argv;  ///< argv[0]: a name looked up on the safe PATH, or an absolute path
  bool capture = false;           ///< true: return stdout; false: stdout goes to our stderr
  std::chrono::milliseconds limit{0};
  std::string what;               ///< "installing x@1 with npm": the progress line's words
  std::vector<std::string> cell_writable;  ///< resolved host directories a cell may write
  std::string timeout_hint;       ///< what to check when the limit passes ("is the npm registry reachable ...?")
  std::string missing_hint;       ///< how to get argv[0] when it is not there ("apt-get install npm")
  /// Variables of the caller's environment the tool must not see, by
  /// prefix ("PYTHON": PYTHONPATH/PYTHONHOME could lead it to code a cell wrote).
  std::vector<std::string> drop_env_prefixes = {};
  /// "NAME=value" set for the tool on top of the environment (replacing the
  /// caller's NAME): settings that must not show in its command line, which
  /// every local user can read in /proc and which failures print.
  std::vector<std::string> extra_env = {};
  /// Strings what the tool prints must not show (a registry path's token,
  /// util/masked_echo.h): its stderr, and its stdout when not captured,
  /// then pass through mcpcell, a line at a time, each replaced by "[masked]".
  std::vector<std::string> masked = {};
  /// Close-on-exec fds of ours the tool inherits, as the same numbers
  /// (npm's config copies, source/npmrc_snapshot.h).
  std::vector<int> pass_fds = {};
  /// What the tool may take of the disk holding `dir` (util/fs_usage.h
  /// DiskBudget, looked at every 100 ms); no bound when `dir` is empty.
  /// npm unpacks what a registry serves: a 1 MiB gzip unpacked to 1.2 GiB (adv19).
  struct Disk {
    std::string dir;
    std::uint64_t bytes = 0;
    std::uint64_t inodes = 0;
  } disk = {};
};

/// What a host tool's install may take of the disk (HostToolRun::disk):
/// npm's unpacking of a package's tarballs, pip's of its wheels, npm's cache
/// of a registry's answers. Real servers unpack to tens of MiB, the heaviest
/// to a few hundred; the install scripts' budget (cell/script_cell.cc) is as
/// much again.
inline constexpr std::uint64_t kHostInstallBytes = 1ULL << 30;
inline constexpr std::uint64_t kHostInstallInodes = 250000;

/// Runs it; every 30 s a "still <what>" line goes to stderr. Errors: not
/// found, a non-zero exit, a signal, or the limit (then the whole process
/// group is killed and the error names the limit and --install-timeout).
Result<std::string> RunHostTool(const HostToolRun& run);

/// "5m", "90s": a duration as the user would write it back on the command line.
std::string ShortDuration(std::chrono::milliseconds d);

}  // namespace mcpcell
