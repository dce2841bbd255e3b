#include "source/lifecycle.h"

#include "util/shell_quote.h"
#include "util/terminal_text.h"

namespace mcpcell {
namespace {

/// Deeper "config" objects are left out: no npm package nests so far, and
/// the walk is recursive.
constexpr int kMaxDepth = 16;

void Flatten(const nlohmann::json& v, const std::string& key, int depth,
             std::vector<std::pair<std::string, std::string>>* out) {
  if (depth > kMaxDepth || key.find('=') != std::string::npos || key.find('\0') != std::string::npos) return;
  if (v.is_null() || (v.is_boolean() && !v.get<bool>())) {
    out->emplace_back(key, "");
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) Flatten(v[i], key + "_" + std::to_string(i), depth + 1, out);
  } else if (v.is_object()) {
    for (const auto& [k, item] : v.items()) Flatten(item, key + "_" + k, depth + 1, out);
  } else if (v.is_string()) {
    out->emplace_back(key, v.get<std::string>());
  } else {
    out->emplace_back(key, v.dump());  // a number, true
  }
}

bool HasNul(const std::string& s) { return s.find('\0') != std::string::npos; }

/// One step: banner, the directory check, the script with its variables.
std::string StepText(const LifecycleStep& step) {
  const std::string dir = ShellQuote(step.dir);
  std::string text = "printf '\\n> %s %s\\n> %s\\n' " + ShellQuote(step.id) + " " + ShellQuote(step.event) + " " +
                     ShellQuote(step.script) + "\n";
  // `cd -P` and `pwd -P` resolve every link: the directory was checked
  // plain when planned, and a script earlier in this cell may have swapped
  // it (or a directory above it) for a link since.
  text += "cd -P -- " + dir + " && [ \"$(pwd -P)\" = " + dir + " ] || { printf '%s\\n' " +
          ShellQuote("mcpcell: the directory planned for the " + step.event + " script of " + step.id +
                     " is no longer a plain directory (an earlier script replaced it?): refusing to run it there") +
          " >&2; exit 1; }\n";
  // By absolute path: the PATH starts with the bins of the package's
  // dependencies, one of which may be named "env" (the shell's own cd,
  // pwd, [ and printf are builtins).
  text += "/usr/bin/env";
  std::vector<std::pair<std::string, std::string>> vars{{"npm_lifecycle_event", step.event},
                                                        {"npm_lifecycle_script", step.script},
                                                        {"npm_package_json", step.dir + "/package.json"}};
  vars.insert(vars.end(), step.env.begin(), step.env.end());
  for (const auto& [k, v] : vars) text += " " + ShellQuote(k + "=" + v);
  return text + " /bin/sh -c " + ShellQuote(step.script) + " || exit $?\n";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> PackageEnv(const nlohmann::json& manifest) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!manifest.is_object()) return out;
  for (const char* field : {"name", "version", "config", "engines", "bin"}) {
    if (manifest.contains(field)) Flatten(manifest[field], std::string("npm_package_") + field, 0, &out);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> NodeEnv(const PackageNode& node) {
  auto flag = [](bool b) { return std::string(b ? "1" : ""); };  // rebuild.js's boolEnv
  std::vector<std::pair<std::string, std::string>> out;
  if (!node.resolved.empty()) out.emplace_back("npm_package_resolved", node.resolved);
  if (!node.integrity.empty()) out.emplace_back("npm_package_integrity", node.integrity);
  out.emplace_back("npm_package_optional", flag(node.optional));
  out.emplace_back("npm_package_dev", flag(node.dev));
  out.emplace_back("npm_package_peer", flag(node.peer));
  out.emplace_back("npm_package_dev_optional", flag(node.dev_optional && !node.dev && !node.optional));
  return out;
}

Result<std::string> LifecycleProgram(const std::vector<LifecycleStep>& steps) {
  std::string text = "# The install scripts mcpcell planned for this cell, in order (source/lifecycle.h).\n";
  for (const auto& step : steps) {
    bool nul = HasNul(step.dir) || HasNul(step.script) || HasNul(step.id);
    for (const auto& [k, v] : step.env) nul = nul || HasNul(k) || HasNul(v);
    if (nul) {
      // The id is the tarball's own name@version: shown, never obeyed (adv9).
      return MakeError("run the " + step.event + " script of", VisibleOnTerminal(step.id),
                       "it holds a NUL byte, which no command can carry (npm refuses it too)");
    }
    text += StepText(step);
  }
  return text;
}

}  // namespace mcpcell
