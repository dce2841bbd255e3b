#pragma once
// Secrets for a container cell: a directory of files bound read-only at
// /run/secrets.
//
// Why not a tmpfs filled through PUT /containers/{id}/archive: the archive
// endpoint writes into the container's writable layer (on disk under
// /var/lib/docker), not into a tmpfs mounted there, and refuses a read-only
// root. Why not Env: `docker inspect` shows it to anyone who can reach the
// engine. So: memory-backed host files (/dev/shm), never in the create body.
//
// Layout: /dev/shm/mcpcell-secrets-PID-XXXXXX (0700, mcpcell's user)
//           └── s/ (0500, the cell's uid)  ← bound at /run/secrets
//                 └── NAME (0400, the cell's uid)
// (A caller that is not root keeps s/ and NAME its own and lets the cell's
// uid in by an ACL entry, or by the "other" bits in gVisor: cell_user_access.h.)
// The outer 0700 directory keeps other host users out (the cell's uid may be
// a real user on the host); the container sees only s/. Removed on destruction.

#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "cell/docker/run_dirs.h"
#include "util/error.h"

namespace mcpcell::docker {

class SecretsDir {
 public:
  SecretsDir() = default;

  /// Copies each secret's host file in, owned by uid:gid. An empty list makes
  /// no directory (bind_source() is then empty).
  static Result<SecretsDir> Create(const std::vector<SecretSpec>& secrets, std::uint32_t uid, std::uint32_t gid,
                                   bool acls_honoured = true);

  /// The directory to bind at /run/secrets; empty when there are no secrets.
  const std::string& bind_source() const { return inner_; }

 private:
  RunDir outer_;  ///< removed with everything in it when this goes away
  std::string inner_;
};

/// Removes secrets directories whose mcpcell (the PID in the name) is gone:
/// what a kill -9 left behind. Returns how many were removed.
int ReapSecretDirs();

}  // namespace mcpcell::docker
