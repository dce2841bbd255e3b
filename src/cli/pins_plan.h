#pragma once
// Whether a run pins its server's tools, and under which key (docs/PINNING.md).

#include <string>

#include "util/error.h"

namespace mcpcell {

struct LaunchPlan;
struct PermissionProfile;
struct RelaySpec;
struct ServerRef;

/// The key a server's pins are stored under: what names the server, not the
/// version of it (an upgrade that changes a tool must be caught, not start
/// afresh): "npx://pkg", "uvx://pkg", "docker://repository", "registry://name",
/// and for a command its argv shell-quoted, with relative paths made absolute
/// ("command://node /srv/mcp/server.js"), so two scripts run by one
/// interpreter never share pins.
std::string PinServerKey(const ServerRef& ref, const std::string& cwd);

/// Fills out->pins*: on by default wherever the relay runs on an isolated
/// server; "mode": "on" where it cannot run is refused, not ignored.
Status LowerPins(const ServerRef& ref, const PermissionProfile& profile, const LaunchPlan& plan, RelaySpec* out);

}  // namespace mcpcell
