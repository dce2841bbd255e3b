#pragma once
// What an install-script cell gets of the host npm's configuration
// (source/npm_config.h; issue 14 items 1 and 2), decided once per install:
//   - the registries it reaches: the default one, and the registry of each
//     `@scope` configured AND among the packages npm installed from a
//     registry (install_scripts.h InstalledScopes: a scope no installed
//     package has is one no script needs, and a directory a tarball bundles
//     opens nothing; fewer hosts open);
//   - an npm userconfig written for the cells: the default registry, EVERY
//     configured `@scope:registry` (so npm in the cell asks a scope's own
//     registry, denied if not open, and never falls back to the default one
//     for it: no dependency confusion; a scope whose URL is unusable is
//     named with one that resolves nowhere, and so is one whose URL holds
//     a token: source/url_credential.h), cafile (as the cell sees it), ca,
//     strict-ssl=false when the host's has it. Never a token, user,
//     password, client certificate or proxy;
//   - one CA file, bound read-only into the cell for npm (cafile) and for
//     Node (NODE_EXTRA_CA_CERTS: node-gyp's and prebuild-install's
//     downloads): the certificates of the host's cafile and every inline
//     `ca`, which Node would otherwise never see;
//   - what is not reached: a registry the host's npm reaches through an
//     upstream proxy (npm config proxy/https-proxy, HTTPS_PROXY...) is left
//     out of the allow-list, since mcpcell's egress proxy connects directly
//     and cannot chain; the cell's messages name the setting.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "source/npm_config.h"
#include "source/url_credential.h"
#include "util/error.h"

namespace mcpcell {

/// Where the cell sees its CA file (a read-only bind of that one file: the
/// cafile's certificates and every inline `ca`).
inline constexpr const char* kCellNpmCafile = "/etc/mcpcell/npm-cafile.pem";

/// One install's npm settings for its script cells (ScriptRun::npm).
struct ScriptNpm {
  /// npm's default registry, normalised, reached or not ("" = unknown): npm
  /// in the cell is pointed at it, so a registry left unreached fails
  /// rather than is replaced by another.
  std::string registry;
  /// The registries the cell reaches, normalised (no user or password):
  /// the default one first. Empty: no network at all.
  std::vector<std::string> registries;
  std::string npmrc;   ///< host path of the userconfig for the cells; "" = none
  /// Host path of the cell's CA file, bound at kCellNpmCafile (and named by
  /// NODE_EXTRA_CA_CERTS): npm's cafile, or once written
  /// (WriteScriptCafile) its certificates and every inline `ca`; "" = none.
  std::string cafile;
  /// Registries npm uses that the cell does not reach, and why; "" = none.
  std::string unreached;
  /// npm's inline `ca` certificates: written into the CA file too, so that
  /// Node in the cell (node-gyp, prebuild-install) trusts them as npm does.
  std::vector<std::string> ca = {};
  /// A registry was given to no cell for a token in its URL: the install's
  /// lockfiles, which record the tarball URLs npm fetched (`resolved`, the
  /// token in them when the registry serves them so), are hidden too.
  bool hide_lockfiles = false;
};

/// PlanScriptNpm's answer: the settings, the npmrc's text, and what to warn about.
struct ScriptNpmPlan {
  ScriptNpm npm;  ///< npmrc still "" (WriteScriptNpmrc names it)
  std::string npmrc_text;
  std::vector<std::string> warnings;
};

/// The plan for `config` when the installed packages have `scopes`
/// ("@scope"), npm's proxy environment being `proxy_env`
/// (NpmProxyEnvironment). A registry whose URL holds a token by
/// `holds_secret` or its shape (url_credential.h) is given to no cell: its
/// URL in the npmrc and npm_config_registry is one that resolves nowhere,
/// it is not opened, and a warning names the setting (once; for a scope,
/// only when installed packages have it).
ScriptNpmPlan PlanScriptNpm(const NpmConfig& config, const std::set<std::string>& scopes,
                            const std::map<std::string, std::string>& proxy_env, const SecretCheck& holds_secret);

/// `text` as a fresh file at `path` (in the install directory, which the
/// cells read), 0644 whatever the umask, never a planted link's target; an
/// error names `what`.
Result<std::string> WriteFileForCells(const std::string& path, const std::string& text, const char* what);

/// Writes `text` as a new file in `install_dir` (which the cells see
/// read-only; no package's cell can write there) and returns its path.
Result<std::string> WriteScriptNpmrc(const std::string& install_dir, const std::string& text);

/// The certificate blocks of a PEM text, nothing else (a combined file may
/// hold a private key first: adv5); npm reads a cafile the same way.
std::string CertificatesOf(std::string_view pem);

/// Every inline `ca` entry (npm config ca) as certificate blocks alone;
/// an error naming the setting for an entry that is anything else (a
/// private key, text, an empty block): it would otherwise reach the cells.
Result<std::string> InlineCertificates(const std::vector<std::string>& ca);

/// The CA file the cells get: the certificates of the host's cafile (none
/// when it is missing, as npm skips it) and every inline `ca`, in a fresh
/// file in the install directory (also no race between the check of the
/// host path and its bind). A cafile that is relative, no regular file or
/// too large comes back as it is, for the cell to refuse; a missing one
/// with no inline `ca` too, for the cell to skip.
Result<std::string> WriteScriptCafile(const std::string& install_dir, const std::string& host_cafile,
                                      const std::vector<std::string>& inline_ca);

/// "the npm registry https://a", "the npm registries https://a and
/// https://b", or "" (none), for messages (origins only, terminal-safe).
std::string RegistriesReached(const ScriptNpm& npm);

}  // namespace mcpcell
