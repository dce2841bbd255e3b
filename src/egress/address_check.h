#pragma once
// The check the proxy applies to every address it is about to connect to,
// after the name was allowed and resolved: addresses inside the machine, the
// LAN or the cloud provider (loopback, private, link-local, metadata, ...) are
// refused, so "allowed name, internal address" and DNS rebinding fail. The
// exception: an address the user named explicitly — it came from a --resolve
// pin, or an allow_host entry is that very IP literal.

#include <optional>
#include <string>

#include <boost/asio/ip/address.hpp>

#include "egress/host_rules.h"

namespace mcpcell {

/// The restricted range `address` lies in, in words ("loopback (127.0.0.0/8)",
/// "cloud metadata (169.254.169.254)"), or nullopt for an ordinary public
/// address. The host's own interface addresses count as restricted too
/// (see host_addresses.h). IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and
/// NAT64 (64:ff9b::a.b.c.d) IPv6 addresses are judged by the IPv4 inside.
std::optional<std::string> RestrictedRange(const boost::asio::ip::address& address);

/// Whether an allow_host entry of `rules` is the IP literal `address`
/// (compared as addresses, so "::1" and "0:0::1" are the same).
bool NamedByAllowHost(const EgressRules& rules, const boost::asio::ip::address& address);

/// May the proxy connect to `address`, which `host` resolved to? `pinned`: the
/// address came from a --resolve pin. A refusal carries the rule that refused
/// and what would allow it.
RuleVerdict CheckAddress(const EgressRules& rules, const std::string& host, std::uint16_t port,
                         const boost::asio::ip::address& address, bool pinned);

}  // namespace mcpcell
