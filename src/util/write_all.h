#pragma once
// The one loop that writes a whole buffer: write(2) may take less than it was
// given (a pipe or socket takes what fits) or be interrupted by a signal.

#include <string_view>

#include "util/error.h"

namespace mcpcell {

/// Writes all of `data` to `fd` (blocking), retrying after EINTR and short
/// writes. Any other failure — EPIPE, EAGAIN on a non-blocking fd, a write
/// that takes nothing (reported as EIO) — is an ErrnoError naming `what` and `path`.
Status WriteAll(int fd, std::string_view data, std::string_view what = "write", std::string_view path = {});

/// WriteAll that waits (poll POLLOUT) when `fd` is non-blocking and full
/// instead of failing with EAGAIN: for an fd shared with others who may
/// have set O_NONBLOCK on it (a client's stderr), where a dropped chunk
/// would lose lines.
Status WriteAllWaiting(int fd, std::string_view data, std::string_view what = "write", std::string_view path = {});

}  // namespace mcpcell
