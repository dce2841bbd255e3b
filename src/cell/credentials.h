#pragma once
// Credential locations a server must never see by accident: SSH keys, cloud
// tokens, package-registry tokens, shell histories, container engine sockets,
// kernel memory. Naming one (or a path inside one) is refused unless forced;
// naming a directory that *contains* one, at any depth, masks it with an
// empty mount instead, so `--read ~` stays usable (issue 10 item 6).

#include <cstddef>
#include <string>
#include <vector>

#include "cell/socket_scan.h"

#include "util/error.h"

namespace mcpcell {

/// Refuses `path` (absolute, resolved) if it is, or lies inside, a credential
/// location. The error says which location and how to override (--force-credentials).
Status CheckNotCredential(const std::string& path);

/// How far CredentialsBeneath looks before it gives up.
struct CredentialScanLimits {
  std::size_t max_entries = 200'000;  ///< directory entries read, in total
  std::size_t max_depth = 24;         ///< directory levels below the granted one
};

struct CredentialScan {
  std::vector<std::string> found;  ///< absolute host paths to mask, parents never listed with their children
  bool truncated = false;          ///< a limit was hit: something deeper may be exposed
  std::string gave_up;             ///< when truncated: which limit, and where
};

/// Credential locations at or below directory `dir`, at any depth within
/// `limits` (breadth-first, symlinks not followed, other filesystems' mounts
/// included). Also the absolute locations (/run/user, /var/run/docker.sock, ...)
/// that lie below `dir`, and the homes under /home and /root when `dir` is
/// above them, whatever the budget.
CredentialScan CredentialsBeneath(const std::string& dir, const CredentialScanLimits& limits = {});

/// What a grant of `dir` needs masked, from ONE walk of the tree: the
/// credential locations (as CredentialsBeneath finds them) and the unix
/// sockets (as FindSockets does: every directory, pruned ones included, at
/// most `socket_budget` entries). Two walks read every directory twice;
/// getdents was a quarter of a launch's CPU with node_modules granted (issue 15).
struct GrantScan {
  CredentialScan creds;
  SocketScan sockets;
};
GrantScan ScanGrant(const std::string& dir, std::size_t socket_budget, const CredentialScanLimits& limits = {});

}  // namespace mcpcell
