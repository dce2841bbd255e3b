#pragma once
// The pure parts of the proxy's HTTP handling, testable without sockets:
// where a request wants to go (CONNECT's authority form, an absolute-form
// http:// URI), whether its Host header agrees, and which headers are
// hop-by-hop (RFC 9110 section 7.6.1) and must not be forwarded.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mcpcell {

struct HostPort {
  std::string host;  ///< canonical (CanonicalHost): lower case, no brackets, no trailing dot
  std::uint16_t port = 0;
};

/// "host:port", "host", "[v6]:port", "[v6]" → HostPort; a missing port is
/// `default_port` (0 = the port is required). The host passes CanonicalHost
/// (dns_name.h): HostPort::host is the canonical name. nullopt when malformed,
/// with `*why` (if given) saying what is wrong.
std::optional<HostPort> ParseAuthority(std::string_view authority, std::uint16_t default_port,
                                       std::string* why = nullptr);

/// An absolute-form target "http://authority/path?query": where to connect
/// and the origin-form target ("/path?query", "/" when empty) to send there.
struct HttpTarget {
  HostPort where;
  std::string origin_form;
};

/// Parses an absolute-form http:// URI. Errors (returned as text): another
/// scheme (https:// must use CONNECT), origin-form (this is a proxy), user
/// info in the authority, a bad authority.
std::optional<HttpTarget> ParseHttpTarget(std::string_view target, std::string* why);

/// Whether a Host header value names `target` (port defaulting to
/// `default_port` when the header has none). A header that is no valid
/// authority names nothing (false, `*why` says why).
bool HostHeaderMatches(std::string_view host_header, const HostPort& target, std::uint16_t default_port,
                       std::string* why = nullptr);

/// Whether a header is hop-by-hop: Connection, Keep-Alive, Proxy-*, TE,
/// Trailer, Transfer-Encoding, Upgrade, or a name listed in the request's
/// Connection header (`connection_tokens`, comma separated).
bool IsHopByHop(std::string_view name, std::string_view connection_tokens);

/// "host:port" for messages, with IPv6 hosts in brackets.
std::string FormatHostPort(const HostPort& hp);

}  // namespace mcpcell
