#include "cell/script_network.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "egress/host_loopback.h"
#include "egress/http_target.h"
#include "source/registry_url.h"
#include "util/terminal_text.h"

namespace mcpcell {
namespace {

/// The host's resolver's addresses for `host` (numeric, at most 8); none
/// when it fails, and the proxy resolves the name itself.
std::vector<std::string> HostAddresses(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::vector<std::string> out;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return out;
  for (addrinfo* ai = found; ai != nullptr && out.size() < 8; ai = ai->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = ai->ai_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr)
                                               : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr);
    if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) && ::inet_ntop(ai->ai_family, raw, text, sizeof text)) {
      if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
    }
  }
  ::freeaddrinfo(found);
  return out;
}

}  // namespace

Result<NetworkSpec> RegistryNetwork(const std::string& url) {
  auto refuse = [&](const std::string& why) {
    return MakeError("open the install scripts' network to the npm registry", VisibleOnTerminal(RegistryOrigin(url)),
                     why + "; --install-scripts=skip installs without running them");
  };
  // A URL with a space or control byte is no URL npm would have used.
  if (std::any_of(url.begin(), url.end(), [](unsigned char c) { return c <= 0x20 || c == 0x7f; })) {
    return refuse("it holds a space or a control character");
  }
  std::string lower(url.substr(0, std::min<std::size_t>(url.size(), 8)));
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::uint16_t default_port = 0;
  std::size_t start = 0;
  if (lower.rfind("https://", 0) == 0) {
    default_port = 443;
    start = 8;
  } else if (lower.rfind("http://", 0) == 0) {
    default_port = 80;
    start = 7;
  } else {
    return refuse("not an http:// or https:// URL");
  }
  std::size_t end = url.find_first_of("/?#", start);
  std::string_view authority = std::string_view(url).substr(start, end == std::string::npos ? url.npos : end - start);
  if (authority.find('@') != std::string_view::npos) return refuse("it names a user or password");
  // The proxy's own reader of CONNECT authorities: canonical host, port.
  std::string why;
  auto where = ParseAuthority(authority, default_port, &why);
  if (!where || where->port == 0) return refuse(where ? "its port is 0" : why);
  NetworkSpec net;
  net.mode = NetworkSpec::Mode::kAllowList;
  bool v6 = where->host.find(':') != std::string::npos;
  std::string entry = (v6 ? "[" + where->host + "]" : where->host) + ":" + std::to_string(where->port);
  if (auto loopback = ParseLoopbackEntry(entry)) {
    if (!*loopback) return refuse(loopback->error().detail);
    net.host_ports.push_back(HostLoopbackPort{(*loopback)->name, where->port});
    return net;
  }
  // One name exactly (CanonicalHost takes no ".domain"), on its one port.
  const std::string& host = where->host;
  net.allow_hosts.push_back(host);
  net.allow_ports.push_back(where->port);
  // Pinned to the addresses the host's npm was given: an intranet registry
  // (10.x) is then reached as --resolve would reach it, and the name cannot
  // be resolved anew to somewhere else while the scripts run.
  for (auto& address : HostAddresses(host)) net.resolve.push_back(ResolvePin{host, where->port, std::move(address)});
  return net;
}

Result<NetworkSpec> RegistriesNetwork(const std::vector<std::string>& urls) {
  NetworkSpec net;
  auto add = [](auto* to, const auto& value) {
    if (std::find(to->begin(), to->end(), value) == to->end()) to->push_back(value);
  };
  for (const auto& url : urls) {
    auto one = RegistryNetwork(url);
    if (!one.ok()) return one.error();
    net.mode = one->mode;
    for (const auto& h : one->allow_hosts) add(&net.allow_hosts, h);
    for (auto p : one->allow_ports) add(&net.allow_ports, p);
    for (const auto& hp : one->host_ports) add(&net.host_ports, hp);
    for (auto& pin : one->resolve) net.resolve.push_back(std::move(pin));
  }
  // Each pin on every allowed port: the rules allow every name on every port.
  std::vector<ResolvePin> pins;
  for (const auto& pin : net.resolve) {
    for (auto port : net.allow_ports) {
      bool have = std::any_of(pins.begin(), pins.end(), [&](const ResolvePin& p) {
        return p.host == pin.host && p.port == port && p.address == pin.address;
      });
      if (!have) pins.push_back(ResolvePin{pin.host, port, pin.address});
    }
  }
  net.resolve = std::move(pins);
  return net;
}

std::string ScriptNetworkAdvice(const ScriptNpm& npm) {
  std::string reached = RegistriesReached(npm);
  std::string where = reached.empty() ? "no network at all" : "only " + reached;
  std::string unreached = npm.unreached.empty() ? std::string()
                                                 : " (not " + VisibleOnTerminal(npm.unreached) +
                                                       ": mcpcell's egress proxy cannot go through another proxy)";
  return "install scripts reach " + where + unreached +
         ", and no flag or profile widens that (a package that downloads elsewhere at install time cannot finish "
         "here); install with --install-scripts=skip and provide what it downloads yourself";
}

}  // namespace mcpcell
