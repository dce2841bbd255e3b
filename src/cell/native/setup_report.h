#pragma once
// The cell's setup steps run in a child that cannot print usefully (its
// stderr is the client's). A failed step goes back to the supervisor as one
// structured message over the sync socket: step, path, errno, detail.

#include <optional>

#include "util/error.h"

namespace mcpcell {

/// Writes `error` as one message on `fd` (a SOCK_SEQPACKET end). Best effort.
void SendSetupError(int fd, const Error& error);

/// Reads messages until EOF. Returns the first error reported, or nullopt when
/// the socket closed with no report (the server was exec'd: the sync fd is
/// O_CLOEXEC, so a successful execve closes it).
std::optional<Error> AwaitSetupResult(int fd);

}  // namespace mcpcell
