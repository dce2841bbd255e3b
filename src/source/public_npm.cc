#include "source/public_npm.h"

#include <sys/stat.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "source/registry_url.h"
#include "util/json_input.h"
#include "util/terminal_text.h"

namespace mcpcell {

namespace {

bool RootsAlone(const struct stat& st) { return st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0; }

/// A file of the system's (under /etc or /usr) that only root can change, in
/// a directory only root can change: the system's CA bundle (this machine's
/// npm names /etc/ssl/certs/ca-certificates.crt), which vouches for every
/// other program as well. Root's own files elsewhere are not: a client's
/// env block can name any file of the caller's.
bool IsSystemFile(const std::string& path) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec || (real.string().rfind("/etc/", 0) != 0 && real.string().rfind("/usr/", 0) != 0)) return false;
  struct stat file{}, dir{};
  return ::stat(real.c_str(), &file) == 0 && S_ISREG(file.st_mode) && RootsAlone(file) &&
         ::stat(real.parent_path().c_str(), &dir) == 0 && RootsAlone(dir);
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
