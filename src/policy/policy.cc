#include "policy/policy.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "profile/permission_profile.h"
#include "util/json_input.h"

namespace mcpcell {
namespace {

using nlohmann::json;

constexpr std::string_view kDefaultPolicy = R"json({
  "description": "mcpcell's built-in default: every server runs in a cell with no network and only the paths you name; unpinned versions are noted.",
  "trusted_sources": [],
  "trusted_tiers": ["official"],
  "rules": [
    { "name": "note unpinned versions", "condition": "unpinned_version", "action": "warn",
      "message": "the version is not pinned: what runs may change between launches; pin it (npx://pkg@1.2.3) or use a registry name" }
  ],
  "default": { "action": "isolate", "level": "auto" }
}
)json";

Result<PolicyAction::Kind> ReadKind(const json& j, const std::string& origin, const std::string& path) {
  if (!j.is_string()) return JsonTypeError(origin, path, "one of isolate, deny, warn, allow", j);
  std::string s = j.get<std::string>();
  if (s == "isolate") return PolicyAction::Kind::kIsolate;
  if (s == "deny") return PolicyAction::Kind::kDeny;
  if (s == "warn") return PolicyAction::Kind::kWarn;
  if (s == "allow") return PolicyAction::Kind::kAllow;
  return JsonPathError(origin, path, "unknown action \"" + s + "\"; expected one of isolate, deny, warn, allow");
}

/// Reads action/profile/level/message from `j` (a rule, or the default object).
Result<PolicyAction> ReadAction(const json& j, const std::string& origin, const std::string& path,
                                const std::string& base_dir) {
  PolicyAction a;
  if (!j.contains("action")) return JsonPathError(origin, path, "missing \"action\" (isolate, deny, warn or allow)");
  auto kind = ReadKind(j["action"], origin, JsonChild(path, "action"));
  if (!kind.ok()) return kind.error();
  a.kind = *kind;
  for (std::string_view key : {"profile", "level"}) {
    if (j.contains(key) && a.kind != PolicyAction::Kind::kIsolate) {
      return JsonPathError(origin, JsonChild(path, key),
                           "contradictory: \"" + std::string(key) + "\" only applies to action isolate, not " +
                               ToString(a.kind));
    }
  }
  if (j.contains("level")) {
    auto level = JsonString(origin, JsonChild(path, "level"), j["level"]);
    if (!level.ok()) return level.error();
    if (*level != "native" && *level != "container" && *level != "gvisor" && *level != "auto") {
      return JsonPathError(origin, JsonChild(path, "level"),
                           "unknown level \"" + *level + "\"; expected native, container, gvisor or auto");
    }
    a.level = *level;
  }
  if (j.contains("profile")) {
    auto profile = JsonString(origin, JsonChild(path, "profile"), j["profile"]);
    if (!profile.ok()) return profile.error();
    std::string name = *profile;
    if (!BuiltinProfile(name)) {
      std::filesystem::path p(name);
      if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
      name = p.lexically_normal().string();
      auto loaded = LoadProfile(name);
      if (!loaded.ok()) {
        Error e = loaded.error();
        std::string named = "named by " + origin + " at " + JsonChild(path, "profile");
        e.detail = e.detail.empty() ? named : e.detail + " (" + named + ")";
        return e;
      }
    }
    a.profile = name;
  }
  if (j.contains("message")) {
    auto m = JsonString(origin, JsonChild(path, "message"), j["message"]);
    if (!m.ok()) return m.error();
    a.message = *m;
  }
  return a;
}

Result<PolicyRule> ReadRule(const json& j, const std::string& origin, const std::string& path,
                            const std::string& base_dir) {
  MCPCELL_TRY(CheckObjectKeys(origin, path, j, {"name", "condition", "action", "profile", "level", "message"}));
  PolicyRule r;
  if (j.contains("name")) {
    auto n = JsonString(origin, JsonChild(path, "name"), j["name"]);
    if (!n.ok()) return n.error();
    r.name = *n;
  }
  if (!j.contains("condition")) {
    return JsonPathError(origin, path, "missing \"condition\" (write \"always\" for a rule that always applies)");
  }
  auto c = ParseCondition(j["condition"], origin, JsonChild(path, "condition"));
  if (!c.ok()) return c.error();
  r.condition = std::move(*c);
  auto a = ReadAction(j, origin, path, base_dir);
  if (!a.ok()) return a.error();
  r.action = std::move(*a);
  return r;
}

Result<PolicyAction> ReadDefault(const json& j, const std::string& origin, const std::string& base_dir) {
  const std::string path = "$.default";
  Result<PolicyAction> a = PolicyAction{};
  if (j.is_string()) {
    a = ReadAction(json{{"action", j}}, origin, path, base_dir);
    if (!a.ok()) {  // re-point the error at $.default itself
      auto k = ReadKind(j, origin, path);
      if (!k.ok()) return k.error();
      return a.error();
    }
  } else {
    MCPCELL_TRY(CheckObjectKeys(origin, path, j, {"action", "profile", "level", "message"}));
    a = ReadAction(j, origin, path, base_dir);
    if (!a.ok()) return a.error();
  }
  if (a->kind == PolicyAction::Kind::kWarn) {
    return JsonPathError(origin, path, "the default cannot be warn: warn goes on to the next rule and there is none; use isolate or deny");
  }
  if (a->kind == PolicyAction::Kind::kAllow) {
    return JsonPathError(origin, path,
                         "the default cannot be allow: running without a cell must be decided by a rule; add "
                         "{\"condition\": \"always\", \"action\": \"allow\"} as the last rule if you really mean it");
  }
  return a;
}

}  // namespace

Result<Policy> ParsePolicy(std::string_view text, const std::string& origin, const std::string& base_dir) {
  auto doc = ParseJsonText(text, origin);
  if (!doc.ok()) return doc.error();
  const json& j = *doc;
  MCPCELL_TRY(CheckObjectKeys(origin, "$", j,
                              {"$schema", "version", "description", "trusted_sources", "trusted_tiers", "rules", "default"}));
  Policy p;
  p.origin = origin;
  // Compared as JSON values, not through get<int>(): 4294967297 is no 1 (adv8).
  if (j.contains("version") && j["version"] != json(1) && j["version"] != json("1")) {
    return JsonTypeError(origin, "$.version", "1 (the only policy format version)", j["version"]);
  }
  for (const char* text_key : {"$schema", "description"}) {
    if (j.contains(text_key) && !j[text_key].is_string()) {
      return JsonTypeError(origin, std::string("$.") + text_key, "a string", j[text_key]);
    }
  }
  if (j.contains("trusted_sources")) {
    auto l = JsonStringList(origin, "$.trusted_sources", j["trusted_sources"]);
    if (!l.ok()) return l.error();
    for (std::size_t i = 0; i < l->size(); ++i) {
      MCPCELL_TRY(CheckSourceGlob((*l)[i], origin, JsonChild("$.trusted_sources", i)));
    }
    p.trust.trusted_sources = std::move(*l);
  }
  if (j.contains("trusted_tiers")) {
    auto l = JsonStringList(origin, "$.trusted_tiers", j["trusted_tiers"]);
    if (!l.ok()) return l.error();
    for (std::size_t i = 0; i < l->size(); ++i) {
      const std::string& t = (*l)[i];
      if (t != "official" && t != "verified" && t != "community") {
        return JsonPathError(origin, JsonChild("$.trusted_tiers", i),
                             "unknown tier \"" + t + "\"; expected official, verified or community");
      }
    }
    p.trust.trusted_tiers = std::move(*l);
  }
  if (j.contains("rules")) {
    if (!j["rules"].is_array()) return JsonTypeError(origin, "$.rules", "an array of rules", j["rules"]);
    for (std::size_t i = 0; i < j["rules"].size(); ++i) {
      auto r = ReadRule(j["rules"][i], origin, JsonChild("$.rules", i), base_dir);
      if (!r.ok()) return r.error();
      p.rules.push_back(std::move(*r));
    }
  }
  if (j.contains("default")) {
    auto d = ReadDefault(j["default"], origin, base_dir);
    if (!d.ok()) return d.error();
    p.default_action = std::move(*d);
  }
  return p;
}

Result<Policy> LoadPolicy(const std::string& path) {
  auto text = ReadTextFile(path, "read policy file");
  if (!text.ok()) return text.error();
  std::string dir = std::filesystem::path(path).parent_path().string();
  return ParsePolicy(*text, path, dir.empty() ? "." : dir);
}

std::string_view DefaultPolicyJson() { return kDefaultPolicy; }

Policy DefaultPolicy() {
  auto p = ParsePolicy(kDefaultPolicy, "built-in default");
  // The text above is fixed and covered by policy_default_test; it always parses.
  Policy policy = p.ok() ? std::move(*p) : Policy{};
  policy.origin = "built-in default";
  return policy;
}

std::string ToString(PolicyAction::Kind kind) {
  switch (kind) {
    case PolicyAction::Kind::kIsolate: return "isolate";
    case PolicyAction::Kind::kDeny: return "deny";
    case PolicyAction::Kind::kWarn: return "warn";
    case PolicyAction::Kind::kAllow: return "allow";
  }
  return "?";
}

json ToJson(const PolicyAction& a) {
  json j{{"action", ToString(a.kind)}};
  if (a.profile) j["profile"] = *a.profile;
  if (a.level) j["level"] = *a.level;
  if (!a.message.empty()) j["message"] = a.message;
  return j;
}

}  // namespace mcpcell
