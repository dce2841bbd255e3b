#include "source/public_npm.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

#include "source/registry_url.h"
#include "util/code_injecting_env.h"
#include "util/home_path.h"
#include "util/json_input.h"
#include "util/root_only_file.h"
#include "util/terminal_text.h"
#include "util/unique_fd.h"
#include "util/write_all.h"

extern char** environ;

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

namespace {

/// What of pip's own config files could name another index for a uvx://
/// install (adv13): pip reads $XDG_CONFIG_HOME/pip/pip.conf, ~/.config/pip
/// and ~/.pip from the environment's HOME, which a client's env block sets;
/// a config of the account's own may name another index too. The system's
/// (/etc, root's) is the machine's. "" when none could.
std::string WhyPipConfigIsNotPublic() {
  std::string home = AccountHome();
  const char* env_home = std::getenv("HOME");
  if (env_home != nullptr && std::filesystem::path(env_home).lexically_normal() != std::filesystem::path(home).lexically_normal()) {
    return "HOME is not your account's home, and pip reads its config from there";
  }
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && *xdg != '\0' &&
      std::filesystem::path(xdg).lexically_normal() != std::filesystem::path(home + "/.config").lexically_normal()) {
    return "XDG_CONFIG_HOME is set, and pip reads pip/pip.conf there";
  }
  // pip reads DIR/pip/pip.conf for each of them too (adv14).
  if (const char* dirs = std::getenv("XDG_CONFIG_DIRS"); dirs != nullptr && *dirs != '\0' && std::string_view(dirs) != "/etc/xdg") {
    return "XDG_CONFIG_DIRS is set, and pip reads pip/pip.conf in each of its directories";
  }
  for (const std::string& conf : {home + "/.config/pip/pip.conf", home + "/.pip/pip.conf"}) {
    struct stat st{};
    if (::lstat(conf.c_str(), &st) == 0) return "your pip config " + VisibleOnTerminal(conf) + " may name another index";
  }
  return "";
}

}  // namespace

std::string WhyPipSettingsAreNotPublic() {
  for (char** e = ::environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::string_view name = entry.substr(0, entry.find('='));
    if (PicksPackageIndex(name)) return std::string(name) + " is set, and pip's and uv's settings choose where packages come from";
  }
  if (std::string why = WhyPipConfigIsNotPublic(); !why.empty()) return why;
  return WhyCaEnvironmentIsNotPublic();
}

namespace {

constexpr const char* kOriginFile = ".mcpcell-origin.json";

}  // namespace

Status WriteInstallOrigin(const std::string& dir, const std::string& why) {
  nlohmann::json j{{"public", why.empty()}, {"settings", why.empty() ? "the public registry's, checked at install" : why}};
  std::string path = dir + "/" + kOriginFile;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) return ErrnoError("record where the install came from", path);
  std::string text = j.dump() + "\n";
  return WriteAll(fd.get(), text, "record where the install came from", path);
}

std::string WhyOriginIsNotPublic(const std::string& cache_dir) {
  std::string path = cache_dir + "/" + kOriginFile;
  auto text = ReadTextFile(path, "read where the install came from");
  if (!text.ok()) {
    return "its install has no record of the settings it was made under (an older mcpcell made it); remove " +
           VisibleOnTerminal(cache_dir) + " to have it installed afresh";
  }
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("public") || !j["public"].is_boolean()) {
    return "its record of where it came from (" + VisibleOnTerminal(path) + ") is not mcpcell's";
  }
  if (j["public"].get<bool>()) return "";
  std::string settings = j.contains("settings") && j["settings"].is_string() ? j["settings"].get<std::string>() : "";
  return "it was installed under other settings (" + VisibleOnTerminal(settings) + "); remove " + VisibleOnTerminal(cache_dir) +
         " to have it installed afresh under these";
}

std::string WhyCaEnvironmentIsNotPublic() {
  for (const CaVariable& ca : CaVariables()) {
    std::string name(ca.name);
    const char* v = std::getenv(name.c_str());
    if (v == nullptr || *v == '\0') continue;
    if (ca.directory && !IsSystemCaDirectory(v)) {
      return name + " names " + VisibleOnTerminal(v) + ", certificate authorities that are not the system's";
    }
    if (!ca.directory && !IsSystemFile(v)) {
      return name + " names " + VisibleOnTerminal(v) +
             ", a certificate authority that is not the system's, which can answer for the registry";
    }
  }
  return "";
}

std::string WhyInstallIsNotPublic(const std::string& cache_dir) {
  // npm install --prefix writes the install's package-lock.json (no cell
  // writes there: a script cell writes its own package's directory only).
  std::string lockfile = cache_dir + "/package-lock.json";
  auto text = ReadTextFile(lockfile, "read npm's record of the install");
  if (!text.ok()) return "its install has no record of where its packages came from (" + text.error().Message() + ")";
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("packages") || !j["packages"].is_object()) {
    return "its install's record (" + VisibleOnTerminal(lockfile) + ") is not npm's lockfile";
  }
  for (const auto& [path, entry] : j["packages"].items()) {
    if (path.empty() || !entry.is_object() || entry.value("inBundle", false)) continue;
    if (!entry.contains("resolved")) {
      return "its install does not record where " + VisibleOnTerminal(path) +
             " came from (made with omit-lockfile-registry-resolved, by an older mcpcell); remove " +
             VisibleOnTerminal(cache_dir) + " to have it installed afresh";
    }
    const auto& resolved = entry["resolved"];
    if (!resolved.is_string() || resolved.get<std::string>().rfind(kPublicNpmRegistry, 0) != 0) {
      return "its installed " + VisibleOnTerminal(path) + " came from " +
             (resolved.is_string() ? VisibleOnTerminal(RegistryOrigin(resolved.get<std::string>())) : "an unknown place") +
             ", not the public npm registry (an earlier install under other settings filled the cache)";
    }
  }
  return "";
}

}  // namespace mcpcell
