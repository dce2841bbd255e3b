#include "client/wrap_entry.h"

#include <algorithm>

#include "client/rewrap.h"
#include "client/wrap_env.h"
#include "source/server_ref.h"
#include "util/code_injecting_env.h"

namespace mcpcell {
namespace {

using nlohmann::ordered_json;

std::string BaseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// A url key of a remote (URL) server, each client's own spelling: Claude
/// Code, VS Code, Gemini CLI and Zed "url"; Windsurf "serverUrl"; Gemini CLI
/// "httpUrl". "" when none.
std::string UrlKey(const ordered_json& e) {
  for (const char* k : {"url", "serverUrl", "httpUrl"}) {
    if (e.contains(k)) return k;
  }
  return {};
}

/// A remote server: a url key or a remote "type" (Claude Code and VS Code
/// "http"/"sse", Cline "streamableHttp"), and no "command". An entry with a
/// command is local whatever else it has: a client that starts "command"
/// (VS Code for "type": "stdio", others whenever there is one) would run it
/// with no cell if a stray "url" left it unwrapped (adv10).
bool IsRemote(const ordered_json& e) {
  if (e.contains("command")) return false;
  if (!UrlKey(e).empty()) return true;
  if (e.contains("type") && e["type"].is_string()) {
    std::string t = e["type"].get<std::string>();
    return t == "http" || t == "sse" || t == "streamable-http" || t == "streamableHttp";
  }
  return false;
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
    if (PicksPackageIndex(k)) return k;
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

// An npx entry whose env tells npm where or what to fetch: mcpcell's own npm
// (run outside any cell, with mcpcell's environment, which the client sets
// from this env block) would fetch the package from there, and the policy
// would judge it as the package of that name from the registry (a pinned
// official entry is trusted by default): dependency confusion, as uvx's.
std::optional<WrapOutcome> NpxConfigLeft(const ordered_json& entry) {
  auto keys = NpmConfigSettings(entry);
  if (keys.empty()) return std::nullopt;
  std::string names;
  for (const auto& k : keys) names += (names.empty() ? "" : ", ") + k;
  return WrapOutcome{WrapOutcome::Kind::kLeft, {},
                     "its env sets " + names + ", npm settings that change where or what npm fetches: wrapped, "
                     "mcpcell's npm would fetch the package from there, and the policy would judge it as the npx:// "
                     "package of that name from the usual registry. Remove " + names +
                         " from the entry (a registry the whole machine uses belongs in ~/.npmrc) and wrap again"};
}

/// The wrapped entry's note: what runs, and whether in a cell. A plain
/// command has --isolate, which no policy rule turns into a run without a
/// cell; a source runs as the policy decides, and a --policy may allow it.
std::string WrappedNote(const std::string& command, const std::string& source, const WrapOptions& opts) {
  if (source.empty()) return "runs in a cell: " + command;
  if (!opts.policy) return "runs " + source + " in a cell (the built-in policy isolates every server)";
  return "runs " + source + " under --policy=" + *opts.policy + ": in a cell unless that policy allows it (`mcpcell "
         "policy explain --policy " + *opts.policy + " " + source + "` says which)";
}

}  // namespace

bool IsWrapped(const ordered_json& entry) {
  return entry.is_object() && entry.contains("command") && entry["command"].is_string() &&
         BaseName(entry["command"].get<std::string>()) == "mcpcell";
}

std::string ListedKind(const WrapOutcome& w, const ordered_json& entry) {
  if (w.kind == WrapOutcome::Kind::kRemote) return "remote";
  if (w.kind == WrapOutcome::Kind::kAlready || IsWrapped(entry)) return "wrapped";
  if (entry.is_object() && entry.contains("command") && entry["command"].is_string()) {
    return "stdio: " + entry["command"].get<std::string>();
  }
  return "other";
}

WrapOutcome WrapEntry(const ordered_json& entry, const WrapOptions& opts) {
  WrapOutcome out;
  if (!entry.is_object()) return {WrapOutcome::Kind::kLeft, {}, "not an object"};
  if (IsRemote(entry)) return {WrapOutcome::Kind::kRemote, {}, "a remote (URL) server: nothing runs on this machine"};
  if (IsWrapped(entry)) return Rewrap(entry, opts);
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
    if (auto left = NpxConfigLeft(entry)) return *left;
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
  WrapEnv env = PlanWrapEnv(entry, target->names, opts);
  if (!env.left.empty()) return {WrapOutcome::Kind::kLeft, {}, env.left};
  run.insert(run.end(), env.options.begin(), env.options.end());
  if (!target->source.empty()) run.push_back(target->source);
  if (!target->args.empty()) {
    run.push_back("--");
    run.insert(run.end(), target->args.begin(), target->args.end());
  }
  out.kind = WrapOutcome::Kind::kWrapped;
  out.entry = entry;
  out.entry["command"] = opts.mcpcell;
  out.entry["args"] = run;
  // A moved variable leaves the env block: the client must not set it on mcpcell.
  for (const auto& k : env.moved) out.entry["env"].erase(k);
  if (!env.moved.empty() && out.entry["env"].empty()) out.entry.erase("env");
  out.note = WrappedNote(command, target->source, opts) + WrapEnvNote(env, entry);
  if (auto url = UrlKey(entry); !url.empty()) {
    out.note += "; it also has \"" + url + "\", but a client that starts its \"command\" would run it with no cell";
  }
  return out;
}

}  // namespace mcpcell
