#pragma once
// Which of the user's scoped registries an `npm install PACKAGE` may use
// (adv9). A user's npmrc maps a private scope to the company registry with
// a token (`@corp:registry=https://npm.corp/` and `//npm.corp/:_authToken`):
// the ordinary setup. Left as it is, any public package that lists
// "@corp/internal" as a dependency has the host's npm fetch it from the
// company registry with the user's token and place it in the install,
// where that package's install-script cell and the server read it. So the
// install points every scope whose registry is not PACKAGE's own at
// PACKAGE's own registry: the user's token goes only to fetch the scope the
// user asked for (npx://@corp/server keeps @corp's registry), and a public
// package's dependency on @corp is looked up where the public package came
// from (and not found there, as a private package is not).

#include <string>
#include <vector>

#include "source/npm_config.h"
#include "util/error.h"

namespace mcpcell {

struct ScopeRedirect {
  std::string scope;     ///< "@corp"
  std::string mapped;    ///< the origin the user's config names for it (RegistryOrigin: never a token)
};

struct InstallScopes {
  std::string own;                      ///< PACKAGE's registry, normalised (registry_url.h)
  std::vector<ScopeRedirect> redirect;  ///< scopes pointed at `own` for this install
  /// npm's settings for them, as environment entries
  /// ("npm_config_@corp:registry=<own>"): not on npm's command line, where
  /// every local user reads a registry path's token. npm turns '_' in such
  /// a name into '-', so a scope with '_' is set in ProjectNpmrc() instead.
  std::vector<std::string> Env() const;
  /// The .npmrc the install's prefix gets for the scopes with '_' ("" for
  /// none): npm reads a prefix's .npmrc as the project's config, over the
  /// user's. A flag would put `own`, a path token and all, on npm's command
  /// line and in the failure message (adv14). Values escaped for npm's ini
  /// reader ('\', ';', '#'); a URL npm would expand (`${`) or with a control
  /// character is refused.
  Result<std::string> ProjectNpmrc() const;
  /// What to add to a failed install's error when something was redirected ("" if nothing).
  std::string Hint(const std::string& package) const;
};

/// The scopes of `config` to point at `package`'s own registry: every
/// `@scope:registry` other than the package's own scope, or one of
/// `trusted` (--npm-scope: the user's consent), whose URL is not the same
/// registry (a URL that cannot be read is redirected too). Refused when the
/// package's own registry cannot be read, or a trusted scope is not one
/// the config maps (the flag would change nothing).
Result<InstallScopes> ScopesForInstall(const NpmConfig& config, const std::string& package,
                                       const std::vector<std::string>& trusted = {});

}  // namespace mcpcell
