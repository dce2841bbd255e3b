#include "client/wrap_entry.h"

#include <algorithm>

#include "source/server_ref.h"

namespace mcpcell {
namespace {

using nlohmann::ordered_json;

std::string BaseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// A remote (URL) server: each client's own spelling. Sources: Claude Code
/// and VS Code "type": "http"/"sse" + "url"; Windsurf "serverUrl"; Gemini CLI
/// "httpUrl"/"url"; Cline "type": "streamableHttp"; Zed "url".
bool IsRemote(const ordered_json& e) {
  for (const char* k : {"url", "serverUrl", "httpUrl"}) {
    if (e.contains(k)) return true;
  }
  if (e.contains("type") && e["type"].is_string()) {
    std::string t = e["type"].get<std::string>();
    return t == "http" || t == "sse" || t == "streamable-http" || t == "streamableHttp";
  }
  return false;
}

bool IsEnvName(const std::string& n) {
  if (n.empty() || (n[0] >= '0' && n[0] <= '9')) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

struct Target {
  std::string source;              ///< "npx://..", "docker://..", or "" for a plain command
  std::vector<std::string> names;  ///< extra --env NAME[=VALUE] from docker -e
  std::vector<std::string> args;   ///< the server's own arguments (after mcpcell's --)
};

/// npx's own options before the package; anything else npx does (-p, -c,
/// --package) has no npx:// spelling.
std::optional<Target> FromNpx(const std::vector<std::string>& args, std::string* why) {
  std::size_t i = 0;
  while (i < args.size() && (args[i] == "-y" || args[i] == "--yes" || args[i] == "-q" || args[i] == "--quiet")) ++i;
  if (i >= args.size()) {
    *why = "npx with no package";
    return std::nullopt;
  }
  if (args[i].empty() || args[i][0] == '-') {
    *why = "npx option " + args[i] + " has no npx:// equivalent";
    return std::nullopt;
  }
  auto ref = ParseServerRef("npx://" + args[i], {});
  if (!ref.ok()) {
    *why = "npx package " + args[i] + ": " + ref.error().Message();
    return std::nullopt;
  }
  return Target{"npx://" + args[i], {}, {args.begin() + static_cast<long>(i) + 1, args.end()}};
}

/// `uvx PKG[@VER|==VER] ARGS`: any uvx option (--from, --with, -p, ...) has no
/// uvx:// spelling and leaves the entry as it is.
std::optional<Target> FromUvx(const std::vector<std::string>& args, std::string* why) {
  if (args.empty() || args[0].empty() || args[0][0] == '-') {
    *why = args.empty() ? "uvx with no package" : "uvx option " + args[0] + " has no uvx:// equivalent";
    return std::nullopt;
  }
  std::string spec = args[0];
  if (auto eq = spec.find("=="); eq != std::string::npos) spec = spec.substr(0, eq) + "@" + spec.substr(eq + 2);
  auto ref = ParseServerRef("uvx://" + spec, {});
  if (!ref.ok()) {
    *why = "uvx package " + args[0] + ": " + ref.error().Message();
    return std::nullopt;
  }
  return Target{"uvx://" + spec, {}, {args.begin() + 1, args.end()}};
}

/// An env key of the entry that sets how uvx resolves packages: uv reads
/// UV_* (UV_INDEX_URL, UV_EXTRA_INDEX_URL, UV_DEFAULT_INDEX, UV_INDEX, ...),
/// the host's pip behind uvx:// reads none of them but PIP_*, which uvx
/// ignores. Wrapped, such an entry would resolve the package on another
/// index than it does today: a private name fetched from PyPI is dependency
/// confusion. "" when the entry has none.
std::string UvIndexSetting(const ordered_json& entry) {
  if (!entry.contains("env") || !entry["env"].is_object()) return {};
  for (const auto& [k, v] : entry["env"].items()) {
    if (k.rfind("UV_", 0) == 0 || k.rfind("PIP_", 0) == 0) return k;
  }
  return {};
}

/// `docker run` with only the options a docker:// source implies (-i, --rm)
/// or mcpcell has (-e NAME[=VALUE] → --env). Any other option (volumes,
/// networks, users, ...) changes what the container may do: left alone.
std::optional<Target> FromDocker(const std::vector<std::string>& args, std::string* why) {
  if (args.empty() || args[0] != "run") {
    *why = "docker without 'run'";
    return std::nullopt;
  }
  Target t;
  std::size_t i = 1;
  for (; i < args.size() && !args[i].empty() && args[i][0] == '-'; ++i) {
    const std::string& a = args[i];
    if (a == "-i" || a == "--interactive" || a == "--rm" || a == "--init") continue;
    if ((a == "-e" || a == "--env") && i + 1 < args.size()) {
      t.names.push_back(args[++i]);
    } else if (a.rfind("--env=", 0) == 0) {
      t.names.push_back(a.substr(6));
    } else {
      *why = "docker run option " + a + " has no docker:// equivalent (mcpcell decides mounts, network and user)";
      return std::nullopt;
    }
  }
  if (i >= args.size()) {
    *why = "docker run with no image";
    return std::nullopt;
  }
  auto ref = ParseServerRef("docker://" + args[i], {});
  if (!ref.ok()) {
    *why = "docker image " + args[i] + ": " + ref.error().Message();
    return std::nullopt;
  }
  t.source = "docker://" + args[i];
  t.args.assign(args.begin() + static_cast<long>(i) + 1, args.end());
  return t;
}

// A uvx entry whose index mcpcell would not follow (its env, or a uv.toml):
// wrapped, the package could come from another index (dependency confusion).
std::optional<WrapOutcome> UvxIndexLeft(const ordered_json& entry, const WrapOptions& opts) {
  if (auto k = UvIndexSetting(entry); !k.empty()) {
    return WrapOutcome{WrapOutcome::Kind::kLeft, {},
                       "its env sets " + k + ", which uvx:// does not follow (mcpcell installs with the host's pip, "
                       "which reads only pip.conf): wrapped, the package could come from another index. Set the "
                       "index in pip.conf (pip config set global.index-url URL), remove " + k +
                           " from the entry, and wrap again"};
  }
  if (!opts.uv_index_config.empty()) {
    return WrapOutcome{WrapOutcome::Kind::kLeft, {},
                       opts.uv_index_config + " sets an index for uvx, which uvx:// does not follow (mcpcell installs "
                       "with the host's pip, which reads only pip.conf): wrapped, the package could come from another "
                       "index. Set the index in pip.conf (pip config set global.index-url URL) and wrap again"};
  }
  return std::nullopt;
}

}  // namespace

bool IsWrapped(const ordered_json& entry) {
  return entry.is_object() && entry.contains("command") && entry["command"].is_string() &&
         BaseName(entry["command"].get<std::string>()) == "mcpcell";
}

std::string ListedKind(const WrapOutcome& w, const ordered_json& entry) {
  if (w.kind == WrapOutcome::Kind::kRemote) return "remote";
  if (w.kind == WrapOutcome::Kind::kAlready) return "wrapped";
  if (entry.is_object() && entry.contains("command") && entry["command"].is_string()) {
    return "stdio: " + entry["command"].get<std::string>();
  }
  return "other";
}

WrapOutcome WrapEntry(const ordered_json& entry, const WrapOptions& opts) {
  WrapOutcome out;
  if (!entry.is_object()) return {WrapOutcome::Kind::kLeft, {}, "not an object"};
  if (IsRemote(entry)) return {WrapOutcome::Kind::kRemote, {}, "a remote (URL) server: nothing runs on this machine"};
  if (IsWrapped(entry)) {
    std::string cmd = entry["command"].get<std::string>();
    // Said, not changed: the user may run another mcpcell on purpose.
    std::string other = cmd == opts.mcpcell || cmd == "mcpcell" ? "" : " (" + cmd + ", not this one: " + opts.mcpcell + ")";
    return {WrapOutcome::Kind::kAlready, {}, "already runs through mcpcell" + other};
  }
  if (!entry.contains("command") || !entry["command"].is_string() || entry["command"].get<std::string>().empty()) {
    return {WrapOutcome::Kind::kLeft, {}, "no \"command\" string (Zed's old {\"path\": ...} form is not rewritten)"};
  }
  std::vector<std::string> args;
  if (entry.contains("args")) {
    if (!entry["args"].is_array()) return {WrapOutcome::Kind::kLeft, {}, "\"args\" is not an array"};
    for (const auto& a : entry["args"]) {
      if (!a.is_string()) return {WrapOutcome::Kind::kLeft, {}, "\"args\" holds a non-string"};
      args.push_back(a.get<std::string>());
    }
  }
  std::string command = entry["command"].get<std::string>();
  std::string why;
  std::optional<Target> target;
  if (BaseName(command) == "npx") {
    target = FromNpx(args, &why);
  } else if (BaseName(command) == "docker") {
    target = FromDocker(args, &why);
  } else if (BaseName(command) == "uvx") {
    if (auto left = UvxIndexLeft(entry, opts)) return *left;
    target = FromUvx(args, &why);
  } else {
    std::vector<std::string> argv = {command};
    argv.insert(argv.end(), args.begin(), args.end());
    target = Target{"", {}, argv};
  }
  if (!target) return {WrapOutcome::Kind::kLeft, {}, why};

  std::vector<std::string> run = {"run"};
  if (target->source.empty()) run.push_back("--isolate");
  // One word per option ("--policy=P", "--env=NAME"): a value can never be
  // read as another of mcpcell's options.
  if (opts.policy) run.push_back("--policy=" + *opts.policy);
  std::vector<std::string> names = target->names;
  if (entry.contains("env") && entry["env"].is_object()) {
    for (const auto& [k, v] : entry["env"].items()) {
      // A key with "=" would become --env=NAME=VALUE: a value in argv.
      if (!IsEnvName(k)) return {WrapOutcome::Kind::kLeft, {}, "environment variable name '" + k + "' is not a plain NAME ([A-Za-z_][A-Za-z0-9_]*)"};
      names.push_back(k);
    }
  }
  std::vector<std::string> seen;
  for (const auto& n : names) {
    if (!IsEnvName(n.substr(0, n.find('=')))) {
      return {WrapOutcome::Kind::kLeft, {}, "environment variable name '" + n.substr(0, n.find('=')) +
                                                "' is not a plain NAME ([A-Za-z_][A-Za-z0-9_]*)"};
    }
    if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
    seen.push_back(n);
    run.push_back("--env=" + n);
  }
  if (!target->source.empty()) run.push_back(target->source);
  if (!target->args.empty()) {
    run.push_back("--");
    run.insert(run.end(), target->args.begin(), target->args.end());
  }
  out.kind = WrapOutcome::Kind::kWrapped;
  out.entry = entry;
  out.entry["command"] = opts.mcpcell;
  out.entry["args"] = run;
  out.note = target->source.empty() ? "runs in a cell: " + command : "runs " + target->source + " in a cell";
  return out;
}

}  // namespace mcpcell
