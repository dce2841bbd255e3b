#include "source/install_origin.h"

#include <fcntl.h>

#include <nlohmann/json.hpp>

#include "source/public_sources.h"
#include "source/registry_url.h"
#include "util/json_input.h"
#include "util/terminal_text.h"
#include "util/unique_fd.h"
#include "util/write_all.h"

namespace mcpcell {
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
