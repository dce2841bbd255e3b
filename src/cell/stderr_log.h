#pragma once
// A copy of everything a run writes to stderr — the server's stderr and
// mcpcell's own lines — in a bounded file a user can find (`mcpcell ps`
// prints its path, `mcpcell logs ID` prints it). The client still gets every
// byte on its stderr as before: mcpcell's fd 2 becomes a pipe, and a thread of
// mcpcell copies the pipe to the original stderr and to <state>/logs/<id>.log.
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
#include <memory>
#include <optional>
#include <string>
#include <thread>
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

/// While it lives, fd 2 is the pipe. Not movable; Finish() (or the
/// destructor) puts the original fd 2 back, lets the copy take what is left
/// in the pipe and waits for it.
///
/// The copy is a thread, started by Start before mcpcell writes anything to
/// the pipe: nothing mcpcell says before its cell exists (a note per
/// credential variable, -v's mount list, an image's VOLUME notes) can fill
/// the pipe and block mcpcell on its own stderr. It is paused across every
/// native cell's clone (ClonePause: the server's, and each install-script
/// cell's before it): that cell's PID 1 is a clone3 of this process without
/// exec and without glibc's fork handlers, so a thread alive at the clone
/// could hold a lock (malloc's, stdio's) that PID 1 then waits on for ever,
/// and PID 1's setgroups(2)/setuid(2) would signal it through glibc's copied
/// thread list (nptl_setxid.c; seen: the cell hung in __nptl_setxid, and a
/// script cell's clone with the copy alive aborted). While paused, what is
/// written to fd 2 waits in the pipe: nothing between the pause and the
/// clone's return.
class StderrLog {
 public:
  StderrLog();
  StderrLog(StderrLog&&) = delete;
  StderrLog& operator=(StderrLog&&) = delete;
  ~StderrLog();

  /// Opens <dir>/<id>.log (0600, O_EXCL, O_NOFOLLOW; `dir` an OpenStateDir
  /// fd), makes fd 2 the pipe and starts the copy. `scan`: the secret scan
  /// each line passes through (stderr_redact.h), the server's result scan's
  /// settings. When the copy cannot start, fd 2 stays as it was.
  Status Start(UniqueFd dir, const std::string& id, std::optional<SecretPolicy> scan = std::nullopt);
  void Finish();

  /// For the life of this object the live log's copy (if a run has one) is
  /// stopped, the pipe's bytes (and a line the scan holds) left for it;
  /// held across a clone of this process without exec. It restarts after.
  class ClonePause {
   public:
    ClonePause();
    ~ClonePause();
    ClonePause(const ClonePause&) = delete;
    ClonePause& operator=(const ClonePause&) = delete;

   private:
    StderrLog* paused_ = nullptr;
  };

 private:
  struct Copier;
  void PauseCopy();
  /// (Re)starts the copy thread (all signals blocked in it: they are the
  /// supervisor's). A no-op while it runs, after Finish or without Start.
  Status StartCopy();

  bool open_ = false;
  UniqueFd saved_stderr_;
  std::unique_ptr<Copier> copier_;
  std::thread thread_;
};

/// The ids of the logs in `dir` (an OpenStateDir fd), each once.
std::vector<std::string> ListCellLogIds(int dir);

/// Removes the oldest logs of `dir` (an OpenStateDir fd) beyond `keep`,
/// never a log whose run is still alive (`live_ids`).
SweepCount PruneCellLogs(int dir, int keep, const std::vector<std::string>& live_ids);

}  // namespace mcpcell
