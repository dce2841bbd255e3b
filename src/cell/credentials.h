#pragma once
// Credential locations a server must never see by accident: SSH keys, cloud
// tokens, package-registry tokens, shell histories, container engine sockets,
// kernel memory. Naming one (or a path inside one) is refused unless forced;
// naming a directory that *contains* one, at any depth, masks it with an
// empty mount instead, so `--read ~` stays usable (issue 10 item 6).

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cell/dir_stamp.h"
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
  /// Directories the walk may not list (EACCES: a 0711 directory of another
  /// user): what is in them cannot be checked, so they are masked whole.
  std::vector<std::string> unreadable;
  /// Every directory the walk read, and those it could not open, as
  /// stamps; with `fixed` apart from the walk's own finds, what
  /// grant_scan_cache.h needs to tell later whether the tree is unchanged.
  std::vector<DirStamp> walked;
  std::vector<std::string> fixed;  ///< creds.found's locations known without the walk (FixedLocationsBelow)
  bool cacheable = true;  ///< every stamp was taken, on a filesystem whose stamps hold (dir_stamp.h)
};
GrantScan ScanGrant(const std::string& dir, std::size_t socket_budget, const CredentialScanLimits& limits = {});

/// Unix sockets mounted at a mount point below `dir` (/proc/self/mountinfo):
/// a socket bound over a file is listed by its directory as the file it
/// covers, so the walk cannot see it; nor does a mount change the stamps of
/// the directory it is in, so this is looked up at every launch.
std::vector<std::string> MountedSocketsBelow(const std::string& dir);

/// The credential locations outside the walk: the absolute ones below
/// `dir` that exist, and the direct ones of each home `dir` lies above.
std::vector<std::string> FixedCredentialsBelow(const std::string& dir);

/// `found` without the paths another one of them covers (a home's .docker
/// and .docker/config.json: the first), in order.
std::vector<std::string> OutermostOnly(const std::vector<std::string>& found);

/// A digest of the rules a scan applies (the locations, what is pruned, the
/// limits and the socket budget): a scan kept under another one is not reused.
std::string GrantScanRulesDigest(std::size_t socket_budget, const CredentialScanLimits& limits = {});

}  // namespace mcpcell
