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

constexpr const char* kMetadataWhat = "cloud metadata";

struct V4Range {
  std::uint32_t base;
  int prefix;
  const char* what;
};

// Cloud metadata services: they hand out the machine's cloud credentials, so
// no cell may reach them, whatever it is allowed (issue 18, item 11): AWS,
// GCP, Azure IMDS, OpenStack, DigitalOcean (169.254.169.254), AWS ECS task
// metadata (169.254.170.2), Alibaba (100.100.100.200), Azure WireServer
// (168.63.129.16: a public address that only answers inside Azure).
struct Metadata {
  std::uint32_t v4;
  const char* text;
};
constexpr std::array<Metadata, 4> kV4Metadata{{
    {0xA9FEA9FE, "169.254.169.254"},
    {0xA9FEAA02, "169.254.170.2"},
    {0x646464C8, "100.100.100.200"},
    {0xA83F8110, "168.63.129.16"},
}};

constexpr std::array<V4Range, 12> kV4Ranges{{
    {0x00000000, 8, "unspecified / \"this network\" (0.0.0.0/8)"},
    {0x7F000000, 8, "loopback (127.0.0.0/8)"},
    {0x0A000000, 8, "private (10.0.0.0/8)"},
    {0xAC100000, 12, "private (172.16.0.0/12)"},
    {0xC0A80000, 16, "private (192.168.0.0/16)"},
    {0x64400000, 10, "carrier-grade NAT, private (100.64.0.0/10)"},
    {0xA9FE0000, 16, "link-local (169.254.0.0/16)"},
    {0xC0000000, 24, "IETF protocol assignments, not globally reachable (192.0.0.0/24)"},
    {0xC6120000, 15, "mcpcell's synthetic range (198.18.0.0/15)"},
    {0xE0000000, 4, "multicast (224.0.0.0/4)"},
    {0xF0000000, 4, "reserved / broadcast (240.0.0.0/4)"},
    {0xFFFFFFFF, 32, "broadcast (255.255.255.255)"},
}};

bool InV4(std::uint32_t a, const V4Range& r) {
  std::uint32_t mask = r.prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - r.prefix);
  return (a & mask) == r.base;
}

std::optional<std::string> MetadataV4(std::uint32_t a) {
  for (const auto& m : kV4Metadata) {
    if (a == m.v4) return fmt::format("{} ({})", kMetadataWhat, m.text);
  }
  return std::nullopt;
}

std::optional<std::string> RestrictedV4(const address_v4& v4) {
  std::uint32_t a = v4.to_uint();
  if (auto metadata = MetadataV4(a)) return metadata;
  for (const auto& r : kV4Ranges) {
    if (InV4(a, r)) return std::string(r.what);
  }
  return std::nullopt;
}

bool Zero(const address_v6::bytes_type& b, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i) {
    if (b[i] != 0) return false;
  }
  return true;
}

// The IPv4 address carried inside an IPv6 one in the forms that lead to that
// IPv4 host: mapped ::ffff:0:0/96 (the kernel connects over IPv4), compatible
// ::/96 (deprecated, but a literal), NAT64 64:ff9b::/96 (RFC 6052: a NAT64
// gateway forwards it), 6to4 2002::/16 (RFC 3056: the v4 in bits 16-47 is
// the relay's destination).
std::optional<address_v4> EmbeddedV4(const address_v6::bytes_type& b) {
  address_v4::bytes_type tail{b[12], b[13], b[14], b[15]};
  if (Zero(b, 0, 10) && b[10] == 0xff && b[11] == 0xff) return address_v4(tail);
  if (Zero(b, 0, 12) && !(tail[0] == 0 && tail[1] == 0 && tail[2] == 0 && tail[3] <= 1)) return address_v4(tail);
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && Zero(b, 4, 12)) return address_v4(tail);
  if (b[0] == 0x20 && b[1] == 0x02) return address_v4({b[2], b[3], b[4], b[5]});
  return std::nullopt;
}

struct V6Range {
  std::array<std::uint8_t, 6> prefix;  ///< the first bytes
  int bits;
  const char* what;
};

// Whole IPv6 ranges refused whatever follows the prefix (RFC 6890 and its
// updates). Order: more specific first.
constexpr std::array<V6Range, 8> kV6Ranges{{
    // RFC 8215: translated by a local NAT64 to whatever the operator chose,
    // so where it leads cannot be told from the address.
    {{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48,
     "NAT64 local-use (64:ff9b:1::/48), translated to an IPv4 the address does not show"},
    // The rest of 64:ff9b::/32 around the well-known /96 (judged by its IPv4
    // above): reserved for translators, never an ordinary destination.
    {{0x00, 0x64, 0xff, 0x9b}, 32, "NAT64 (64:ff9b::/32 outside the well-known 64:ff9b::/96)"},
    // RFC 4380: Teredo tunnels to an IPv4 host whose address is obfuscated
    // in the last 32 bits; a host without Teredo has no use for it.
    {{0x20, 0x01, 0x00, 0x00}, 32, "Teredo (2001::/32), a tunnel to an IPv4 host"},
    {{0xfc, 0x00, 0x00, 0x00}, 7, "private, unique local (fc00::/7)"},
    {{0xfe, 0x80, 0x00, 0x00}, 10, "link-local (fe80::/10)"},
    {{0xfe, 0xc0, 0x00, 0x00}, 10, "site-local, deprecated private (fec0::/10)"},
    {{0xff, 0x00, 0x00, 0x00}, 8, "multicast (ff00::/8)"},
    // RFC 6666: discard-only.
    {{0x01, 0x00, 0x00, 0x00}, 64, "discard-only (100::/64)"},
}};

bool InV6(const address_v6::bytes_type& b, const V6Range& r) {
  int bits = r.bits;
  for (std::size_t i = 0; bits > 0; ++i, bits -= 8) {
    std::uint8_t prefix = i < r.prefix.size() ? r.prefix[i] : 0;
    auto mask = static_cast<std::uint8_t>(bits >= 8 ? 0xff : 0xff << (8 - bits));
    if ((b[i] & mask) != (prefix & mask)) return false;
  }
  return true;
}

std::optional<std::string> RestrictedV6(const address_v6& v6) {
  if (v6.is_unspecified()) return "unspecified (::)";
  if (v6.is_loopback()) return "loopback (::1)";
  auto b = v6.to_bytes();
  static const address_v6 kMetadata = boost::asio::ip::make_address_v6("fd00:ec2::254");
  if (v6 == kMetadata) return fmt::format("{} (fd00:ec2::254)", kMetadataWhat);
  if (auto v4 = EmbeddedV4(b)) {
    if (auto what = RestrictedV4(*v4)) return fmt::format("{} inside the IPv6 address", *what);
    return std::nullopt;
  }
  for (const auto& r : kV6Ranges) {
    if (InV6(b, r)) return std::string(r.what);
  }
  return std::nullopt;
}

}  // namespace

bool IsMetadataAddress(const address& a) {
  if (a.is_v6()) {
    static const address_v6 kMetadata = boost::asio::ip::make_address_v6("fd00:ec2::254");
    if (a.to_v6() == kMetadata) return true;
    auto v4 = EmbeddedV4(a.to_v6().to_bytes());
    return v4 && MetadataV4(v4->to_uint()).has_value();
  }
  return MetadataV4(a.to_v4().to_uint()).has_value();
}

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

namespace {

/// A metadata address: refused whatever names it (issue 18, item 11).
RuleVerdict RefuseMetadata(const std::string& host, const address& a, const std::string& range) {
  std::string literal = a.to_string();
  std::string what = host == literal ? fmt::format("address {} is {}", literal, range)
                                     : fmt::format("\"{}\" resolved to {}, which is {}", host, literal, range);
  return {false,
          what + ": refused as a metadata address, always (it hands out the machine's cloud credentials); "
                 "allow_host and --resolve cannot allow it",
          "nothing allows a metadata address (a server that needs cloud credentials can be given them with --secret)"};
}

}  // namespace

RuleVerdict CheckAddress(const EgressRules& rules, const std::string& host, std::uint16_t port,
                         const address& a, bool pinned) {
  auto range = RestrictedRange(a);
  if (!range) return {true, "public address", ""};
  if (IsMetadataAddress(a)) return RefuseMetadata(host, a, *range);
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
