#include "egress/host_loopback.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "egress/cell_net.h"
#include "egress/dns_name.h"

namespace mcpcell {
namespace {

namespace ip = boost::asio::ip;

constexpr std::string_view kWhatToWrite =
    "the host's loopback is reached only as localhost, 127.0.0.1 or ::1, one named port at a time: write "
    "--allow-host localhost:5432 (in a profile: \"localhost:5432\" in network.outbound.allow_host, or "
    "\"localhost\" with the ports in network.outbound.allow_port)";

struct HostAndPort {
  std::string_view host;
  std::optional<std::string_view> port;
};

// "[::1]:5432", "[::1]", "localhost:5432", "localhost", "::1" (an IPv6
// literal without brackets has more than one ':' and no port).
std::optional<HostAndPort> SplitHostPort(std::string_view entry) {
  if (!entry.empty() && entry.front() == '[') {
    std::size_t close = entry.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view rest = entry.substr(close + 1);
    if (rest.empty()) return HostAndPort{entry.substr(1, close - 1), std::nullopt};
    if (rest.front() != ':') return std::nullopt;
    return HostAndPort{entry.substr(1, close - 1), rest.substr(1)};
  }
  std::size_t colon = entry.find(':');
  if (colon == std::string_view::npos || entry.find(':', colon + 1) != std::string_view::npos) {
    return HostAndPort{entry, std::nullopt};
  }
  return HostAndPort{entry.substr(0, colon), entry.substr(colon + 1)};
}

// An address that leads to this machine itself: loopback (127/8, ::1), the
// unspecified address (0.0.0.0/8, ::: connect(2) to it reaches the local
// host), and both inside IPv4-mapped/compatible IPv6.
bool LeadsToLocalHost(const ip::address& a) {
  if (a.is_v6()) {
    const ip::address_v6 v6 = a.to_v6();
    if (v6.is_loopback() || v6.is_unspecified()) return true;
    if (v6.is_v4_mapped()) return LeadsToLocalHost(ip::make_address_v4(ip::v4_mapped, v6));
    auto b = v6.to_bytes();
    bool compatible = std::all_of(b.begin(), b.begin() + 12, [](unsigned char c) { return c == 0; });
    if (compatible) return LeadsToLocalHost(ip::address_v4({b[12], b[13], b[14], b[15]}));
    return false;
  }
  std::uint32_t v4 = a.to_v4().to_uint();
  return (v4 >> 24) == 127 || (v4 >> 24) == 0;
}

Result<std::uint16_t> ParsePort(std::string_view entry, std::string_view text) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1 || value > 65535) {
    return MakeError("allow_host", std::string(entry), "the port after ':' must be a number 1-65535");
  }
  if (value == kCellProxyPort) {
    return MakeError("allow_host", std::string(entry),
                     fmt::format("port {} is the cell's own egress proxy port: inside the cell 127.0.0.1:{} is "
                                 "mcpcell's proxy, so the host's port {} cannot be reached from a cell",
                                 value, value, value));
  }
  return static_cast<std::uint16_t>(value);
}

}  // namespace

bool IsLoopbackName(std::string_view host) { return host == "localhost" || host == "127.0.0.1" || host == "::1"; }

std::optional<Result<LoopbackEntry>> ParseLoopbackEntry(std::string_view entry) {
  auto split = SplitHostPort(entry);
  if (!split) return std::nullopt;
  auto canonical = CanonicalHost(split->host, nullptr);
  if (!canonical) return std::nullopt;
  if (!IsLoopbackName(*canonical)) {
    boost::system::error_code ec;
    auto literal = ip::make_address(*canonical, ec);
    if (ec || !LeadsToLocalHost(literal)) return std::nullopt;
    return Result<LoopbackEntry>(MakeError(
        "allow_host", std::string(entry),
        fmt::format("{} leads to this machine itself (loopback or unspecified); {}", *canonical, kWhatToWrite)));
  }
  LoopbackEntry out{*canonical, std::nullopt};
  if (split->port) {
    auto port = ParsePort(entry, *split->port);
    if (!port) return Result<LoopbackEntry>(port.error());
    out.port = *port;
  }
  return Result<LoopbackEntry>(std::move(out));
}

std::vector<ip::address> LoopbackTargets(std::string_view name) {
  if (name == "127.0.0.1") return {ip::address_v4::loopback()};
  if (name == "::1") return {ip::address_v6::loopback()};
  return {ip::address_v4::loopback(), ip::address_v6::loopback()};
}

HostLoopbackVerdict MatchHostLoopback(const std::vector<HostLoopbackPort>& ports, std::string_view host,
                                      std::uint16_t port) {
  HostLoopbackVerdict out;
  std::vector<std::string> names;
  for (const auto& hp : ports) {
    if (hp.port != port) continue;
    names.push_back(fmt::format("{}:{}", hp.name == "::1" ? "[::1]" : hp.name, hp.port));
    for (const auto& a : LoopbackTargets(hp.name)) {
      if (std::find(out.targets.begin(), out.targets.end(), a) == out.targets.end()) out.targets.push_back(a);
    }
  }
  if (!out.targets.empty()) {
    out.verdict = {true, fmt::format("allow_host \"{}\" (the host's loopback)", fmt::join(names, "\", \"")), ""};
    return out;
  }
  std::string named = ports.empty() ? std::string("no host loopback port is named")
                                    : "the named ones are " + DescribeHostPorts(ports);
  out.verdict = {false,
                 fmt::format("{} port {} is the host's loopback, which is refused unless the port is named ({})",
                             host, port, named),
                 fmt::format("pass --allow-host localhost:{} (or add \"localhost:{}\" to network.outbound.allow_host "
                             "in the permission profile)",
                             port, port)};
  return out;
}

std::vector<std::uint16_t> HostLoopbackPortNumbers(const std::vector<HostLoopbackPort>& ports) {
  std::vector<std::uint16_t> out;
  for (const auto& hp : ports) out.push_back(hp.port);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string DescribeHostPorts(const std::vector<HostLoopbackPort>& ports) {
  std::string out;
  for (const auto& hp : ports) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{}:{}", hp.name == "::1" ? "[::1]" : hp.name, hp.port);
  }
  return out;
}

}  // namespace mcpcell
