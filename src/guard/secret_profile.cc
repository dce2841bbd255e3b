#include "guard/secret_profile.h"

#include <regex>
#include <set>

#include "guard/secret_scanner.h"
#include "util/json_input.h"

namespace mcpcell {
namespace {

Status ReadMode(const std::string& origin, const std::string& path, const nlohmann::json& j, SecretMode* out) {
  auto s = JsonString(origin, path, j);
  if (!s.ok()) return s.error();
  auto m = ParseSecretMode(*s);
  if (!m) return JsonPathError(origin, path, "\"" + *s + "\" is not a mode; expected off, audit, redact or block");
  *out = *m;
  return {};
}

Status ReadBool(const std::string& origin, const std::string& path, const nlohmann::json& j, bool* out) {
  if (!j.is_boolean()) return JsonTypeError(origin, path, "true or false", j);
  *out = j.get<bool>();
  return {};
}

Status ReadRule(const std::string& origin, const std::string& path, const nlohmann::json& j, SecretRule* out) {
  MCPCELL_TRY(CheckObjectKeys(origin, path, j, {"name", "regex", "caseless", "bounded"}));
  static const std::regex name_re("^[a-z0-9][a-z0-9-]{0,63}$");
  if (!j.contains("name") || !j.contains("regex")) return JsonPathError(origin, path, "a rule needs \"name\" and \"regex\"");
  auto name = JsonString(origin, JsonChild(path, "name"), j["name"]);
  if (!name.ok()) return name.error();
  if (!std::regex_match(*name, name_re)) {
    return JsonPathError(origin, JsonChild(path, "name"), "\"" + *name + "\" is not a rule name ([a-z0-9-], up to 64)");
  }
  auto regex = JsonString(origin, JsonChild(path, "regex"), j["regex"]);
  if (!regex.ok()) return regex.error();
  out->name = *name;
  out->regex = *regex;
  if (j.contains("caseless")) MCPCELL_TRY(ReadBool(origin, JsonChild(path, "caseless"), j["caseless"], &out->caseless));
  if (j.contains("bounded")) MCPCELL_TRY(ReadBool(origin, JsonChild(path, "bounded"), j["bounded"], &out->bounded));
  auto compiled = CheckSecretRegex(*out);
  if (!compiled.ok()) {
    return JsonPathError(origin, JsonChild(path, "regex"),
                         "Vectorscan cannot compile it: " + compiled.error().detail +
                             " (PCRE syntax without lookaround or backreferences)");
  }
  return {};
}

}  // namespace

Status ReadSecretScan(const std::string& origin, const std::string& path, const nlohmann::json& j, SecretPolicy* out) {
  MCPCELL_TRY(CheckObjectKeys(origin, path, j, {"mode", "to_server", "to_client", "rules", "disable"}));
  if (j.contains("mode")) {
    SecretMode m;
    MCPCELL_TRY(ReadMode(origin, JsonChild(path, "mode"), j["mode"], &m));
    out->to_server = out->to_client = m;
  }
  if (j.contains("to_server")) MCPCELL_TRY(ReadMode(origin, JsonChild(path, "to_server"), j["to_server"], &out->to_server));
  if (j.contains("to_client")) MCPCELL_TRY(ReadMode(origin, JsonChild(path, "to_client"), j["to_client"], &out->to_client));
  std::set<std::string> builtin;
  for (const auto& r : BuiltinSecretRules()) builtin.insert(r.name);
  if (j.contains("rules")) {
    std::string rpath = JsonChild(path, "rules");
    if (!j["rules"].is_array()) return JsonTypeError(origin, rpath, "an array of {\"name\", \"regex\"} objects", j["rules"]);
    std::set<std::string> seen = builtin;
    for (std::size_t i = 0; i < j["rules"].size(); ++i) {
      SecretRule r;
      MCPCELL_TRY(ReadRule(origin, JsonChild(rpath, i), j["rules"][i], &r));
      if (!seen.insert(r.name).second) {
        return JsonPathError(origin, JsonChild(JsonChild(rpath, i), "name"),
                             "\"" + r.name + "\" is already a rule's name; pick another");
      }
      out->rules.push_back(std::move(r));
    }
  }
  if (j.contains("disable")) {
    std::string dpath = JsonChild(path, "disable");
    auto l = JsonStringList(origin, dpath, j["disable"]);
    if (!l.ok()) return l.error();
    for (std::size_t i = 0; i < l->size(); ++i) {
      if (builtin.count((*l)[i]) == 0) {
        return JsonPathError(origin, JsonChild(dpath, i), "\"" + (*l)[i] + "\" is no built-in rule (docs/SECRETS.md lists them)");
      }
    }
    out->disable = std::move(*l);
  }
  // Rules for a scan that is off in both directions would be accepted and
  // scan nothing (adv8).
  bool rules = j.contains("rules") || j.contains("disable");
  if (rules && out->to_server == SecretMode::kOff && out->to_client == SecretMode::kOff) {
    return JsonPathError(origin, path, "\"rules\" and \"disable\" change a scan that is \"off\" both ways; set a mode "
                                       "(audit, redact or block) or drop them");
  }
  return {};
}

nlohmann::json SecretScanToJson(const SecretPolicy& p) {
  nlohmann::json j{{"to_server", SecretModeName(p.to_server)}, {"to_client", SecretModeName(p.to_client)}};
  for (const auto& r : p.rules) {
    j["rules"].push_back({{"name", r.name}, {"regex", r.regex}, {"caseless", r.caseless}, {"bounded", r.bounded}});
  }
  if (!p.disable.empty()) j["disable"] = p.disable;
  return j;
}

}  // namespace mcpcell
