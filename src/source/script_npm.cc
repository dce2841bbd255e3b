#include "source/script_npm.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "source/registry_url.h"
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

/// A registry URL no request can reach.
constexpr const char* kNoRegistry = "https://unusable-registry.invalid/";

/// `key="value"`: quoted, ini (npm's npmrc reader) parses the value as JSON,
/// so nothing in it can end the line or start a comment.
std::string Line(const std::string& key, const std::string& value) {
  return key + "=" + nlohmann::json(value).dump() + "\n";
}

/// The registry `raw` as the cell reaches it, or "" with a warning. A
/// registry the host's npm reaches through a proxy is named in *unreached.
std::string Reachable(const std::string& what, const std::string& raw, const NpmConfig& config,
                      const std::map<std::string, std::string>& proxy_env, ScriptNpmPlan* plan) {
  auto url = NormalizeRegistryUrl(raw);
  if (!url.ok()) {
    plan->warnings.push_back(what + ": " + url.error().Message() + "; the install scripts do not reach it");
    return {};
  }
  std::string proxy = NpmProxyFor(*url, config, proxy_env);
  if (proxy.empty()) return *url;
  std::string& unreached = plan->npm.unreached;
  unreached += (unreached.empty() ? "" : "; ") + RegistryOrigin(*url) + " (" + what + "), which the host's npm reaches through " + proxy;
  return {};
}

void AddRegistry(std::vector<std::string>* registries, const std::string& url) {
  if (!url.empty() && std::find(registries->begin(), registries->end(), url) == registries->end()) {
    registries->push_back(url);
  }
}

}  // namespace

ScriptNpmPlan PlanScriptNpm(const NpmConfig& config, const std::set<std::string>& scopes,
                            const std::map<std::string, std::string>& proxy_env) {
  ScriptNpmPlan plan;
  std::string& rc = plan.npmrc_text;
  rc = "; npm settings for mcpcell's install-script cells: registries and certificate authorities, never a token\n";
  if (!config.registry.empty()) {
    std::string url = Reachable("npm's registry", config.registry, config, proxy_env, &plan);
    AddRegistry(&plan.npm.registries, url);
    if (auto normal = NormalizeRegistryUrl(config.registry); normal.ok()) {
      plan.npm.registry = *normal;
      rc += Line("registry", *normal);
    }
  }
  for (const auto& [scope, raw] : config.scopes) {
    auto normal = NormalizeRegistryUrl(raw);
    // Every configured scope, used or not: npm in the cell then never asks
    // the default registry for a package of that scope. One whose URL is
    // no http(s) URL (not shown: it may hold a token) gets a name that
    // resolves nowhere (.invalid, RFC 2606), for the same reason.
    rc += Line(scope + ":registry", normal.ok() ? *normal : std::string(kNoRegistry));
    if (scopes.count(scope) == 0) continue;
    AddRegistry(&plan.npm.registries, Reachable(scope + ":registry", raw, config, proxy_env, &plan));
  }
  if (!config.cafile.empty()) {
    plan.npm.cafile = config.cafile;
    rc += Line("cafile", kCellNpmCafile);
  }
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
  constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----", kEnd = "-----END CERTIFICATE-----";
  std::string out;
  for (std::size_t at = 0;;) {
    std::size_t begin = pem.find(kBegin, at);
    if (begin == std::string_view::npos) break;
    std::size_t end = pem.find(kEnd, begin);
    if (end == std::string_view::npos) break;
    out.append(pem.substr(begin, end + kEnd.size() - begin));
    out += '\n';
    at = end + kEnd.size();
  }
  return out;
}

Result<std::string> WriteScriptCafile(const std::string& install_dir, const std::string& host_cafile) {
  struct stat st{};
  if (host_cafile.empty() || host_cafile.front() != '/' || ::stat(host_cafile.c_str(), &st) != 0 ||
      !S_ISREG(st.st_mode) || st.st_size > kMaxCafileBytes) {
    return host_cafile;  // as it is: the cell's bind refuses it, or skips it as npm does (missing)
  }
  auto text = ReadTextFile(host_cafile, "read npm's cafile");
  if (!text.ok()) return text.error();
  return WriteFileForCells(install_dir + "/" + kCafileName, CertificatesOf(*text), "write the install scripts' CA certificates");
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
