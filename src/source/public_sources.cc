#include "source/public_sources.h"

#include <sys/stat.h>

#include <filesystem>
#include <string_view>

#include "source/registry_url.h"
#include "util/code_injecting_env.h"
#include "util/home_path.h"
#include "util/root_only_file.h"
#include "util/terminal_text.h"

namespace mcpcell {
namespace {

constexpr const char* kSystemCaBundles[] = {
    "/etc/ssl/certs/ca-certificates.crt",                  // Debian, Ubuntu, Alpine
    "/etc/pki/tls/certs/ca-bundle.crt",                    // Fedora, RHEL
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",   // Fedora, RHEL
    "/etc/ssl/ca-bundle.pem",                              // openSUSE
    "/etc/ssl/cert.pem",                                   // Alpine, Arch
};

/// The distribution's directory of authorities, as SSL_CERT_DIR names it
/// (as written: OpenSSL reads what it is given).
bool IsSystemCaDirectory(std::string_view dir) { return dir == "/etc/ssl/certs" || dir == "/etc/pki/tls/certs"; }

/// The distribution's CA bundle (Debian's, Fedora's, Alpine's), the one file
/// that vouches for every other program as well, and only root can change.
/// Not any root-owned file under /usr: packages ship test CAs with their
/// keys beside them (adv14: google-cloud-sdk's urllib3 test CA signed
/// registry.npmjs.org for a proxy).
bool IsSystemFile(const std::string& path) {
  return IsRootOnlyFile(path, RootPlaces{.dirs = {}, .files = kSystemCaBundles});
}

/// Whether `value` (the environment's) names `path`, compared as lexically
/// normal paths.
bool SamePath(const std::string& value, const std::string& path) {
  return std::filesystem::path(value).lexically_normal() == std::filesystem::path(path).lexically_normal();
}

/// What of pip's own config files could name another index for a uvx://
/// install (adv13): pip reads $XDG_CONFIG_HOME/pip/pip.conf, ~/.config/pip
/// and ~/.pip from the environment's HOME, which a client's env block sets;
/// a config of the account's own may name another index too. The system's
/// (/etc, root's) is the machine's. "" when none could.
std::string WhyPipConfigIsNotPublic(const std::vector<std::string>& environment) {
  std::string home = AccountHome();
  auto env_home = EnvironmentValue(environment, "HOME");
  if (env_home && !SamePath(*env_home, home)) return "HOME is not your account's home, and pip reads its config from there";
  auto xdg = EnvironmentValue(environment, "XDG_CONFIG_HOME");
  if (xdg && !xdg->empty() && !SamePath(*xdg, home + "/.config")) {
    return "XDG_CONFIG_HOME is set, and pip reads pip/pip.conf there";
  }
  // pip reads DIR/pip/pip.conf for each of them too (adv14).
  if (auto dirs = EnvironmentValue(environment, "XDG_CONFIG_DIRS"); dirs && !dirs->empty() && *dirs != "/etc/xdg") {
    return "XDG_CONFIG_DIRS is set, and pip reads pip/pip.conf in each of its directories";
  }
  for (const std::string& conf : {home + "/.config/pip/pip.conf", home + "/.pip/pip.conf"}) {
    struct stat st{};
    if (::lstat(conf.c_str(), &st) == 0) return "your pip config " + VisibleOnTerminal(conf) + " may name another index";
  }
  return "";
}

}  // namespace

std::string WhyNpmConfigIsNotPublic(const NpmConfig& config, const std::string& package) {
  std::string registry = config.registry;
  std::string which = "npm's registry";
  if (package.size() > 1 && package[0] == '@' && package.find('/') != std::string::npos) {
    std::string scope = package.substr(0, package.find('/'));
    if (auto it = config.scopes.find(scope); it != config.scopes.end()) {
      registry = it->second;
      which = "npm's registry for " + VisibleOnTerminal(scope);
    }
  }
  auto url = NormalizeRegistryUrl(registry);
  if (!url.ok()) return which + " is not a URL mcpcell can read";
  if (WithTrailingSlash(*url) != kPublicNpmRegistry) {
    return which + " is " + VisibleOnTerminal(RegistryOrigin(*url)) + ", not the public npm registry";
  }
  if (config.strict_ssl == false) return "npm's strict-ssl is off, so anyone on the way can answer for the registry";
  if (!config.ca.empty()) return "npm trusts another certificate authority (its ca setting), which can answer for the registry";
  if (!config.cafile.empty() && !IsSystemFile(config.cafile)) {
    return "npm trusts the certificate authorities of " + VisibleOnTerminal(config.cafile) +
           ", a file not the system's (root's, writable by no one else), which can answer for the registry";
  }
  return "";
}

std::string WhyCaEnvironmentIsNotPublic(const std::vector<std::string>& environment) {
  for (const CaVariable& ca : CaVariables()) {
    std::string name(ca.name);
    auto v = EnvironmentValue(environment, name);
    if (!v || v->empty()) continue;
    if (ca.directory && !IsSystemCaDirectory(*v)) {
      return name + " names " + VisibleOnTerminal(*v) + ", certificate authorities that are not the system's";
    }
    if (!ca.directory && !IsSystemFile(*v)) {
      return name + " names " + VisibleOnTerminal(*v) +
             ", a certificate authority that is not the system's, which can answer for the registry";
    }
  }
  return "";
}

std::string WhyPipSettingsAreNotPublic(const std::vector<std::string>& environment) {
  for (const std::string& entry : environment) {
    std::string_view name = std::string_view(entry).substr(0, entry.find('='));
    if (PicksPackageIndex(name)) return std::string(name) + " is set, and pip's and uv's settings choose where packages come from";
  }
  if (std::string why = WhyPipConfigIsNotPublic(environment); !why.empty()) return why;
  return WhyCaEnvironmentIsNotPublic(environment);
}

}  // namespace mcpcell
