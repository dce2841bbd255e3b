#include "egress/address_check.h"

#include <array>
#include <cstdint>

#include <fmt/format.h>

#include "egress/host_addresses.h"

namespace mcpcell {
namespace {

using boost::asio::ip::address;
using boost::asio::ip::address_v4;
using boost::asio::ip::address_v6;

struct V4Range {
  std::uint32_t base;
  int prefix;
  const char* what;
};

// Order matters: the metadata address sits inside link-local and must be
// named as what it is.
constexpr std::array<V4Range, 11> kV4Ranges{{
    {0xA9FEA9FE, 32, "cloud metadata (169.254.169.254)"},
    {0x00000000, 8, "unspecified / \"this network\" (0.0.0.0/8)"},
    {0x7F000000, 8, "loopback (127.0.0.0/8)"},
    {0x0A000000, 8, "private (10.0.0.0/8)"},
    {0xAC100000, 12, "private (172.16.0.0/12)"},
    {0xC0A80000, 16, "private (192.168.0.0/16)"},
    {0x64400000, 10, "carrier-grade NAT, private (100.64.0.0/10)"},
    {0xA9FE0000, 16, "link-local (169.254.0.0/16)"},
    {0xC6120000, 15, "mcpcell's synthetic range (198.18.0.0/15)"},
    {0xE0000000, 4, "multicast (224.0.0.0/4)"},
    {0xF0000000, 4, "reserved / broadcast (240.0.0.0/4)"},
}};

bool InV4(std::uint32_t a, const V4Range& r) {
  std::uint32_t mask = r.prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - r.prefix);
  return (a & mask) == r.base;
}

std::optional<std::string> RestrictedV4(const address_v4& v4) {
  std::uint32_t a = v4.to_uint();
  for (const auto& r : kV4Ranges) {
    if (InV4(a, r)) return std::string(r.what);
  }
  return std::nullopt;
}

// The IPv4 address carried inside an IPv6 one in the forms a kernel would
// route to IPv4: mapped ::ffff:0:0/96, compatible ::/96 (deprecated, but a
// literal), NAT64 64:ff9b::/96 (a NAT64 gateway forwards it to that IPv4).
std::optional<address_v4> EmbeddedV4(const address_v6::bytes_type& b) {
  auto zero = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      if (b[static_cast<std::size_t>(i)] != 0) return false;
    }
    return true;
  };
  address_v4::bytes_type v4{b[12], b[13], b[14], b[15]};
  if (zero(0, 10) && b[10] == 0xff && b[11] == 0xff) return address_v4(v4);
  if (zero(0, 12) && !(v4[0] == 0 && v4[1] == 0 && v4[2] == 0 && v4[3] <= 1)) return address_v4(v4);
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zero(4, 12)) return address_v4(v4);
  return std::nullopt;
}

std::optional<std::string> RestrictedV6(const address_v6& v6) {
  if (v6.is_unspecified()) return "unspecified (::)";
  if (v6.is_loopback()) return "loopback (::1)";
  auto b = v6.to_bytes();
  if (auto v4 = EmbeddedV4(b)) {
    if (auto what = RestrictedV4(*v4)) return fmt::format("{} inside the IPv6 address", *what);
    return std::nullopt;
  }
  static const address_v6 kMetadata = boost::asio::ip::make_address_v6("fd00:ec2::254");
  if (v6 == kMetadata) return "cloud metadata (fd00:ec2::254)";
  if ((b[0] & 0xfe) == 0xfc) return "private, unique local (fc00::/7)";
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "link-local (fe80::/10)";
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "site-local, deprecated private (fec0::/10)";
  if (b[0] == 0xff) return "multicast (ff00::/8)";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> RestrictedRange(const address& a) {
  auto range = a.is_v4() ? RestrictedV4(a.to_v4()) : RestrictedV6(a.to_v6());
  if (range) return range;
  return HostOwnAddress(a);
}

bool NamedByAllowHost(const EgressRules& rules, const address& a) {
  for (const auto& entry : rules.hosts) {
    boost::system::error_code ec;
    auto literal = boost::asio::ip::make_address(entry, ec);
    if (!ec && literal == a) return true;
  }
  return false;
}

RuleVerdict CheckAddress(const EgressRules& rules, const std::string& host, std::uint16_t port,
                         const address& a, bool pinned) {
  auto range = RestrictedRange(a);
  if (!range) return {true, "public address", ""};
  std::string literal = a.to_string();
  if (pinned) return {true, fmt::format("--resolve pin to {} address {}", *range, literal), ""};
  if (NamedByAllowHost(rules, a)) return {true, fmt::format("allow_host \"{}\" ({})", literal, *range), ""};
  std::string shown = a.is_v6() ? "[" + literal + "]" : literal;
  if (host == literal) {
    return {false, fmt::format("address {} is {}: internal addresses are refused unless named explicitly", literal,
                               *range),
            fmt::format("add \"{}\" to network.outbound.allow_host in the permission profile (or pass "
                        "--allow-host {})",
                        literal, literal)};
  }
  return {false,
          fmt::format("\"{}\" resolved to {}, which is {}: internal addresses are refused unless named explicitly",
                      host, literal, *range),
          fmt::format("pin the name with --resolve {}:{}:{} (or add \"{}\" to network.outbound.allow_host)", host,
                      port, shown, literal)};
}

}  // namespace mcpcell
