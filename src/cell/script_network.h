#pragma once
// The network of an install-script cell (cell/script_cell.h): the npm
// registries the install used (source/script_npm.h), and nothing else,
// through mcpcell's egress proxy (issue 14 items 1 and 2). A registry on
// the host's loopback (http://127.0.0.1:4873/, a local mirror) is reached
// as a host port (egress/host_loopback.h); any other as one allow_host
// entry on its one port, pinned (as --resolve pins) to the addresses the
// host's resolver gives for it now — what the host's npm just used, an
// intranet registry's 10.x included. Nothing the script does can widen it:
// no flag or profile reaches this cell, and every denial says so.

#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "source/script_npm.h"
#include "util/error.h"

namespace mcpcell {

/// The cell's NetworkSpec for the registry at `url` (http:// or https://,
/// no user or password, a DNS name, an IP address or a loopback name, an
/// optional port). Refused, saying why, for any other URL.
Result<NetworkSpec> RegistryNetwork(const std::string& url);

/// The cell's NetworkSpec for several registries (ScriptNpm::registries):
/// each as RegistryNetwork opens it, merged. The rules pair any allowed
/// name with any allowed port, so every name is also pinned on every port
/// (two registries on 443 and 8443: either name on either port, but never
/// to an address the host's resolver did not give for it). Refused when
/// one is.
Result<NetworkSpec> RegistriesNetwork(const std::vector<std::string>& urls);

/// What a denial says in a script cell: the registries are all it reaches,
/// and what it does not reach (an upstream proxy's) and why.
std::string ScriptNetworkAdvice(const ScriptNpm& npm);

}  // namespace mcpcell
