#pragma once
// Whether the settings a trusted package is fetched under are the public
// registry's or index's (adv11, adv13, adv14). A pinned version names a
// package, not its code: the registry it is fetched from and the
// certificate authorities that vouch for that registry decide what runs —
// with no cell around it on an allow run. Each check says what makes the
// code another's, or "" when nothing does. What an install recorded of
// these settings afterwards is install_origin.h.

#include <string>
#include <vector>

#include "source/npm_config.h"
#include "util/process_environment.h"

namespace mcpcell {

/// The public registry an allow run trusts, as NormalizeRegistryUrl gives it.
inline constexpr const char* kPublicNpmRegistry = "https://registry.npmjs.org/";

/// What in npm's effective configuration lets another party serve
/// `package`: its registry (its scope's, when the config maps the scope)
/// is not the public one (named by origin only: a path may hold a token),
/// strict-ssl is off, or an inline ca, or a cafile that is not a system file
/// (root's, in root's directory, writable by no one else), adds an authority
/// that could stand in for the registry's certificate. "" when none does.
std::string WhyNpmConfigIsNotPublic(const NpmConfig& config, const std::string& package);

/// What in `environment` (NAME=VALUE entries: ProcessEnvironment()) adds a
/// certificate authority that could answer for a registry or index
/// (CaVariables(): a file that is not the system's bundle, a directory
/// that is not the system's), or "" (npm's and pip's installs, adv14).
std::string WhyCaEnvironmentIsNotPublic(const std::vector<std::string>& environment);

/// What of pip's settings in `environment` could name another index for a
/// uvx:// install: a PIP_*/UV_* variable, a HOME, XDG_CONFIG_HOME or
/// XDG_CONFIG_DIRS that is not the account's, a pip config of the account's
/// own, a CA variable.
std::string WhyPipSettingsAreNotPublic(const std::vector<std::string>& environment);

}  // namespace mcpcell
