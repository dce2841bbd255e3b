#pragma once
// A name a cell sends is bytes until proven otherwise (issue 10, item 1).
// Every name source of the egress side — the SOCKS5 domain, the CONNECT
// authority, the absolute-form URL host, the Host header, the DNS question —
// passes through CanonicalHost before any rule sees it, and the value it
// returns is the one that is matched, resolved and audited. So a name cannot
// mean one thing to the allow-list ("evil.test\0.allowed.test" ends in
// ".allowed.test") and another to getaddrinfo(3), which stops at the NUL, or
// to inet_aton(3), which reads "0x7f.1" and "2130706433" as 127.0.0.1.
//
// Accepted (the result):
//   a DNS host name: LDH labels (RFC 952/1123: letters, digits, '-', not at a
//     label's start or end) of 1-63 bytes, at most 253 bytes in all, one
//     optional trailing dot (dropped), upper case folded to lower case; the
//     last label not all digits (RFC 3696 section 2), so no name can be read
//     as a number;
//   an IPv4 literal written a.b.c.d with decimal octets and no leading zeros
//     (what inet_pton(3) accepts), as is;
//   an IPv6 literal (with or without brackets, no zone id), in its RFC 5952
//     form ("0:0::1" becomes "::1").
// Everything else is refused with the reason and the byte offset.
//
// Pure functions over bytes, no I/O: the fuzz targets call them directly.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mcpcell {

/// The canonical form of `bytes` as a host (see above), or nullopt with
/// `*why` set to "not a valid DNS name: NUL byte at offset 9" and the like.
std::optional<std::string> CanonicalHost(std::string_view bytes, std::string* why);

/// The same for a name in DNS wire format (length-prefixed labels ending in
/// the root label, RFC 1035 section 3.1, no compression), as the DNS stub
/// receives a question: each label's bytes are checked as they are, so a '.'
/// or NUL byte inside a label is refused, not split or cut. The root name
/// alone gives ".".
std::optional<std::string> CanonicalWireName(const std::uint8_t* wire, std::size_t size, std::string* why);

/// `bytes` safe for a log line or a message: printable ASCII as is, other
/// bytes as \xNN, '\\' and '"' escaped; once the text has `max_bytes`
/// bytes the rest of the input is only counted: "...(N more bytes)". So the
/// result has at most max_bytes + 3 bytes before that marker.
std::string PrintableBytes(std::string_view bytes, std::size_t max_bytes = 253);

}  // namespace mcpcell
