#pragma once
// What of the host npm's effective configuration the install-script cells
// need (issue 14 items 1 and 2): the registries (the default and each
// `@scope:registry`), the certificate authorities (cafile, ca, strict-ssl),
// and whether npm goes through a proxy. Read from `npm config list -l`, which
// prints every setting of every layer (builtin, global, user, env, cli) with
// the overridden ones commented out, so the one uncommented line of a key is
// its effective value. Only the keys below are read: a token
// (`//host/:_authToken`, `_auth`, `_password`, `username`, certfile,
// keyfile) is never parsed, kept or passed on. (`npm config get registry`
// is not asked: npm 11 refuses it outright for a URL with a password, "The
// registry option is protected"; the listing prints the password as ***.)

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace mcpcell {

/// The settings read, as npm printed them (npm prints a password in a URL
/// as ***; a URL is normalised only where it is used: registry_url.h).
struct NpmConfig {
  std::string registry;                        ///< "" when the listing had none
  std::map<std::string, std::string> scopes;   ///< "@scope" → its registry URL
  std::string cafile;                          ///< a host path, "" = none
  std::vector<std::string> ca;                 ///< inline PEM certificates
  std::optional<bool> strict_ssl;
  std::string proxy;        ///< npm config proxy ("" = none or false)
  std::string https_proxy;  ///< npm config https-proxy
  std::string noproxy;      ///< comma-separated, as npm joins an array
};

/// The settings above from the output of `npm config list -l`. Refused when
/// it has no effective `registry` line (not npm's listing).
Result<NpmConfig> NpmConfigFromList(std::string_view listing);

/// The effective registry alone (NpmConfigFromList's `registry`).
Result<std::string> RegistryFromConfigList(std::string_view listing);

/// npm's proxy variables in an environment ("NAME=value" entries): the
/// lower-cased names https_proxy, http_proxy, proxy and no_proxy, as npm's
/// agent (@npmcli/agent lib/proxy.js) reads them, any case.
std::map<std::string, std::string> NpmProxyEnvironment(char** env);

/// How npm reaches `url` (a normalised registry URL): "" directly, else
/// the setting that sends it through a proxy and the proxy's origin only
/// (never its user or password), e.g. "npm config https-proxy
/// (http://proxy.corp:3128)". npm's own rule: config https-proxy, else
/// proxy, else the environment (https_proxy for https://; https_proxy,
/// http_proxy or proxy for http://), unless noproxy (else no_proxy) names
/// the host or a domain above it.
std::string NpmProxyFor(const std::string& url, const NpmConfig& config,
                        const std::map<std::string, std::string>& env);

}  // namespace mcpcell
