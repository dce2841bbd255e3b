#include "egress/host_rules.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "egress/dns_name.h"

namespace mcpcell {
namespace {

bool HostMatches(const std::string& entry, const std::string& host) {
  if (entry.empty()) return false;
  if (entry[0] != '.') return entry == host;
  // ".example.com": the domain itself and anything ending in ".example.com".
  std::string_view domain(entry.data() + 1, entry.size() - 1);
  if (host == domain) return true;
  return host.size() > entry.size() && host.compare(host.size() - entry.size(), entry.size(), entry) == 0;
}

const std::string* FindHost(const EgressRules& rules, const std::string& host) {
  for (const auto& e : rules.hosts) {
    if (HostMatches(e, host)) return &e;
  }
  return nullptr;
}

bool PortAllowed(const EgressRules& rules, std::uint16_t port) {
  return rules.ports.empty() || std::find(rules.ports.begin(), rules.ports.end(), port) != rules.ports.end();
}

std::string HostLine(const std::string& host) {
  return fmt::format("add \"{}\" to network.outbound.allow_host in the permission profile (or pass --allow-host {})",
                     host, host);
}

std::string PortLine(std::uint16_t port) {
  return fmt::format("add {} to network.outbound.allow_port in the permission profile (or pass --allow-port {})",
                     port, port);
}

// Network none: what the server wanted, and the two ways to allow it (or
// the cell's own advice, where no flag applies).
RuleVerdict NoNetwork(const EgressRules& rules, const std::string& host, std::uint16_t port) {
  if (!rules.fixed_how_to_allow.empty()) return {false, "network none: this cell has no network", ""};
  std::string flags = fmt::format("--allow-host {}", host);
  if (port != 0) flags += fmt::format(" --allow-port {}", port);
  std::string ports = port != 0 ? fmt::format(", \"allow_port\": [{}]", port) : std::string();
  return {false, "network none: this server has no network (no allow_host or allow_port in its profile or flags)",
          fmt::format("pass {}, or in the permission profile: \"network\": {{\"outbound\": {{\"allow_host\": "
                      "[\"{}\"]{}}}}}",
                      flags, host, ports)};
}

}  // namespace

RuleVerdict WithFixedAdvice(const EgressRules& rules, RuleVerdict v) {
  if (!v.allowed && !rules.fixed_how_to_allow.empty()) v.how_to_allow = rules.fixed_how_to_allow;
  return v;
}

std::string NormaliseHost(std::string_view host) {
  std::string out(host);
  if (out.size() >= 2 && out.front() == '[' && out.back() == ']') out = out.substr(1, out.size() - 2);
  while (!out.empty() && out.back() == '.') out.pop_back();
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

EgressRules EgressRules::FromSpec(const NetworkSpec& network) {
  EgressRules rules;
  rules.allow_all = network.allow_all || network.mode == NetworkSpec::Mode::kOpen;
  for (const auto& h : network.allow_hosts) {
    // Keep the leading dot of a domain entry; the rest in the same canonical
    // form as every name a cell sends (so "Example.COM." matches
    // "example.com"). An entry that is no valid name could never match one;
    // the profile loader refuses such entries before they get here.
    bool domain = !h.empty() && h[0] == '.';
    auto n = CanonicalHost(domain ? std::string_view(h).substr(1) : std::string_view(h), nullptr);
    if (n) rules.hosts.push_back(domain ? "." + *n : *n);
  }
  rules.ports = network.allow_ports;
  rules.host_ports = network.host_ports;
  return rules;
}

namespace {

// The rules' verdicts with their own advice; MatchConnection and MatchName
// replace it by the cell's fixed advice where it has one.
RuleVerdict MatchConnectionAdvised(const EgressRules& rules, std::string_view raw_host, std::uint16_t port) {
  if (rules.allow_all) return {true, "insecure_allow_all", ""};
  if (rules.no_network) return NoNetwork(rules, NormaliseHost(raw_host), port);
  std::string host = NormaliseHost(raw_host);
  const std::string* entry = rules.hosts.empty() ? nullptr : FindHost(rules, host);
  if (!rules.hosts.empty() && entry == nullptr) {
    std::string how = HostLine(host);
    if (!PortAllowed(rules, port)) how += ", and " + PortLine(port);
    return {false, fmt::format("no allow_host entry matches \"{}\"", host), how};
  }
  if (!PortAllowed(rules, port)) {
    return {false, fmt::format("port {} is not in allow_port [{}]", port, fmt::join(rules.ports, ", ")),
            PortLine(port)};
  }
  if (rules.hosts.empty() && rules.ports.empty()) {
    return {false, "the profile allows no outbound host or port", HostLine(host)};
  }
  std::string rule = entry ? fmt::format("allow_host \"{}\"", *entry) : std::string("any host");
  if (!rules.ports.empty()) rule += fmt::format(" + allow_port {}", port);
  return {true, rule, ""};
}

RuleVerdict MatchNameAdvised(const EgressRules& rules, std::string_view raw_host) {
  if (rules.allow_all) return {true, "insecure_allow_all", ""};
  if (rules.no_network) return NoNetwork(rules, NormaliseHost(raw_host), 0);
  std::string host = NormaliseHost(raw_host);
  if (rules.hosts.empty()) {
    if (rules.ports.empty()) return {false, "the profile allows no outbound host or port", HostLine(host)};
    return {true, fmt::format("any host on allow_port [{}]", fmt::join(rules.ports, ", ")), ""};
  }
  if (const std::string* entry = FindHost(rules, host)) return {true, fmt::format("allow_host \"{}\"", *entry), ""};
  return {false, fmt::format("no allow_host entry matches \"{}\"", host), HostLine(host)};
}

}  // namespace

RuleVerdict MatchConnection(const EgressRules& rules, std::string_view host, std::uint16_t port) {
  return WithFixedAdvice(rules, MatchConnectionAdvised(rules, host, port));
}

RuleVerdict MatchName(const EgressRules& rules, std::string_view host) {
  return WithFixedAdvice(rules, MatchNameAdvised(rules, host));
}

}  // namespace mcpcell
