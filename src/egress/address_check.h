#pragma once
// The check the proxy applies to every address it is about to connect to,
// after the name was allowed and resolved: addresses inside the machine, the
// LAN or the cloud provider (loopback, private, link-local, metadata, ...) are
// refused, so "allowed name, internal address" and DNS rebinding fail. The
// exception: an address the user named explicitly — it came from a --resolve
// pin, or an allow_host entry is that very IP literal — unless it is a cloud
// metadata address, which nothing allows.

#include <optional>
#include <string>

#include <boost/asio/ip/address.hpp>

#include "egress/host_rules.h"

namespace mcpcell {

/// The restricted range `address` lies in, in words ("loopback (127.0.0.0/8)",
/// "cloud metadata (169.254.169.254)"), or nullopt for an ordinary public
/// address. The host's own interface addresses count as restricted too
/// (see host_addresses.h). IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d),
/// NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:AABB:CCDD::/48) IPv6 addresses are
/// judged by the IPv4 inside; NAT64 local-use (64:ff9b:1::/48) and Teredo
/// (2001::/32), whose IPv4 cannot be read plainly, are refused whole.
std::optional<std::string> RestrictedRange(const boost::asio::ip::address& address);

/// Whether `address` is a cloud metadata service (169.254.169.254,
/// fd00:ec2::254, ...; also inside an IPv4-mapped/compatible/NAT64/6to4
/// IPv6 address). Such an address is refused even when an allow_host entry
/// or a --resolve pin names it.
bool IsMetadataAddress(const boost::asio::ip::address& address);

/// Whether an allow_host entry of `rules` is the IP literal `address`
/// (compared as addresses, so "::1" and "0:0::1" are the same).
bool NamedByAllowHost(const EgressRules& rules, const boost::asio::ip::address& address);

/// May the proxy connect to `address`, which `host` resolved to? `pinned`: the
/// address came from a --resolve pin. A refusal carries the rule that refused
/// and what would allow it.
RuleVerdict CheckAddress(const EgressRules& rules, const std::string& host, std::uint16_t port,
                         const boost::asio::ip::address& address, bool pinned);

}  // namespace mcpcell
