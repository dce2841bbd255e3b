#include "profile/lower.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "egress/address_check.h"
#include "egress/host_loopback.h"
#include "egress/host_rules.h"
#include "egress/resolver.h"
#include "profile/path_args.h"

namespace mcpcell {

RunRequest MergeProfile(const PermissionProfile& profile, const RunRequest& req) {
  RunRequest out = req;
  out.read = profile.read;
  out.read.insert(out.read.end(), req.read.begin(), req.read.end());
  out.write.clear();
  for (const auto& w : profile.write) {
    // The user's own --read of the same directory narrows the profile's grant
    // (it is bound once, read-only) instead of colliding with it.
    if (!NarrowedByRead(ResolvePathArg(w), req.read)) out.write.push_back(w);
  }
  out.write.insert(out.write.end(), req.write.begin(), req.write.end());
  const ProfileExtension& x = profile.ext;
  if (!out.memory && x.memory) out.memory = x.memory;
  if (!out.pids && x.pids) out.pids = std::to_string(*x.pids);
  if (!out.cpus && x.cpus) out.cpus = fmt::format("{}", *x.cpus);
  if (!out.tmp_size && x.tmp_size) out.tmp_size = x.tmp_size;
  if (!out.timeout && x.timeout) out.timeout = x.timeout;
  if (!out.max_message && x.max_message) out.max_message = x.max_message;
  if (!out.call_rate && x.call_rate) out.call_rate = x.call_rate;
  if (!out.max_inflight && x.max_inflight) out.max_inflight = std::to_string(*x.max_inflight);
  if (!out.call_timeout && x.call_timeout) out.call_timeout = x.call_timeout;
  // Profile env first so a later --env of the same name wins.
  std::vector<std::string> env;
  for (const auto& [k, v] : x.env) env.push_back(k + "=" + v);
  env.insert(env.end(), req.env.begin(), req.env.end());
  out.env = std::move(env);
  std::vector<std::string> secrets;
  for (const auto& [k, v] : x.secrets) {
    bool overridden = false;
    for (const auto& s : req.secrets) overridden = overridden || s.rfind(k + "=", 0) == 0;
    if (!overridden) secrets.push_back(k + "=" + v);
  }
  secrets.insert(secrets.end(), req.secrets.begin(), req.secrets.end());
  out.secrets = std::move(secrets);
  std::vector<std::string> secret_env;
  for (const auto& [k, v] : x.secret_env) secret_env.push_back(k + "=" + v);
  secret_env.insert(secret_env.end(), req.secret_env.begin(), req.secret_env.end());
  out.secret_env = std::move(secret_env);
  return out;
}

Result<ResolvePin> ParseResolveFlag(const std::string& value) {
  auto pin = ParseResolvePin(value);
  if (!pin) return pin.error();
  // A pin names one host: ".example.com" or "*.x" would pin nothing the
  // proxy ever looks up, silently.
  if (pin->host[0] == '.' || AllowHostProblem(pin->host)) {
    return MakeError("--resolve", value, "'" + pin->host + "' is not one host name; expected HOST:PORT:ADDRESS, "
                                         "e.g. api.example.com:443:203.0.113.7 (PORT may be *)");
  }
  return pin;
}

namespace {

/// allow_host entries sorted into ordinary host rules and the host's
/// loopback (egress/host_loopback.h): with a port, or bare (the ports then
/// come from allow_port, as ToolHive pairs every host with every port).
struct SplitHosts {
  std::vector<std::string> hosts;
  std::vector<HostLoopbackPort> host_ports;
  std::vector<std::string> bare_loopback;  ///< as written, for the refusal
  std::vector<std::string> bare_names;     ///< canonical
};

Status SplitHost(const std::string& entry, const std::string& origin, SplitHosts* out) {
  auto loopback = ParseLoopbackEntry(entry);
  if (!loopback) {
    out->hosts.push_back(entry);
    return {};
  }
  if (!*loopback) return MakeError(origin, entry, loopback->error().detail);
  const LoopbackEntry& e = **loopback;
  if (e.port) {
    HostLoopbackPort hp{e.name, *e.port};
    if (std::find(out->host_ports.begin(), out->host_ports.end(), hp) == out->host_ports.end()) {
      out->host_ports.push_back(hp);
    }
    return {};
  }
  out->bare_loopback.push_back(entry);
  out->bare_names.push_back(e.name);
  return {};
}

/// A bare "localhost" takes every allow_port; none is refused, never
/// widened to every port of the host's loopback.
Status PairBareLoopback(SplitHosts* split, const std::vector<std::uint16_t>& ports) {
  if (split->bare_names.empty()) return {};
  if (ports.empty()) {
    const std::string& entry = split->bare_loopback.front();
    return MakeError("allow_host", entry,
                     fmt::format("\"{}\" names the host's loopback, which a cell reaches only on named ports: "
                                 "write --allow-host {}:5432 (the port of the service), or in the permission "
                                 "profile add the ports to network.outbound.allow_port (or write \"{}:5432\" "
                                 "in allow_host)",
                                 entry, entry == "::1" ? "[::1]" : entry, entry == "::1" ? "[::1]" : entry));
  }
  for (const auto& name : split->bare_names) {
    for (std::uint16_t port : ports) {
      auto checked = ParseLoopbackEntry(fmt::format("{}:{}", name == "::1" ? "[::1]" : name, port));
      if (checked && !*checked) return MakeError("allow_host + allow_port", name, checked->error().detail);
      HostLoopbackPort hp{name, port};
      if (std::find(split->host_ports.begin(), split->host_ports.end(), hp) == split->host_ports.end()) {
        split->host_ports.push_back(hp);
      }
    }
  }
  return {};
}

std::optional<std::string> MetadataLiteral(const std::string& text) {
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(NormaliseHost(text), ec);
  if (ec || !IsMetadataAddress(address)) return std::nullopt;
  return address.to_string();
}

// What the proxy would refuse every time is refused at launch instead of
// being shown as an enforced allow-list (adv8): a cloud metadata address,
// named or pinned. A pin for a name no allow rule lets the cell look up
// does nothing, and is said (as it is when the cell has no network).
Status CheckAllowListNames(const NetworkSpec& spec, std::vector<std::string>* warnings) {
  for (const auto& h : spec.allow_hosts) {
    if (auto m = MetadataLiteral(h)) {
      return MakeError("allow_host", h, "is a cloud metadata address (" + *m + "), which the egress proxy never "
                                        "connects to, whatever allows it; remove it");
    }
  }
  EgressRules rules = EgressRules::FromSpec(spec);
  for (const auto& pin : spec.resolve) {
    if (auto m = MetadataLiteral(pin.address)) {
      return MakeError("--resolve", pin.host + " -> " + pin.address,
                       "pins a cloud metadata address, which the egress proxy never connects to; remove it");
    }
    if (!MatchName(rules, pin.host).allowed) {
      warnings->push_back("note: --resolve " + pin.host + " has no effect: no allow_host entry names " + pin.host +
                          ", so the cell cannot look it up (add --allow-host " + pin.host + " to use the pin)");
    }
  }
  return {};
}

std::string HostPortsSentence(const std::vector<HostLoopbackPort>& host_ports) {
  if (host_ports.empty()) return "";
  return fmt::format("; the host's loopback on {} only (TCP to 127.0.0.1 on those ports inside the cell, through "
                     "the proxy, audited)",
                     DescribeHostPorts(host_ports));
}

}  // namespace

Result<NetworkPlan> LowerNetwork(const PermissionProfile& profile,
                                 const std::vector<std::string>& flag_hosts,
                                 const std::vector<std::string>& flag_ports,
                                 const std::vector<std::string>& flag_resolve) {
  NetworkPlan plan;
  SplitHosts split;
  const std::string profile_origin = "profile " + profile.name + ": network.outbound.allow_host";
  for (const auto& h : profile.allow_host) MCPCELL_TRY(SplitHost(h, profile_origin, &split));
  std::vector<std::uint16_t> ports = profile.allow_port;
  for (const auto& h : flag_hosts) {
    if (auto problem = AllowHostProblem(h)) return MakeError("--allow-host", h, *problem);
    MCPCELL_TRY(SplitHost(h, "--allow-host", &split));
  }
  for (const auto& p : flag_ports) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
    if (ec != std::errc() || end != p.data() + p.size() || value < 1 || value > 65535) {
      return MakeError("--allow-port", p, "expected a port number 1-65535");
    }
    ports.push_back(static_cast<std::uint16_t>(value));
  }
  MCPCELL_TRY(PairBareLoopback(&split, ports));
  // "localhost" alone with allow_port [5432] means the host's 5432, not
  // "any host on 5432": the ports were the loopback entry's.
  if (!split.bare_names.empty() && split.hosts.empty()) ports.clear();
  std::vector<std::string>& hosts = split.hosts;
  plan.spec.host_ports = split.host_ports;
  for (const auto& r : flag_resolve) {
    auto pin = ParseResolveFlag(r);
    if (!pin) return pin.error();
    plan.spec.resolve.push_back(std::move(*pin));
  }
  const std::string not_covered =
      "names that are not allowed do not resolve; UDP other than DNS, QUIC, ICMP and IPv6 are denied";
  const std::string loopback = HostPortsSentence(split.host_ports);
  if (profile.insecure_allow_all) {
    plan.spec.mode = NetworkSpec::Mode::kAllowList;
    plan.spec.allow_all = true;
    plan.enforced =
        "allow-all, audit-only (insecure_allow_all): every host and port, but only through mcpcell's egress "
        "proxy, which records every attempt and still refuses loopback, private, link-local and cloud-metadata "
        "addresses" + loopback + "; UDP other than DNS, QUIC, ICMP and IPv6 are denied";
    plan.warnings.push_back(
        "WARNING: network is OPEN to every public host and port for this server (profile '" + profile.name +
        "' sets insecure_allow_all). Its connections still go through mcpcell's egress proxy (each one on the "
        "audit log; your LAN, loopback and cloud metadata endpoints refused). Use a profile with allow_host "
        "entries to narrow it.");
    if (!hosts.empty() || !ports.empty()) {
      plan.warnings.push_back("note: --allow-host/--allow-port add nothing: every host and port is already allowed");
    }
    return plan;
  }
  if (!hosts.empty() || !ports.empty() || !split.host_ports.empty()) {
    plan.spec.mode = NetworkSpec::Mode::kAllowList;
    plan.spec.allow_hosts = hosts;
    plan.spec.allow_ports = ports;
    std::string what = fmt::format("hosts [{}] ports [{}]", fmt::join(hosts, ", "),
                                   ports.empty() ? std::string("any") : fmt::format("{}", fmt::join(ports, ", ")));
    if (hosts.empty()) what = fmt::format("any host on ports [{}]", fmt::join(ports, ", "));
    if (hosts.empty() && ports.empty()) what = "no other host";
    plan.enforced = "allow-list (" + what + loopback +
                    "), enforced: the cell's only way out is mcpcell's egress proxy (every TCP connection and "
                    "DNS query the cell makes is redirected to it, whatever the program); " + not_covered;
    MCPCELL_TRY(CheckAllowListNames(plan.spec, &plan.warnings));
    return plan;
  }
  plan.spec.mode = NetworkSpec::Mode::kNone;
  plan.enforced = "none: loopback only, no route out";
  if (!plan.spec.resolve.empty()) {
    plan.warnings.push_back("note: --resolve has no effect: the cell has no network (no allow_host or allow_port)");
  }
  return plan;
}

Result<std::vector<SecretSpec>> LowerSecrets(const std::vector<std::string>& secret_flags,
                                             const std::vector<std::string>& secret_env_flags) {
  static const std::regex name_re("^[A-Za-z0-9_][A-Za-z0-9_.-]*$");
  static const std::regex env_re("^[A-Za-z_][A-Za-z0-9_]*$");
  std::vector<SecretSpec> out;
  for (const auto& flag : secret_flags) {
    std::size_t eq = flag.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) {
      return MakeError("--secret", flag, "expected NAME=FILE (the file holding the secret value)");
    }
    SecretSpec s;
    s.name = flag.substr(0, eq);
    if (!std::regex_match(s.name, name_re) || s.name == "." || s.name == "..") {
      return MakeError("--secret", flag, "secret NAME may use letters, digits, '_', '.', '-' only");
    }
    std::error_code ec;
    std::filesystem::path file = std::filesystem::absolute(flag.substr(eq + 1), ec);
    if (ec || !std::filesystem::is_regular_file(file, ec)) {
      return MakeError("--secret", flag, "'" + file.string() + "' is not a readable regular file");
    }
    s.host_file = file.lexically_normal().string();
    // A later definition of the same NAME replaces an earlier one (flag over profile).
    std::erase_if(out, [&](const SecretSpec& o) { return o.name == s.name; });
    out.push_back(std::move(s));
  }
  for (const auto& flag : secret_env_flags) {
    std::size_t eq = flag.find('=');
    std::string name = flag.substr(0, eq);
    std::string var = eq == std::string::npos ? name : flag.substr(eq + 1);
    if (!std::regex_match(var, env_re)) {
      return MakeError("--secret-env", flag, "'" + var + "' is not an environment variable name");
    }
    auto it = std::find_if(out.begin(), out.end(), [&](const SecretSpec& s) { return s.name == name; });
    if (it == out.end()) {
      return MakeError("--secret-env", flag, "no secret named '" + name + "'; give --secret " + name + "=FILE first");
    }
    // One variable per secret: a second would silently replace the first (adv8).
    if (it->env_name && *it->env_name != var) {
      return MakeError("--secret-env", flag, "the secret '" + name + "' is already passed as $" + *it->env_name +
                                                 "; give each secret one --secret-env");
    }
    it->env_name = var;
  }
  return out;
}

}  // namespace mcpcell
