#pragma once
// Whether an npx:// package that a policy `allow` rule trusts by name and
// version is the public npm registry's (adv11, adv13). A pinned version
// names a package, not its code: the registry it is fetched from, the
// certificate authorities that vouch for that registry, the scopes' own
// registries, and whatever an earlier install left in the cache decide
// what runs — with no cell around it on an allow run. Each check says
// what makes the code another's, or "" when nothing does.

#include <string>

#include "source/npm_config.h"
#include "util/error.h"

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

/// What in this process's environment adds a certificate authority that
/// could answer for a registry or index (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE,
/// SSL_CERT_DIR, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE naming anything but the
/// system's bundle), or "" (npm's and pip's installs, adv14).
std::string WhyCaEnvironmentIsNotPublic();

/// What of pip's settings could name another index for a uvx:// install:
/// a PIP_*/UV_* variable, a HOME, XDG_CONFIG_HOME or XDG_CONFIG_DIRS that
/// is not the account's, a pip config of the account's own, a CA variable.
std::string WhyPipSettingsAreNotPublic();

/// Records, in an install directory, whether the settings it was made
/// under were the public registry's (`why` empty) or why not: what an
/// entry's own lockfile cannot say (adv14: npm writes the registry's
/// tarball URL as the registry document gives it, and a man in the middle's
/// answers look like the registry's).
Status WriteInstallOrigin(const std::string& dir, const std::string& why);

/// Why a cache entry's record does not say it was installed under public
/// settings (none, or not public), or "".
std::string WhyOriginIsNotPublic(const std::string& cache_dir);

/// What in an installed entry (`cache_dir`: <npx cache>/<name>@<version>)
/// came from elsewhere: the install's package-lock.json names each
/// package's `resolved` URL;
/// one outside the public registry, or a lockfile that cannot be read,
/// means the cache was filled by an install this run did not make (another
/// environment's registry, adv13), and so does a package with no URL (npm's
/// omit-lockfile-registry-resolved; mcpcell's installs turn it off). ""
/// when every package is the public registry's (bundled ones came with
/// their parent).
std::string WhyInstallIsNotPublic(const std::string& cache_dir);

}  // namespace mcpcell
