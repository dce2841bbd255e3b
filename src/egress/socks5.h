#pragma once
// SOCKS5 (RFC 1928) on the proxy's port, for clients that tunnel non-HTTP
// TCP (a database port) or simply prefer it (ALL_PROXY=socks5h://...): no
// authentication, CONNECT only, addresses as a domain name (preferred: the
// proxy then resolves and checks it itself), IPv4 or IPv6. A denial is reply
// 0x02 "connection not allowed by ruleset".

#include <cstdint>
#include <optional>
#include <string>
#include <utility>  // before asio's awaitable.hpp (Boost 1.74 misses it)

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "egress/proxy_context.h"
#include "egress/upstream.h"

namespace mcpcell {

/// The SOCKS5 reply code (RFC 1928 section 6) for an attempt that got no upstream.
std::uint8_t Socks5ReplyFor(UpstreamFailure failure);

/// Serves one SOCKS5 client whose first bytes may already be in `buffer`.
/// Throws only on client I/O errors before an attempt exists.
boost::asio::awaitable<void> ServeSocks5(ProxyContext& ctx, boost::beast::tcp_stream& client,
                                         boost::beast::flat_buffer& buffer);

}  // namespace mcpcell
