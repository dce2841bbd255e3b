#include "source/npm_user_agent.h"

#include <sys/utsname.h>

#include <chrono>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "source/host_run.h"
#include "util/json_input.h"
#include "util/lstat_kind.h"

namespace mcpcell {
namespace {

/// `node --version` ("v20.1.0"), trimmed; "" when it cannot be asked.
std::string AskNodeVersion(const std::string& node) {
  auto out = RunHostTool({{node, "--version"}, true, std::chrono::seconds(10), "asking node for its version", {}, "", ""});
  if (!out.ok()) return {};
  std::string v = *out;
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' ')) v.pop_back();
  return v.size() > 1 && v[0] == 'v' && v.find_first_of(" \t\n") == std::string::npos ? v : std::string();
}

/// Asked once per node and process: every script cell of a run gets the same answer.
std::string NodeVersion(const std::string& node) {
  static std::mutex mu;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(node);
  if (it == known.end()) it = known.emplace(node, AskNodeVersion(node)).first;
  return it->second;
}

std::string NpmVersion(const std::string& npm_root) {
  const std::string manifest = npm_root + "/package.json";
  if (!IsRealFile(manifest)) return {};
  auto text = ReadTextFile(manifest, "read npm's package.json");
  if (!text.ok()) return {};
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("version") || !j["version"].is_string()) return {};
  std::string v = j["version"].get<std::string>();
  return v.find_first_of(" \t\r\n") == std::string::npos ? v : std::string();
}

}  // namespace

std::string NodeArch(std::string_view machine) {
  // Node's names (process.arch), where they differ from the kernel's.
  static const std::map<std::string_view, std::string_view> kNames = {
      {"x86_64", "x64"}, {"aarch64", "arm64"}, {"i386", "ia32"}, {"i686", "ia32"},
      {"armv7l", "arm"}, {"armv6l", "arm"},    {"ppc64le", "ppc64"}};
  auto it = kNames.find(machine);
  return std::string(it == kNames.end() ? machine : it->second);
}

std::string NpmUserAgent(const std::string& npm_root, const std::string& node) {
  const std::string npm_version = NpmVersion(npm_root);
  const std::string node_version = node.empty() ? std::string() : NodeVersion(node);
  utsname u{};
  if (npm_version.empty() || node_version.empty() || ::uname(&u) != 0) return {};
  return "npm/" + npm_version + " node/" + node_version + " linux " + NodeArch(u.machine) + " workspaces/false";
}

}  // namespace mcpcell
