#pragma once
// The fast stdio path for container cells: two FIFOs bind-mounted into the
// container, the server's stdin and stdout redirected to them by the cell's
// own /bin/sh (`exec "$@" <in >out`), mcpcell holding the other ends. Data
// then moves pipe to pipe through the kernel, with no engine in between: the
// attach stream (dockerd copying every byte through two goroutines and a
// framed socket) only carries stderr and tells us when the container ends.
//
// Both FIFOs are opened O_RDWR by mcpcell (Linux fifo(7): never blocks, and
// the open cannot wait for a peer that never comes):
//  - `in`: closing our fd is the server's stdin EOF (we are its only writer);
//  - `out`: we never see EOF, so the end of the run comes from the attach
//    stream, after which the FIFO is drained (the server has exited, every
//    byte it wrote is in the pipe).
//
// Layout: /dev/shm/mcpcell-stdio-PID-XXXXXX (0700) / d (0700, the cell's uid)
//         / in, out, ready (0600, the cell's uid); d is bound at /run/mcpcell-stdio.
// (A caller that is not root keeps d and the FIFOs its own and adds an ACL
// entry for the cell's uid instead: cell_user_access.h.)

#include <string>
#include <vector>

#include "cell/docker/run_dirs.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell::docker {

inline constexpr const char* kStdioTarget = "/run/mcpcell-stdio";

class StdioFifos {
 public:
  StdioFifos() = default;

  /// Makes the FIFOs, owned by uid:gid, and opens mcpcell's ends (non-blocking).
  static Result<StdioFifos> Create(std::uint32_t uid, std::uint32_t gid);

  /// The directory to bind (read-write: opening a FIFO for writing needs it) at kStdioTarget.
  const std::string& bind_source() const { return inner_; }
  /// Our end of the server's stdin; reset() it for EOF.
  UniqueFd& in() { return in_; }
  /// Our end of the server's stdout.
  UniqueFd& out() { return out_; }
  /// One byte arrives here once the cell has opened `in` and `out`: only then
  /// may our end of `in` be closed (a reader that opens a FIFO with no writer
  /// left would block forever instead of reading EOF).
  UniqueFd& ready() { return ready_; }

 private:
  RunDir outer_;  ///< removed with the FIFOs when this goes away
  std::string inner_;
  UniqueFd in_;
  UniqueFd out_;
  UniqueFd ready_;
};

/// The container command that wires `argv` to the FIFOs:
///   /bin/sh -c 'exec <in >out && printf x >ready && exec "$@"' mcpcell-stdio ARGV...
/// (exec and printf are builtins: no extra process.)
/// sh's own errors (command not found: 127, not executable: 126) go to stderr
/// and its exit status, like exec's would.
/// A non-empty `gate` (a FIFO path in the container, see container_net.h)
/// comes first: `read -r _ <GATE && ...`, so nothing runs until mcpcell
/// writes a line there, and EOF (mcpcell gone) ends the cell instead.
std::vector<std::string> FifoCommand(const std::vector<std::string>& argv, const std::string& gate = {});

/// Removes stdio FIFO directories of dead runs (the PID in the name). Returns how many.
int ReapStdioDirs();

}  // namespace mcpcell::docker
