#pragma once
// The cell's setup steps run in a child that cannot print usefully (its
// stderr is the client's). A failed step goes back to the supervisor as one
// structured message over the sync socket: step, path, errno, detail. File
// descriptors the cell made for the supervisor (the egress sockets, created
// inside the cell's network namespace) travel on the same socket with
// SCM_RIGHTS.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// Writes `error` as one message on `fd` (a SOCK_SEQPACKET end). Best effort.
void SendSetupError(int fd, const Error& error);

/// Sends `fds` as one message (SCM_RIGHTS) labelled `what`. The receiver gets
/// its own copies; the caller may close its fds afterwards.
Status SendSetupFds(int fd, const std::string& what, std::span<const int> fds);

/// What the cell reported before its server was exec'd.
struct SetupResult {
  std::optional<Error> error;  ///< the first error reported, if any
  std::string fds_what;        ///< the label of the fd message ("" when none came)
  std::vector<UniqueFd> fds;   ///< the fds of that message, in the order sent (close-on-exec)
};

/// Reads messages until EOF. `error` is the first error reported, or nullopt
/// when the socket closed with no report (the server was exec'd: the sync fd
/// is O_CLOEXEC, so a successful execve closes it).
SetupResult AwaitSetupResult(int fd);

}  // namespace mcpcell
