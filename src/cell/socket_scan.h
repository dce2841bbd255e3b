#pragma once
// Unix sockets inside a granted directory are doors out of the cell: a
// read-only bind does not stop connect() (it needs write permission on the
// socket inode, which the caller's own ssh-agent or rootless docker socket
// grants), Landlock up to ABI 7 has no right for it, and seccomp cannot see
// the path. So the sockets found in a granted tree are masked.

#include <cstddef>
#include <string>
#include <vector>

namespace mcpcell {

struct SocketScan {
  std::vector<std::string> sockets;  ///< absolute host paths of unix sockets found
  bool truncated = false;            ///< the entry budget ran out before the whole tree was seen
};

/// Walks `dir` (not following symlinks) looking for sockets, visiting at most
/// `max_entries` entries so a huge tree costs a bounded time. The walk is the
/// one grants use with the credential scan (ScanGrant, credentials.cc).
SocketScan FindSockets(const std::string& dir, std::size_t max_entries);

}  // namespace mcpcell
