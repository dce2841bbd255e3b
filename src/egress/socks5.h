#pragma once
// SOCKS5 (RFC 1928) on the proxy's port, for clients that tunnel non-HTTP
// TCP (a database port) or simply prefer it (ALL_PROXY=socks5h://...): no
// authentication, CONNECT only, addresses as a domain name (preferred: the
// proxy then resolves and checks it itself), IPv4 or IPv6. A denial is reply
// 0x02 "connection not allowed by ruleset".

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>  // before asio's awaitable.hpp (Boost 1.74 misses it)

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "egress/proxy_context.h"
#include "egress/upstream.h"

namespace mcpcell {

// The parsing half, pure (no I/O), so the fuzz target (fuzz/socks5_fuzz.cc)
// runs exactly what ServeSocks5 runs on a client's bytes.

/// Bytes the greeting (VER NMETHODS METHODS...) takes; needs its first 2 bytes.
std::size_t Socks5GreetingSize(std::span<const std::uint8_t> head);
/// Whether a whole greeting offers "no authentication" (method 0x00).
bool Socks5OffersNoAuth(std::span<const std::uint8_t> greeting);

struct Socks5Request {
  std::uint8_t command = 0;
  std::uint8_t atyp = 0;  ///< 1 IPv4, 3 domain name, 4 IPv6; other values carry no address
  std::string host;       ///< dotted/colon address, or the domain bytes as sent (unchecked)
  std::uint16_t port = 0;
};
/// Bytes the request (VER CMD RSV ATYP ADDR PORT) takes; needs its first 5
/// bytes. An unknown address type takes 4 (nothing after it can be read).
std::size_t Socks5RequestSize(std::span<const std::uint8_t> head);
/// Parses a whole request: `request.size()` is at least Socks5RequestSize.
Socks5Request ParseSocks5Request(std::span<const std::uint8_t> request);

/// The SOCKS5 reply code (RFC 1928 section 6) for an attempt that got no upstream.
std::uint8_t Socks5ReplyFor(UpstreamFailure failure);

/// Serves one SOCKS5 client whose first bytes may already be in `buffer`.
/// Throws only on client I/O errors before an attempt exists.
boost::asio::awaitable<void> ServeSocks5(ProxyContext& ctx, boost::beast::tcp_stream& client,
                                         boost::beast::flat_buffer& buffer);

}  // namespace mcpcell
