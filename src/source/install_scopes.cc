#include "source/install_scopes.h"

#include <algorithm>

#include "source/registry_url.h"
#include "util/terminal_text.h"

namespace mcpcell {

std::vector<std::string> InstallScopes::Env() const {
  std::vector<std::string> out;
  for (const auto& r : redirect) {
    if (r.scope.find('_') == std::string::npos) out.push_back("npm_config_" + r.scope + ":registry=" + own);
  }
  return out;
}

Result<std::string> InstallScopes::ProjectNpmrc() const {
  std::vector<std::string> scopes;
  for (const auto& r : redirect) {
    if (r.scope.find('_') != std::string::npos) scopes.push_back(r.scope);
  }
  if (scopes.empty()) return std::string();
  std::string value;
  for (char c : own) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return MakeError("point npm scopes at", RegistryOrigin(own), "the registry URL holds a control character");
    }
    if (c == '\\' || c == ';' || c == '#') value += '\\';
    value += c;
  }
  if (own.find("${") != std::string::npos) {
    return MakeError("point npm scopes at", RegistryOrigin(own), "the registry URL holds '${', which npm would expand");
  }
  std::string out;
  for (const auto& scope : scopes) out += scope + ":registry=" + value + "\n";
  return out;
}

std::string InstallScopes::Hint(const std::string& package) const {
  if (redirect.empty()) return "";
  std::string scopes;
  for (const auto& r : redirect) scopes += (scopes.empty() ? "" : ", ") + r.scope + " (" + r.mapped + ")";
  return "for " + package + ", packages of the scopes your npm config maps elsewhere — " + scopes +
         " — are looked up on its own registry (" + RegistryOrigin(own) +
         "), so a package you did not ask for is not fetched from those registries with your credentials "
         "there or from where your machine stands; if this package does need them from there, add --npm-scope "
         "SCOPE for each (npx://@scope/name, a server of that scope itself, needs none)";
}

Result<InstallScopes> ScopesForInstall(const NpmConfig& config, const std::string& package,
                                       const std::vector<std::string>& trusted) {
  for (const auto& t : trusted) {
    if (!config.scopes.contains(t)) {
      return MakeError("--npm-scope", VisibleOnTerminal(t),
                       "your npm config maps no registry for this scope (npm config get " + VisibleOnTerminal(t) +
                           ":registry), so its packages come from the default registry anyway");
    }
  }
  std::string scope;
  if (!package.empty() && package[0] == '@' && package.find('/') != std::string::npos) {
    scope = package.substr(0, package.find('/'));
  }
  auto mapped = config.scopes.find(scope);
  const std::string& raw = (!scope.empty() && mapped != config.scopes.end()) ? mapped->second : config.registry;
  auto own = NormalizeRegistryUrl(raw.empty() ? "https://registry.npmjs.org/" : raw);
  if (!own.ok()) return MakeError("find the registry of", package, own.error().detail);
  InstallScopes out;
  out.own = WithTrailingSlash(*own);
  for (const auto& [name, url] : config.scopes) {
    if (name == scope || std::find(trusted.begin(), trusted.end(), name) != trusted.end()) continue;
    auto normal = NormalizeRegistryUrl(url);
    if (normal.ok() && WithTrailingSlash(*normal) == out.own) continue;
    out.redirect.push_back({name, normal.ok() ? RegistryOrigin(*normal) : "a URL mcpcell cannot read"});
  }
  return out;
}

}  // namespace mcpcell
