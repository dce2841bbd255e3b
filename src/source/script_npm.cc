#include "source/script_npm.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <nlohmann/json.hpp>

#include "source/registry_url.h"
#include "source/url_credential.h"
#include "util/terminal_text.h"
#include "util/json_input.h"
#include "util/unique_fd.h"
#include "util/write_all.h"

namespace mcpcell {
namespace {

/// The npmrc's name in the install directory: not ".npmrc", which npm in
/// the cell (working directory: the install directory) would read as the
/// project's config on its own, and no host npm ever reads.
constexpr const char* kNpmrcName = ".mcpcell-script-npmrc";
constexpr const char* kCafileName = ".mcpcell-script-cafile.pem";
// A CA bundle is a few hundred KiB (Debian's: ~220 KiB).
constexpr off_t kMaxCafileBytes = 16 << 20;
constexpr std::string_view kBeginCert = "-----BEGIN CERTIFICATE-----", kEndCert = "-----END CERTIFICATE-----";

/// A registry URL no request can reach.
constexpr const char* kNoRegistry = "https://unusable-registry.invalid/";

/// `key="value"`: quoted, ini (npm's npmrc reader) parses the value as JSON,
/// so nothing in it can end the line or start a comment.
std::string Line(const std::string& key, const std::string& value) {
  return key + "=" + nlohmann::json(value).dump() + "\n";
}

/// A registry setting as the cells are given it.
struct CellRegistry {
  bool token = false;   ///< refused for a token in its URL
  /// Normalised; kNoRegistry when it is no http(s) URL or carries a token
  /// (url_credential.h): npm in the cell then fails for it, rather than
  /// asks another registry or sees the token.
  std::string url;
  std::string refused;  ///< why the cells do not reach it at all; "" = they may
  std::string note;     ///< what is left out of it (a user and password); "" = nothing
};

/// Why a registry whose URL holds a token is given to no cell: never a
/// part of the URL, which may be all token.
std::string TokenRefusal(const std::string& setting) {
  return setting + " carries what looks like a token in its URL (not shown): the install scripts get neither that "
                   "URL nor network access to that registry, and a script that needs it fails. To let them reach it, "
                   "give it a URL without the token and the token as //HOST/:_authToken=... in your npmrc (npm sends "
                   "it from there; a cell never gets it), if the registry takes it so; --install-scripts=skip "
                   "installs without running them";
}

CellRegistry ForCells(const std::string& setting, const std::string& raw, const SecretCheck& holds_secret) {
  auto url = NormalizeRegistryUrl(raw);
  if (!url.ok()) return {false, kNoRegistry, setting + ": " + url.error().Message() + "; the install scripts do not reach it", ""};
  if (RegistryUrlHoldsToken(*url, holds_secret)) return {true, kNoRegistry, TokenRefusal(setting), ""};
  if (!HasUserinfo(raw)) return {false, *url, "", ""};
  // Cut off, as npm's //host/:_authToken is never passed on: the registry
  // itself is still where the URL says.
  return {false, *url, "",
          setting + " carries a user or password in its URL: the install scripts reach " +
              VisibleOnTerminal(RegistryOrigin(*url)) +
              " without them (a credential never enters a cell), so a script that needs to log in there fails"};
}

/// The registry of `cell` as the cell reaches it, or "" with a warning. A
/// registry the host's npm reaches through a proxy is named in *unreached.
std::string Reachable(const std::string& setting, const CellRegistry& cell, const NpmConfig& config,
                      const std::map<std::string, std::string>& proxy_env, ScriptNpmPlan* plan) {
  if (!cell.refused.empty()) {
    plan->warnings.push_back(cell.refused);
    return {};
  }
  if (!cell.note.empty()) plan->warnings.push_back(cell.note);
  std::string proxy = NpmProxyFor(cell.url, config, proxy_env);
  if (proxy.empty()) return cell.url;
  std::string& unreached = plan->npm.unreached;
  unreached += (unreached.empty() ? "" : "; ") + RegistryOrigin(cell.url) + " (" + setting + "), which the host's npm reaches through " + proxy;
  return {};
}

void AddRegistry(std::vector<std::string>* registries, const std::string& url) {
  if (!url.empty() && std::find(registries->begin(), registries->end(), url) == registries->end()) {
    registries->push_back(url);
  }
}

}  // namespace

ScriptNpmPlan PlanScriptNpm(const NpmConfig& config, const std::set<std::string>& scopes,
                            const std::map<std::string, std::string>& proxy_env, const SecretCheck& holds_secret) {
  ScriptNpmPlan plan;
  std::string& rc = plan.npmrc_text;
  rc = "; npm settings for mcpcell's install-script cells: registries and certificate authorities, never a token\n";
  if (!config.registry.empty()) {
    CellRegistry cell = ForCells("npm config registry", config.registry, holds_secret);
    plan.npm.hide_lockfiles = cell.token;
    AddRegistry(&plan.npm.registries, Reachable("npm's registry", cell, config, proxy_env, &plan));
    plan.npm.registry = cell.url;
    rc += Line("registry", cell.url);
  }
  for (const auto& [scope, raw] : config.scopes) {
    // Every configured scope, used or not: npm in the cell then never asks
    // the default registry for a package of that scope. One the cells may
    // not be given (no http(s) URL, a token in it) gets a name that
    // resolves nowhere (.invalid, RFC 2606), for the same reason.
    CellRegistry cell = ForCells("npm config " + scope + ":registry", raw, holds_secret);
    rc += Line(scope + ":registry", cell.url);
    if (scopes.count(scope) == 0) continue;
    plan.npm.hide_lockfiles = plan.npm.hide_lockfiles || cell.token;
    AddRegistry(&plan.npm.registries, Reachable(scope + ":registry", cell, config, proxy_env, &plan));
  }
  if (!config.cafile.empty()) {
    plan.npm.cafile = config.cafile;
    rc += Line("cafile", kCellNpmCafile);
  }
  plan.npm.ca = config.ca;
  for (const auto& pem : config.ca) rc += Line("ca[]", pem);
  // It weakens only the TLS of the cell's own npm, to the registries above
  // (pinned, through the egress proxy); the host's npm already runs so.
  if (config.strict_ssl == false) rc += "strict-ssl=false\n";
  return plan;
}

Result<std::string> WriteFileForCells(const std::string& path, const std::string& text, const char* what) {
  ::unlink(path.c_str());  // one left by an interrupted run; O_EXCL then makes a fresh file, never a link's target
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) return ErrnoError(what, path);
  if (::fchmod(fd.get(), 0644) != 0) return ErrnoError("chmod", path);
  MCPCELL_TRY(WriteAll(fd.get(), text, "write", path));
  return path;
}

Result<std::string> WriteScriptNpmrc(const std::string& install_dir, const std::string& text) {
  return WriteFileForCells(install_dir + "/" + kNpmrcName, text, "write the npm config of the install scripts");
}

std::string CertificatesOf(std::string_view pem) {
  constexpr std::string_view kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \t\r\n";
  std::string out;
  for (std::size_t at = 0;;) {
    std::size_t begin = pem.find(kBeginCert, at);
    if (begin == std::string_view::npos) break;
    std::size_t end = pem.find(kEndCert, begin);
    if (end == std::string_view::npos) break;
    // A block whose body is not base64 is left out: a certificate that lost
    // its END line would otherwise carry what follows it (a private key's
    // BEGIN and body) up to the next END CERTIFICATE into the cells (adv12).
    std::string_view body = pem.substr(begin + kBeginCert.size(), end - begin - kBeginCert.size());
    if (body.find_first_not_of(kBase64) == std::string_view::npos) {
      out.append(pem.substr(begin, end + kEndCert.size() - begin));
      out += '\n';
    }
    at = end + kEndCert.size();
  }
  return out;
}

namespace {

/// Whether `pem` is one or more certificate blocks with a base64 body and
/// nothing else but whitespace. A shape check, not an X.509 parse (no TLS
/// library is linked; Node parses it in the cell): what it refuses is what
/// must not reach a cell at all, a private key or other text.
bool OnlyCertificateBlocks(std::string_view pem) {
  constexpr std::string_view kSpace = " \t\r\n";
  constexpr std::string_view kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \t\r\n";
  std::size_t at = pem.find_first_not_of(kSpace);
  if (at == std::string_view::npos) return false;
  while (at != std::string_view::npos) {
    if (pem.substr(at, kBeginCert.size()) != kBeginCert) return false;
    std::size_t body = at + kBeginCert.size();
    std::size_t end = pem.find(kEndCert, body);
    if (end == std::string_view::npos) return false;
    std::string_view inside = pem.substr(body, end - body);
    if (inside.find_first_not_of(kSpace) == std::string_view::npos || inside.find_first_not_of(kBase64) != std::string_view::npos) {
      return false;
    }
    at = pem.find_first_not_of(kSpace, end + kEndCert.size());
  }
  return true;
}

}  // namespace

Result<std::string> InlineCertificates(const std::vector<std::string>& ca) {
  std::string out;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    if (!OnlyCertificateBlocks(ca[i])) {
      // Never echoed: it may be a private key.
      return MakeError("pass npm's inline CA certificates to the install scripts", "npm config ca",
                       "entry " + std::to_string(i + 1) + " of " + std::to_string(ca.size()) +
                           " is not a PEM certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE----- and "
                           "nothing else): fix it in your npmrc, or --install-scripts=skip installs without running them");
    }
    out += CertificatesOf(ca[i]);
  }
  return out;
}

Result<std::string> WriteScriptCafile(const std::string& install_dir, const std::string& host_cafile,
                                      const std::vector<std::string>& inline_ca) {
  auto inline_certs = InlineCertificates(inline_ca);
  if (!inline_certs.ok()) return inline_certs.error();
  struct stat st{};
  // Missing as npm reads it (readFileSync follows links): ENOENT.
  const bool missing = !host_cafile.empty() && host_cafile.front() == '/' && ::stat(host_cafile.c_str(), &st) != 0 &&
                       errno == ENOENT;
  std::string certs;
  if (!host_cafile.empty() && !missing) {
    if (host_cafile.front() != '/' || ::stat(host_cafile.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return host_cafile;  // as it is: the cell's bind refuses it (script_cell.cc AddNpmConfig)
    }
    // Too large to read for its certificates: refused, never bound whole (a
    // private key in it would reach the cell, adv12).
    if (st.st_size > kMaxCafileBytes) {
      return MakeError("read npm's cafile", VisibleOnTerminal(host_cafile),
                       "is over 16 MiB; the install scripts' cells get only the certificates read from it. Point npm's "
                       "cafile at a bundle of certificates, or add --install-scripts=skip");
    }
    auto text = ReadTextFile(host_cafile, "read npm's cafile");
    if (!text.ok()) return text.error();
    certs = CertificatesOf(*text);
  }
  // npm skips a missing cafile; so does the cell (nothing bound) when
  // there is no inline certificate to give it either.
  if (missing && inline_certs->empty()) return host_cafile;
  return WriteFileForCells(install_dir + "/" + kCafileName, certs + *inline_certs,
                           "write the install scripts' CA certificates");
}

std::string RegistriesReached(const ScriptNpm& npm) {
  if (npm.registries.empty()) return {};
  std::string list;
  for (std::size_t i = 0; i < npm.registries.size(); ++i) {
    if (i > 0) list += i + 1 == npm.registries.size() ? " and " : ", ";
    list += VisibleOnTerminal(RegistryOrigin(npm.registries[i]));
  }
  return std::string("the npm ") + (npm.registries.size() == 1 ? "registry " : "registries ") + list;
}

}  // namespace mcpcell
