#pragma once
// The server name a TLS ClientHello asks for (RFC 8446 4.1.2, RFC 6066 3),
// read from the first bytes a cell sends through a tunnel the proxy opened
// for a host it allowed. A shared front (a CDN, a cloud load balancer)
// picks the site by that name, so a tunnel opened for the npm registry
// could otherwise carry a ClientHello naming any other site on the same
// addresses (adversary pass 2026-11-28, tests/e2e/adv3_script_network.test.mjs).
//
// Only the framing is read, never decrypted: the record header, the
// handshake header, the ClientHello's fixed fields and its extensions, every
// length checked against what encloses it. A ClientHello must arrive whole
// in one record (16 KiB; every TLS stack sends it so, post-quantum key
// shares included); anything else that starts like a TLS handshake is
// malformed, and the caller refuses it.

#include <optional>
#include <string>
#include <string_view>

namespace mcpcell {

struct ClientHelloRead {
  enum class Kind {
    kNeedMore,   ///< the first record is not complete yet
    kNotTls,     ///< the first byte is no TLS handshake record (plain HTTP, SSH, ...)
    kHello,      ///< a whole ClientHello; server_name set if it names one
    kMalformed,  ///< starts as a TLS handshake but is no ClientHello read whole; why says
  };
  Kind kind = Kind::kNeedMore;
  std::optional<std::string> server_name;  ///< kHello: the host_name, bytes as sent
  std::string why;                         ///< kMalformed
};

/// The most a first record can take: its 5-byte header and 2^14 bytes.
inline constexpr std::size_t kMaxFirstRecord = 5 + 16384;

/// Reads the start of what a cell sent into a tunnel.
ClientHelloRead ReadClientHello(std::string_view bytes);

}  // namespace mcpcell
