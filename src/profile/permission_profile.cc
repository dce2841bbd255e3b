#include "profile/permission_profile.h"

#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "egress/dns_name.h"
#include "egress/host_loopback.h"
#include "guard/secret_profile.h"
#include "util/json_input.h"
#include "util/units.h"

namespace mcpcell {
namespace {

using nlohmann::json;

Status CheckHost(const std::string& origin, const std::string& path, const std::string& host) {
  if (auto problem = AllowHostProblem(host)) return JsonPathError(origin, path, *problem);
  return {};
}

/// "PATH" or "HOST:CELL", both absolute.
Status CheckMountSpec(const std::string& origin, const std::string& path, const std::string& spec) {
  std::size_t colon = spec.find(':');
  std::string host = spec.substr(0, colon);
  std::string cell = colon == std::string::npos ? host : spec.substr(colon + 1);
  if (host.empty() || host[0] != '/' || cell.empty() || cell[0] != '/') {
    return JsonPathError(origin, path,
                         "\"" + spec + "\": expected an absolute path \"/dir\" or \"/host/dir:/cell/dir\"");
  }
  return {};
}

Result<std::vector<std::string>> ReadMounts(const std::string& origin, const std::string& path,
                                            const json& j) {
  auto list = JsonStringList(origin, path, j);
  if (!list.ok()) return list.error();
  for (std::size_t i = 0; i < list->size(); ++i) {
    MCPCELL_TRY(CheckMountSpec(origin, JsonChild(path, i), (*list)[i]));
  }
  return list;
}

Result<std::vector<std::string>> ReadHosts(const std::string& origin, const std::string& path,
                                           const json& j) {
  auto list = JsonStringList(origin, path, j);
  if (!list.ok()) return list.error();
  for (std::size_t i = 0; i < list->size(); ++i) {
    MCPCELL_TRY(CheckHost(origin, JsonChild(path, i), (*list)[i]));
  }
  return list;
}

Status ReadOutbound(const std::string& origin, const std::string& path, const json& j,
                    PermissionProfile* p) {
  MCPCELL_TRY(CheckObjectKeys(origin, path, j,
                              {"insecure_allow_all", "allow_host", "allow_port", "allow_transport"}));
  if (j.contains("insecure_allow_all")) {
    auto b = JsonBool(origin, JsonChild(path, "insecure_allow_all"), j["insecure_allow_all"]);
    if (!b.ok()) return b.error();
    p->insecure_allow_all = *b;
  }
  if (j.contains("allow_host")) {
    auto hosts = ReadHosts(origin, JsonChild(path, "allow_host"), j["allow_host"]);
    if (!hosts.ok()) return hosts.error();
    p->allow_host = std::move(*hosts);
  }
  if (j.contains("allow_port")) {
    std::string ppath = JsonChild(path, "allow_port");
    const json& ports = j["allow_port"];
    if (!ports.is_array()) return JsonTypeError(origin, ppath, "an array of port numbers", ports);
    for (std::size_t i = 0; i < ports.size(); ++i) {
      const json& port = ports[i];
      if (!port.is_number_integer() || port.get<long long>() < 1 || port.get<long long>() > 65535) {
        return JsonTypeError(origin, JsonChild(ppath, i), "a port number 1-65535", port);
      }
      p->allow_port.push_back(static_cast<std::uint16_t>(port.get<long long>()));
    }
  }
  if (j.contains("allow_transport")) {
    auto t = JsonStringList(origin, JsonChild(path, "allow_transport"), j["allow_transport"]);
    if (!t.ok()) return t.error();
    p->warnings.push_back(origin + ": " + JsonChild(path, "allow_transport") +
                          " is obsolete (ToolHive removed it; its proxy could not enforce it) and is ignored");
  }
  if (p->insecure_allow_all && (!p->allow_host.empty() || !p->allow_port.empty())) {
    return JsonPathError(origin, path,
                         "contradictory: insecure_allow_all allows every host and port, so "
                         "allow_host/allow_port would be ignored; remove one or the other");
  }
  return {};
}

Status ReadNetwork(const std::string& origin, const std::string& path, const json& j,
                   PermissionProfile* p) {
  MCPCELL_TRY(CheckObjectKeys(origin, path, j, {"outbound", "inbound"}));
  if (j.contains("outbound")) MCPCELL_TRY(ReadOutbound(origin, JsonChild(path, "outbound"), j["outbound"], p));
  if (j.contains("inbound")) {
    std::string ipath = JsonChild(path, "inbound");
    MCPCELL_TRY(CheckObjectKeys(origin, ipath, j["inbound"], {"allow_host"}));
    if (j["inbound"].contains("allow_host")) {
      auto hosts = ReadHosts(origin, JsonChild(ipath, "allow_host"), j["inbound"]["allow_host"]);
      if (!hosts.ok()) return hosts.error();
      p->inbound_allow_host = std::move(*hosts);
      // Said, not silently kept (adv8): nothing in the cell listens where a host could reach it.
      if (!p->inbound_allow_host.empty()) {
        p->warnings.push_back(origin + ": " + JsonChild(ipath, "allow_host") +
                              " has no effect: a cell takes no inbound connection from any host (its server speaks "
                              "over stdio, in a network namespace of its own), which is stricter than any inbound list");
      }
    }
  }
  return {};
}

Result<std::map<std::string, std::string>> ReadStringMap(const std::string& origin,
                                                         const std::string& path, const json& j,
                                                         const std::regex& key_re,
                                                         const std::string& key_what) {
  if (!j.is_object()) return JsonTypeError(origin, path, "an object of strings", j);
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : j.items()) {
    if (!std::regex_match(k, key_re)) {
      return JsonPathError(origin, JsonChild(path, k), "\"" + k + "\" is not " + key_what);
    }
    auto s = JsonString(origin, JsonChild(path, k), v, false);
    if (!s.ok()) return s.error();
    out[k] = std::move(*s);
  }
  return out;
}

Status ReadUnit(const std::string& origin, const std::string& path, const json& j, bool duration,
                std::optional<std::string>* out) {
  auto s = JsonString(origin, path, j);
  if (!s.ok()) return s.error();
  bool ok = duration ? ParseDuration(*s).ok() : ParseSize(*s).ok();
  if (!ok) {
    return JsonPathError(origin, path,
                         "\"" + *s + "\" is not a " +
                             (duration ? "duration (\"30s\", \"500ms\", \"5m\")" : "size (\"512m\", \"1g\")"));
  }
  *out = std::move(*s);
  return {};
}

// mcpcell.pins (docs/PINNING.md): {"mode": "on"|"off", "poisoning": "warn"|"block"}.
Status ReadPins(const std::string& origin, const std::string& path, const json& j, ProfileExtension* x) {
  MCPCELL_TRY(CheckObjectKeys(origin, path, j, {"mode", "poisoning"}));
  auto one_of = [&](const char* key, std::string_view a, std::string_view b, std::optional<std::string>* out) -> Status {
    if (!j.contains(key)) return {};
    auto v = JsonString(origin, JsonChild(path, key), j[key]);
    if (!v.ok()) return v.error();
    if (*v != a && *v != b) {
      return JsonPathError(origin, JsonChild(path, key), fmt::format("expected \"{}\" or \"{}\", got \"{}\"", a, b, *v));
    }
    *out = *v;
    return {};
  };
  MCPCELL_TRY(one_of("mode", "on", "off", &x->pins_mode));
  MCPCELL_TRY(one_of("poisoning", "warn", "block", &x->pins_poisoning));
  if (x->pins_mode == "off" && x->pins_poisoning) {
    return JsonPathError(origin, JsonChild(path, "poisoning"),
                         "the poisoning checks run when tools are pinned, and \"mode\" is \"off\"; drop one of them");
  }
  return {};
}

// mcpcell.tools / prompts / resources: {"allow": [globs], "deny": [globs]}, enforced by the relay.
Status ReadGlobRules(const std::string& origin, const std::string& path, const json& j, const char* key,
                     std::vector<std::string>* allow, std::vector<std::string>* deny) {
  if (!j.contains(key)) return {};
  std::string tpath = JsonChild(path, key);
  MCPCELL_TRY(CheckObjectKeys(origin, tpath, j[key], {"allow", "deny"}));
  if (j[key].contains("allow")) {
    auto l = JsonStringList(origin, JsonChild(tpath, "allow"), j[key]["allow"]);
    if (!l.ok()) return l.error();
    // An allow list holding nothing reads as "allow nothing" to one user and
    // "no allow list" to another (adv8: it allowed all): refused.
    if (l->empty()) {
      return MakeError(origin + ": at " + JsonChild(tpath, "allow"), "",
                       "an empty allow list; list what to allow, or drop \"allow\" to allow all (\"deny\": [\"*\"] "
                       "allows none)");
    }
    *allow = std::move(*l);
  }
  if (j[key].contains("deny")) {
    auto l = JsonStringList(origin, JsonChild(tpath, "deny"), j[key]["deny"]);
    if (!l.ok()) return l.error();
    *deny = std::move(*l);
  }
  return {};
}

// The sizes and durations: "512M", "30s".
Status ReadUnits(const std::string& origin, const std::string& path, const json& j, ProfileExtension* x) {
  if (j.contains("memory")) MCPCELL_TRY(ReadUnit(origin, JsonChild(path, "memory"), j["memory"], false, &x->memory));
  if (j.contains("tmp_size")) MCPCELL_TRY(ReadUnit(origin, JsonChild(path, "tmp_size"), j["tmp_size"], false, &x->tmp_size));
  if (j.contains("timeout")) MCPCELL_TRY(ReadUnit(origin, JsonChild(path, "timeout"), j["timeout"], true, &x->timeout));
  if (j.contains("max_message")) {
    MCPCELL_TRY(ReadUnit(origin, JsonChild(path, "max_message"), j["max_message"], false, &x->max_message));
  }
  if (j.contains("call_timeout")) {
    MCPCELL_TRY(ReadUnit(origin, JsonChild(path, "call_timeout"), j["call_timeout"], true, &x->call_timeout));
  }
  return {};
}

// The counts and the rate.
Status ReadNumbers(const std::string& origin, const std::string& path, const json& j, ProfileExtension* x) {
  if (j.contains("call_rate")) {
    auto s = JsonString(origin, JsonChild(path, "call_rate"), j["call_rate"]);
    if (!s.ok()) return s.error();
    if (!ParseRate(*s).ok()) {
      return JsonPathError(origin, JsonChild(path, "call_rate"), "\"" + *s + "\" is not a rate (\"10/s\", \"600/m\", \"1000/h\")");
    }
    x->call_rate = std::move(*s);
  }
  if (j.contains("max_inflight")) {
    const json& v = j["max_inflight"];
    if (!v.is_number_integer() || v.get<long long>() < 1) {
      return JsonTypeError(origin, JsonChild(path, "max_inflight"), "a positive integer", v);
    }
    x->max_inflight = static_cast<std::uint64_t>(v.get<long long>());
  }
  if (j.contains("pids")) {
    const json& v = j["pids"];
    if (!v.is_number_integer() || v.get<long long>() < 1) {
      return JsonTypeError(origin, JsonChild(path, "pids"), "a positive integer", v);
    }
    x->pids = static_cast<std::uint64_t>(v.get<long long>());
  }
  if (j.contains("cpus")) {
    const json& v = j["cpus"];
    if (!v.is_number() || v.get<double>() <= 0) {
      return JsonTypeError(origin, JsonChild(path, "cpus"), "a positive number of cores", v);
    }
    x->cpus = v.get<double>();
  }
  return {};
}

// env, secrets (name → host file) and secret_env (secret → variable).
Status ReadEnvAndSecrets(const std::string& origin, const std::string& path, const json& j, ProfileExtension* x) {
  static const std::regex env_re("^[A-Za-z_][A-Za-z0-9_]*$");
  static const std::regex secret_re("^[A-Za-z0-9_][A-Za-z0-9_.-]*$");
  if (j.contains("env")) {
    auto m = ReadStringMap(origin, JsonChild(path, "env"), j["env"], env_re, "an environment variable name");
    if (!m.ok()) return m.error();
    x->env = std::move(*m);
  }
  if (j.contains("secrets")) {
    std::string spath = JsonChild(path, "secrets");
    auto m = ReadStringMap(origin, spath, j["secrets"], secret_re, "a secret name ([A-Za-z0-9_.-])");
    if (!m.ok()) return m.error();
    for (const auto& [k, v] : *m) {
      if (v.empty() || v[0] != '/') {
        return JsonPathError(origin, JsonChild(spath, k), "expected the absolute path of the host file holding the secret");
      }
    }
    x->secrets = std::move(*m);
  }
  if (j.contains("secret_env")) {
    std::string epath = JsonChild(path, "secret_env");
    auto m = ReadStringMap(origin, epath, j["secret_env"], secret_re, "a secret name");
    if (!m.ok()) return m.error();
    for (const auto& [k, v] : *m) {
      if (!std::regex_match(v, env_re)) {
        return JsonPathError(origin, JsonChild(epath, k), "\"" + v + "\" is not an environment variable name");
      }
    }
    x->secret_env = std::move(*m);
  }
  return {};
}

Status ReadExtension(const std::string& origin, const std::string& path, const json& j,
                     ProfileExtension* x) {
  MCPCELL_TRY(CheckObjectKeys(origin, path, j,
                              {"memory", "pids", "cpus", "tmp_size", "timeout", "env", "secrets",
                               "secret_env", "tools", "prompts", "resources", "max_message", "call_rate", "max_inflight", "call_timeout",
                               "secret_scan", "pins"}));
  MCPCELL_TRY(ReadUnits(origin, path, j, x));
  MCPCELL_TRY(ReadNumbers(origin, path, j, x));
  MCPCELL_TRY(ReadEnvAndSecrets(origin, path, j, x));
  MCPCELL_TRY(ReadGlobRules(origin, path, j, "tools", &x->tools_allow, &x->tools_deny));
  MCPCELL_TRY(ReadGlobRules(origin, path, j, "prompts", &x->prompts_allow, &x->prompts_deny));
  MCPCELL_TRY(ReadGlobRules(origin, path, j, "resources", &x->resources_allow, &x->resources_deny));
  if (j.contains("secret_scan")) {
    SecretPolicy p;
    p.origin = "profile " + origin;
    MCPCELL_TRY(ReadSecretScan(origin, JsonChild(path, "secret_scan"), j["secret_scan"], &p));
    x->secret_scan = std::move(p);
  }
  if (j.contains("pins")) MCPCELL_TRY(ReadPins(origin, JsonChild(path, "pins"), j["pins"], x));
  return {};
}

}  // namespace

std::optional<std::string> AllowHostProblem(const std::string& host) {
  // "localhost:5432" and friends: the host's loopback, port by port
  // (egress/host_loopback.h); LowerNetwork gives them their meaning.
  if (auto loopback = ParseLoopbackEntry(host)) {
    if (!*loopback) return loopback->error().detail;
    return std::nullopt;
  }
  // "*.x" is refused: ToolHive's Squid backend does not understand it either,
  // so it would never match anything.
  if (host.find('*') != std::string::npos) {
    return "wildcard host \"" + host + "\" can never match; write \"." +
           (host.rfind("*.", 0) == 0 ? host.substr(2) : std::string("example.com")) +
           "\" for a domain and every name below it";
  }
  // The egress proxy judges every name a cell sends in canonical form
  // (src/egress/dns_name.h); an entry must be one too, or it never matches.
  std::string_view name(host);
  if (!name.empty() && name.front() == '.') name.remove_prefix(1);
  std::string why;
  if (CanonicalHost(name, &why)) return std::nullopt;
  const std::string hint =
      "no scheme, port or path: write \"example.com\", not \"https://example.com/\"; ports go in allow_port "
      "(only the host's loopback takes a port here: \"localhost:5432\")";
  const std::string what = "\"" + host + "\" is not a host name, \".domain\" or IP address (";
  if (host.find('/') != std::string::npos) return what + hint + ")";  // a URL: the hint says it all
  return what + why + "; " + hint + ")";
}

Result<PermissionProfile> ProfileFromJson(const json& j, const std::string& origin,
                                          const std::string& path) {
  MCPCELL_TRY(CheckObjectKeys(origin, path, j, {"name", "read", "write", "network", "privileged", "mcpcell"}));
  PermissionProfile p;
  p.name = origin;
  if (j.contains("name")) {
    auto n = JsonString(origin, JsonChild(path, "name"), j["name"], false);
    if (!n.ok()) return n.error();
  }
  if (j.contains("privileged")) {
    auto b = JsonBool(origin, JsonChild(path, "privileged"), j["privileged"]);
    if (!b.ok()) return b.error();
    if (*b) {
      return JsonPathError(origin, JsonChild(path, "privileged"),
                           "privileged: true is refused — mcpcell never runs a server with host "
                           "privileges; remove the key or set it to false");
    }
  }
  if (j.contains("read")) {
    auto r = ReadMounts(origin, JsonChild(path, "read"), j["read"]);
    if (!r.ok()) return r.error();
    p.read = std::move(*r);
  }
  if (j.contains("write")) {
    auto w = ReadMounts(origin, JsonChild(path, "write"), j["write"]);
    if (!w.ok()) return w.error();
    p.write = std::move(*w);
  }
  if (j.contains("network")) MCPCELL_TRY(ReadNetwork(origin, JsonChild(path, "network"), j["network"], &p));
  if (j.contains("mcpcell")) MCPCELL_TRY(ReadExtension(origin, JsonChild(path, "mcpcell"), j["mcpcell"], &p.ext));
  return p;
}

Result<PermissionProfile> ParseProfile(std::string_view text, const std::string& origin) {
  auto j = ParseJsonText(text, origin);
  if (!j.ok()) return j.error();
  return ProfileFromJson(*j, origin);
}

std::optional<PermissionProfile> BuiltinProfile(const std::string& name) {
  if (name == "none") {
    PermissionProfile p;
    p.name = "none";
    return p;
  }
  if (name == "network") {
    PermissionProfile p;
    p.name = "network";
    p.insecure_allow_all = true;
    return p;
  }
  return std::nullopt;
}

Result<PermissionProfile> LoadProfile(const std::string& name_or_file) {
  if (auto b = BuiltinProfile(name_or_file)) return *b;
  if (name_or_file.find('/') == std::string::npos && name_or_file.find('.') == std::string::npos) {
    return MakeError("load permission profile", name_or_file,
                     "not a built-in profile (none, network) and not a file path; "
                     "give a path such as ./profile.json");
  }
  auto text = ReadTextFile(name_or_file, "read permission profile");
  if (!text.ok()) return text.error();
  return ParseProfile(*text, name_or_file);
}

json ToJson(const PermissionProfile& p) {
  json outbound{{"insecure_allow_all", p.insecure_allow_all},
                {"allow_host", p.allow_host},
                {"allow_port", p.allow_port}};
  json j{{"read", p.read}, {"write", p.write}, {"network", {{"outbound", outbound}}}};
  if (!p.inbound_allow_host.empty()) j["network"]["inbound"] = {{"allow_host", p.inbound_allow_host}};
  json x = json::object();
  const ProfileExtension& e = p.ext;
  if (e.memory) x["memory"] = *e.memory;
  if (e.pids) x["pids"] = *e.pids;
  if (e.cpus) x["cpus"] = *e.cpus;
  if (e.tmp_size) x["tmp_size"] = *e.tmp_size;
  if (e.timeout) x["timeout"] = *e.timeout;
  if (!e.env.empty()) x["env"] = e.env;
  if (!e.secrets.empty()) x["secrets"] = e.secrets;
  if (!e.secret_env.empty()) x["secret_env"] = e.secret_env;
  if (!e.tools_allow.empty()) x["tools"]["allow"] = e.tools_allow;
  if (!e.tools_deny.empty()) x["tools"]["deny"] = e.tools_deny;
  if (!e.prompts_allow.empty()) x["prompts"]["allow"] = e.prompts_allow;
  if (!e.prompts_deny.empty()) x["prompts"]["deny"] = e.prompts_deny;
  if (!e.resources_allow.empty()) x["resources"]["allow"] = e.resources_allow;
  if (!e.resources_deny.empty()) x["resources"]["deny"] = e.resources_deny;
  if (e.max_message) x["max_message"] = *e.max_message;
  if (e.call_rate) x["call_rate"] = *e.call_rate;
  if (e.max_inflight) x["max_inflight"] = *e.max_inflight;
  if (e.call_timeout) x["call_timeout"] = *e.call_timeout;
  if (e.secret_scan) x["secret_scan"] = SecretScanToJson(*e.secret_scan);
  if (e.pins_mode) x["pins"]["mode"] = *e.pins_mode;
  if (e.pins_poisoning) x["pins"]["poisoning"] = *e.pins_poisoning;
  if (!x.empty()) j["mcpcell"] = x;
  return j;
}

}  // namespace mcpcell
