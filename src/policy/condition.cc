#include "policy/condition.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "policy/command_glob.h"
#include "util/json_input.h"
#include "util/path_search.h"

namespace mcpcell {
namespace {

using nlohmann::json;
using Kind = Condition::Kind;

struct Named { std::string_view name; Kind kind; };
constexpr Named kFlags[] = {{"always", Kind::kAlways},
                            {"untrusted_source", Kind::kUntrustedSource},
                            {"unpinned_version", Kind::kUnpinnedVersion},
                            {"not_in_registry", Kind::kNotInRegistry},
                            {"requests_network", Kind::kRequestsNetwork},
                            {"requests_write", Kind::kRequestsWrite}};
constexpr Named kValued[] = {{"source", Kind::kSource}, {"name", Kind::kName},
                             {"registry_tier", Kind::kRegistryTier}};
constexpr Named kCombinators[] = {{"all", Kind::kAll}, {"any", Kind::kAny}, {"not", Kind::kNot}};
constexpr std::string_view kKnown =
    "always, untrusted_source, unpinned_version, not_in_registry, requests_network, requests_write, "
    "{\"source\": ...}, {\"name\": ...}, {\"registry_tier\": ...}, {\"all\": [...]}, {\"any\": [...]}, "
    "{\"not\": ...}";

bool BracketsBalanced(const std::string& glob) {
  bool open = false;
  for (std::size_t i = 0; i < glob.size(); ++i) {
    if (glob[i] == '\\') { ++i; continue; }
    if (glob[i] == '[' && !open) open = true;
    else if (glob[i] == ']' && open) open = false;
  }
  return !open;
}

std::string Name(Kind kind) {
  for (const auto& n : kFlags) if (n.kind == kind) return std::string(n.name);
  for (const auto& n : kValued) if (n.kind == kind) return std::string(n.name);
  for (const auto& n : kCombinators) if (n.kind == kind) return std::string(n.name);
  return "?";
}

Status CheckNameGlob(const std::string& glob, const std::string& origin, const std::string& path) {
  if (!BracketsBalanced(glob)) {
    return JsonPathError(origin, path, "glob \"" + glob + "\" has an unclosed '[' and can never match");
  }
  if (glob.find("://") != std::string::npos) {
    return JsonPathError(origin, path,
                         "glob \"" + glob + "\" can never match: \"name\" matches package, image or "
                         "command names (\"@scope/*\"), not sources; use trusted_sources for \"npx://...\"");
  }
  return {};
}

Result<std::vector<std::string>> ReadValues(const json& v, const std::string& origin,
                                            const std::string& path, Kind kind) {
  std::vector<std::string> values;
  if (v.is_string()) {
    auto s = JsonString(origin, path, v);
    if (!s.ok()) return s.error();
    values.push_back(*s);
  } else {
    auto l = JsonStringList(origin, path, v);
    if (!l.ok()) return l.error();
    if (l->empty()) return JsonPathError(origin, path, "an empty list can never match; give at least one value");
    values = std::move(*l);
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::string vpath = v.is_string() ? path : JsonChild(path, i);
    const std::string& s = values[i];
    if (kind == Kind::kSource && s != "npx" && s != "uvx" && s != "docker" && s != "command") {
      return JsonPathError(origin, vpath, "unknown source kind \"" + s + "\"; expected npx, uvx, docker or command");
    }
    if (kind == Kind::kRegistryTier && s != "official" && s != "verified" && s != "community") {
      return JsonPathError(origin, vpath, "unknown tier \"" + s + "\"; expected official, verified or community");
    }
    if (kind == Kind::kName) MCPCELL_TRY(CheckNameGlob(s, origin, vpath));
  }
  return values;
}

/// Whether a source glob's version part ("npx://p@1.0.*": after the '@'
/// that follows the package name) holds a wildcard.
bool GlobVersionIsWild(const std::string& glob) {
  std::size_t scheme = glob.find("://");
  std::size_t name = scheme == std::string::npos ? 0 : scheme + 3;
  std::size_t at = glob.rfind('@');
  if (at == std::string::npos || at <= name) return false;  // none, or a scope's '@'
  return glob.find_first_of("*?[", at) != std::string::npos;
}

/// Whether a command glob's program word (its first) holds a wildcard.
bool GlobProgramIsWild(const std::string& glob) {
  constexpr std::string_view kScheme = "command://";
  std::string_view rest = std::string_view(glob).substr(glob.rfind(kScheme, 0) == 0 ? kScheme.size() : 0);
  return rest.substr(0, rest.find(' ')).find_first_of("*?[") != std::string_view::npos;
}

bool IsTrusted(const TrustFacts& f, const TrustSettings& t, std::string* why) {
  // A command's source has no version, and an interpreter's names the
  // script: "command://node" must not stand for every node script (adv8).
  bool command = f.kind == ServerRef::Kind::kCommand;
  std::string unversioned = ToString(f.kind) + "://" + f.name;
  // A version wildcard stands for exact versions only: npm resolves a range
  // ("1.0.0||9.0.0", ">=1.0.0") after the decision, to a version the glob
  // never named (adv13). An npx:// source with a range or tag is matched by
  // a glob without a version, or one that spells it as written.
  bool range = f.kind == ServerRef::Kind::kNpx && !f.pinned && !f.version.empty();
  for (const auto& g : t.trusted_sources) {
    bool versioned = GlobMatch(g, f.source) && !(range && GlobVersionIsWild(g));
    // A wildcard program (`command:///usr/bin/*`) trusts a program run bare:
    // with arguments any of them could be what runs (adv13: `find -exec`,
    // `sed e`, `setarch x sh -c`); name the program to trust its arguments.
    if (command && f.program_with_arguments && GlobProgramIsWild(g)) continue;
    if (command ? CommandGlobMatch(g, f.source) : (versioned || GlobMatch(g, unversioned))) {
      *why = f.source + " matches trusted_sources glob \"" + g + "\"";
      return true;
    }
  }
  bool tier_ok = std::find(t.trusted_tiers.begin(), t.trusted_tiers.end(), f.registry_tier) !=
                 t.trusted_tiers.end();
  if (f.registry_pinned && tier_ok) {
    *why = f.source + " is the registry's pinned entry \"" + f.registry_name + "\" of trusted tier " + f.registry_tier;
    return true;
  }
  std::string reg;
  if (!f.in_registry) reg = "it is not in the registry";
  else if (!f.registry_pinned) reg = "it is registry entry \"" + f.registry_name + "\" but not at the registry's pinned version";
  else reg = "its registry tier \"" + f.registry_tier + "\" is not in trusted_tiers [" + fmt::format("{}", fmt::join(t.trusted_tiers, ", ")) + "]";
  *why = f.source + " matches no trusted_sources glob [" + fmt::format("{}", fmt::join(t.trusted_sources, ", ")) +
         "] and " + reg;
  return false;
}

ConditionResult Flag(bool held, std::string why) { return {held, std::move(why)}; }

/// A `name` condition: the server's names (the script's too) against the
/// globs; which names count depends on the rule's side (condition.h).
ConditionResult NameHolds(const Condition& c, const TrustFacts& f, RuleSide side) {
  std::vector<std::string> names{f.name};
  if (!f.registry_name.empty()) names.push_back(f.registry_name);
  if (f.kind == ServerRef::Kind::kCommand) names.push_back(std::filesystem::path(f.name).filename().string());
  // `node server.mjs`: the script too, as given, absolute and its basename.
  for (const auto* s : {&f.script, &f.script_path, &f.module}) {
    if (!s->empty()) names.push_back(*s);
  }
  if (!f.script.empty()) names.push_back(std::filesystem::path(f.script).filename().string());
  if (side == RuleSide::kStricter) names.insert(names.end(), f.maybe_names.begin(), f.maybe_names.end());
  // On the looser side the name must stand for all that runs: a file
  // preloaded or code given before the script (`node -r F S`, `--import
  // data:...`) runs first, and the script's name does not vouch for it (adv13).
  if (side == RuleSide::kLooser && !f.maybe_names.empty()) {
    return Flag(false, "the command also runs " + f.maybe_names.front() +
                           " (an option's file or code), which a name condition cannot stand for");
  }
  // Nor for the interpreter that runs the script: /tmp/x/node is known as
  // node by its name alone (adv14). Only a system program (root's) is.
  if (side == RuleSide::kLooser && f.kind == ServerRef::Kind::kCommand && !f.script.empty() &&
      !IsSystemProgram(f.local_path)) {
    return Flag(false, "the interpreter " + (f.local_path.empty() ? f.name : f.local_path) +
                           " is not a system program (root's), and the script's name does not vouch for it");
  }
  for (const auto& g : c.values) {
    for (const auto& n : names) {
      if (GlobMatch(g, n)) return Flag(true, "name \"" + n + "\" matches \"" + g + "\"");
    }
  }
  return Flag(false, "name \"" + f.name + "\" matches none of [" + fmt::format("{}", fmt::join(c.values, ", ")) + "]");
}


}  // namespace

Status CheckSourceGlob(const std::string& glob, const std::string& origin, const std::string& path) {
  if (!BracketsBalanced(glob)) {
    return JsonPathError(origin, path, "glob \"" + glob + "\" has an unclosed '[' and can never match");
  }
  // A command's program is judged absolute (`./server` is another program in
  // every directory, adv10), so a relative one in a glob could never match.
  if (glob.rfind("command://./", 0) == 0 || glob.rfind("command://../", 0) == 0) {
    return JsonPathError(origin, path,
                         "glob \"" + glob + "\" can never match: a command's program is judged by its absolute "
                         "path (a relative one names another program in every directory); write command:///ABS/PATH "
                         "(`mcpcell policy explain -- CMD` prints the source)");
  }
  static const std::string_view prefixes[] = {"npx://", "uvx://", "docker://", "command://"};
  bool ok = glob[0] == '*' || glob[0] == '?' || glob[0] == '[';
  for (auto p : prefixes) ok = ok || glob.rfind(p, 0) == 0;
  if (!ok) {
    return JsonPathError(origin, path,
                         "glob \"" + glob + "\" can never match: sources are written npx://PKG[@VER], "
                         "uvx://PKG[@VER], docker://IMAGE[:TAG][@DIGEST] or command://PATH, e.g. \"npx://" +
                             glob + "\"");
  }
  return {};
}

Result<Condition> ParseCondition(const json& j, const std::string& origin, const std::string& path) {
  Condition c;
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    for (const auto& n : kFlags) {
      if (n.name == s) { c.kind = n.kind; return c; }
    }
    for (const auto& n : kValued) {
      if (n.name == s) {
        return JsonPathError(origin, path, "\"" + s + "\" needs a value: write {\"" + s + "\": ...}");
      }
    }
    return JsonPathError(origin, path, "unknown condition \"" + s + "\"; expected one of " + std::string(kKnown));
  }
  if (!j.is_object()) return JsonTypeError(origin, path, "a condition (a string or a one-key object)", j);
  if (j.size() != 1) {
    return JsonPathError(origin, path, "a condition object has exactly one key; combine several with {\"all\": [...]}");
  }
  // Copy the key and hold the value by reference into j itself: items() returns a
  // proxy that dies at the end of the statement, and a structured binding to its
  // element would dangle (ASan: stack-use-after-scope).
  const std::string key = j.begin().key();
  const nlohmann::json& v = j.begin().value();
  std::string vpath = JsonChild(path, key);
  for (const auto& n : kFlags) {
    if (n.name == key) {
      if (!v.is_boolean() || !v.get<bool>()) return JsonTypeError(origin, vpath, "true (or write \"" + key + "\" as a string)", v);
      c.kind = n.kind;
      return c;
    }
  }
  for (const auto& n : kValued) {
    if (n.name == key) {
      c.kind = n.kind;
      auto values = ReadValues(v, origin, vpath, n.kind);
      if (!values.ok()) return values.error();
      c.values = std::move(*values);
      return c;
    }
  }
  if (key == "not") {
    c.kind = Kind::kNot;
    auto child = ParseCondition(v, origin, vpath);
    if (!child.ok()) return child.error();
    c.children.push_back(std::move(*child));
    return c;
  }
  if (key == "all" || key == "any") {
    c.kind = key == "all" ? Kind::kAll : Kind::kAny;
    if (!v.is_array()) return JsonTypeError(origin, vpath, "an array of conditions", v);
    if (v.empty()) {
      return JsonPathError(origin, vpath, "an empty \"" + key + "\" list is ambiguous; give at least one condition");
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto child = ParseCondition(v[i], origin, JsonChild(vpath, i));
      if (!child.ok()) return child.error();
      c.children.push_back(std::move(*child));
    }
    return c;
  }
  return JsonPathError(origin, vpath, "unknown condition \"" + key + "\"; expected one of " + std::string(kKnown));
}

ConditionResult EvaluateCondition(const Condition& c, const TrustFacts& f, const TrustSettings& t, RuleSide side) {
  switch (c.kind) {
    case Kind::kAlways: return Flag(true, "always holds");
    case Kind::kUntrustedSource: {
      std::string why;
      bool trusted = IsTrusted(f, t, &why);
      return Flag(!trusted, why);
    }
    case Kind::kUnpinnedVersion:
      if (f.kind == ServerRef::Kind::kCommand) return Flag(false, "a local command has no version to pin");
      if (f.pinned) return Flag(false, f.source + " is pinned" + (f.kind == ServerRef::Kind::kDocker ? " by digest" : " to an exact version"));
      return Flag(true, f.source + (f.kind == ServerRef::Kind::kDocker ? " has no @sha256 digest" : " has no exact version (" + (f.version.empty() ? std::string("latest") : f.version) + ")"));
    case Kind::kNotInRegistry:
      return f.in_registry ? Flag(false, f.name + " is registry entry \"" + f.registry_name + "\"")
                           : Flag(true, f.name + " is not in the registry");
    case Kind::kRequestsNetwork:
      return Flag(f.requests_network, f.requests_network ? "the profile or flags ask for outbound network access"
                                                         : "no outbound network access is asked for");
    case Kind::kRequestsWrite:
      return Flag(f.requests_write, !f.requests_write ? "no writable host path is asked for"
                                    : f.write_asked_by.empty() ? "the profile or flags ask for a writable host path"
                                                               : "a writable host path is asked for by " + f.write_asked_by);
    case Kind::kSource: {
      bool held = std::find(c.values.begin(), c.values.end(), ToString(f.kind)) != c.values.end();
      return Flag(held, "source kind is " + ToString(f.kind) + (held ? ", listed" : ", not in [" + fmt::format("{}", fmt::join(c.values, ", ")) + "]"));
    }
    case Kind::kName:
      return NameHolds(c, f, side);
    case Kind::kRegistryTier: {
      if (!f.in_registry) return Flag(false, "not in the registry, so it has no tier");
      bool held = std::find(c.values.begin(), c.values.end(), f.registry_tier) != c.values.end();
      return Flag(held, "registry tier is " + f.registry_tier + (held ? ", listed" : ", not listed"));
    }
    case Kind::kNot: {
      RuleSide swapped = side == RuleSide::kStricter ? RuleSide::kLooser
                         : side == RuleSide::kLooser ? RuleSide::kStricter : side;
      ConditionResult r = EvaluateCondition(c.children[0], f, t, swapped);
      return Flag(!r.held, "not (" + r.why + ")");
    }
    case Kind::kAll: {
      std::vector<std::string> whys;
      for (const auto& child : c.children) {
        ConditionResult r = EvaluateCondition(child, f, t, side);
        if (!r.held) return Flag(false, "all: this one failed: " + r.why);
        whys.push_back(r.why);
      }
      return Flag(true, "all held: " + fmt::format("{}", fmt::join(whys, "; ")));
    }
    case Kind::kAny: {
      std::vector<std::string> whys;
      for (const auto& child : c.children) {
        ConditionResult r = EvaluateCondition(child, f, t, side);
        if (r.held) return Flag(true, "any: " + r.why);
        whys.push_back(r.why);
      }
      return Flag(false, "none held: " + fmt::format("{}", fmt::join(whys, "; ")));
    }
  }
  return Flag(false, "?");
}

json ToJson(const Condition& c) {
  switch (c.kind) {
    case Kind::kSource:
    case Kind::kName:
    case Kind::kRegistryTier:
      return json{{Name(c.kind), c.values.size() == 1 ? json(c.values[0]) : json(c.values)}};
    case Kind::kNot: return json{{"not", ToJson(c.children[0])}};
    case Kind::kAll:
    case Kind::kAny: {
      json list = json::array();
      for (const auto& child : c.children) list.push_back(ToJson(child));
      return json{{Name(c.kind), list}};
    }
    default: return Name(c.kind);
  }
}

}  // namespace mcpcell
