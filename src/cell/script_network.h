#pragma once
// The network of an install-script cell (cell/script_cell.h): the npm
// registry the install used, and nothing else, through mcpcell's egress
// proxy (issue 14 item 2). A registry on the host's loopback
// (http://127.0.0.1:4873/, a local mirror) is reached as a host port
// (egress/host_loopback.h); any other as one allow_host entry on its one
// port, pinned (as --resolve pins) to the addresses the host's resolver
// gives for it now — what the host's npm just used, an intranet registry's
// 10.x included. Nothing the script does can widen it: no flag or profile reaches
// this cell, and every denial says so.

#include <string>

#include "core/cell_spec.h"
#include "util/error.h"

namespace mcpcell {

/// The cell's NetworkSpec for the registry at `url` (http:// or https://,
/// no user or password, a DNS name, an IP address or a loopback name, an
/// optional port). Refused, saying why, for any other URL.
Result<NetworkSpec> RegistryNetwork(const std::string& url);

/// What a denial says in a script cell: the registry is all it reaches.
std::string ScriptNetworkAdvice(const std::string& registry);

}  // namespace mcpcell
