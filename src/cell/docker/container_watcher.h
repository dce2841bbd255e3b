#pragma once
// The container watcher: a detached process that removes a container cell if
// its supervisor dies without doing so (kill -9, OOM kill, crash), so the
// server does not keep running, holding its CPU and memory, until some later
// run or `mcpcell gc` reaps it (issue 10.9). The container-cell counterpart
// of the native cells' cgroup janitor (src/cell/native/cgroup_janitor.cc),
// built the same way: a double-forked process in its own session, blocked in
// poll(2) on a pidfd of the supervisor and on a pipe the supervisor holds.
//
// When the supervisor ends normally it has removed the container itself and
// dismisses the watcher (a byte on the pipe, then close): the watcher exits
// without a word. When the supervisor dies (pidfd readable, or the pipe's EOF
// with no byte), the watcher asks the engine to SIGKILL and force-remove the
// container by its name (unique per run, known before the create), retrying a
// 404 for a bounded time in case the create was still in flight, then
// removes the supervisor's per-run entries in /dev/shm (FIFOs, secrets,
// egress directory, seccomp profile: `mcpcell-*-<pid>-*`, see run_dirs.h).
// It holds the run's cell id claim (cell_ids.h) until then, so the id is not
// handed to another run while this container may still be running.
//
// After fork only async-signal-safe calls are made (fork(2) in a possibly
// multithreaded program): the request bytes and paths are built before fork,
// the child speaks HTTP over a raw unix socket with stack buffers.

#include <string>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell::docker {

/// The name the watcher gives itself (prctl PR_SET_NAME; /proc/PID/comm).
inline constexpr const char* kWatcherName = "mcpcell-watcher";

class ContainerWatcher {
 public:
  ContainerWatcher() = default;
  ContainerWatcher(ContainerWatcher&&) = default;
  ContainerWatcher& operator=(ContainerWatcher&& o) noexcept {
    if (this != &o) {
      Dismiss();
      pipe_ = std::move(o.pipe_);
    }
    return *this;
  }
  ContainerWatcher(const ContainerWatcher&) = delete;
  ContainerWatcher& operator=(const ContainerWatcher&) = delete;
  /// A normal end of the supervisor's run: the watcher exits without acting.
  ~ContainerWatcher() { Dismiss(); }

  /// Forks the watcher for the container `name` of the engine at `socket`.
  /// `claim_fd`/`claim_path`: the run's cell id claim (cell_ids.h), or -1.
  /// The watcher keeps the fd, so the id stays claimed while the container
  /// may still run; after removing it, the watcher unlinks the claim file.
  static Result<ContainerWatcher> Start(const std::string& socket, const std::string& name, int claim_fd = -1,
                                        const std::string& claim_path = {});

  /// Tells the watcher the supervisor has cleaned up; it exits without acting.
  void Dismiss();

 private:
  UniqueFd pipe_;  ///< write end (O_CLOEXEC): a byte, then close, dismisses
};

/// The HTTP/1.1 request bytes for `method target` (API-prefixed) with an empty
/// body and Connection: close (what the watcher sends; exposed for tests).
std::string WatcherRequest(const std::string& method, const std::string& target);

/// The status code of an HTTP response's first line, or 0.
int WatcherStatus(const char* response, std::size_t len);

}  // namespace mcpcell::docker
