#pragma once
// A copy of everything a run writes to stderr — the server's stderr and
// mcpcell's own lines — in a bounded file a user can find (`mcpcell ps`
// prints its path, `mcpcell logs ID` prints it). The client still gets every
// byte on its stderr as before: mcpcell's fd 2 becomes a pipe, and a small process
// copies the pipe to the original stderr and to <state>/logs/<id>.log.
//
// Bounds: the file is capped at kLogCap bytes; at the cap it becomes
// <id>.log.1 (replacing the previous one) and a fresh <id>.log starts, so a
// server that writes without end costs at most 2 * kLogCap on disk. At most
// kLogsKept logs stay in the directory (oldest first out, at each run and by
// `mcpcell gc`).
//
// Secrets: when the relay masks secrets in the server's results, the copy
// masks them in every stderr line too (stderr_redact.h), before the client
// and the file see them.
//
// The terminal: the cell never holds the user's terminal
// (cell/terminal_text.h). When the original stderr is one, the copy to it
// passes through TerminalFilter, as the native and docker relays do; the
// file keeps the bytes as written, and `mcpcell logs` filters them when it
// prints to a terminal.

#include <cstddef>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "cell/cell_record.h"
#include "guard/secret_policy.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

inline constexpr std::size_t kLogCap = 256 * 1024;
inline constexpr int kLogsKept = 32;

/// <state>/logs.
std::string CellLogDir(const std::string& state_dir);

/// While it lives, fd 2 is the pipe and the copy runs. Move-only; Finish()
/// (or the destructor) puts the original fd 2 back, lets the copy process
/// take what is left in the pipe and waits for it.
class StderrLog {
 public:
  StderrLog() = default;
  StderrLog(StderrLog&&) = delete;
  StderrLog& operator=(StderrLog&&) = delete;
  ~StderrLog() { Finish(); }

  /// Opens <dir>/<id>.log (0600, O_EXCL, O_NOFOLLOW; `dir` an OpenStateDir
  /// fd) and starts the copy. `scan`: the secret scan each line passes
  /// through (stderr_redact.h), the server's result scan's settings.
  Status Start(UniqueFd dir, const std::string& id, std::optional<SecretPolicy> scan = std::nullopt);
  void Finish();

 private:
  std::string name_;
  UniqueFd saved_stderr_;
  UniqueFd stop_;
  pid_t copier_ = -1;
};

/// The ids of the logs in `dir` (an OpenStateDir fd), each once.
std::vector<std::string> ListCellLogIds(int dir);

/// Removes the oldest logs of `dir` (an OpenStateDir fd) beyond `keep`,
/// never a log whose run is still alive (`live_ids`).
SweepCount PruneCellLogs(int dir, int keep, const std::vector<std::string>& live_ids);

}  // namespace mcpcell
