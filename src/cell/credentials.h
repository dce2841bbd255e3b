#pragma once
// Credential locations a server must never see by accident: SSH keys, cloud
// tokens, container engine sockets, kernel memory. Naming one (or a path
// inside one) is refused unless forced; naming a directory that *contains*
// one masks it with an empty mount instead, so `--read ~` stays usable.

#include <string>
#include <vector>

#include "util/error.h"

namespace mcpcell {

/// Refuses `path` (absolute, resolved) if it is, or lies inside, a credential
/// location. The error says which location and how to override (--force-credentials).
Status CheckNotCredential(const std::string& path);

/// Credential locations that exist beneath directory `dir` (direct home-style
/// children like dir/.ssh, and one level of homes for /home and /root-like
/// dirs), to be masked inside the cell.
std::vector<std::string> CredentialsBeneath(const std::string& dir);

}  // namespace mcpcell
