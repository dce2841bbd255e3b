#pragma once
// Connections the cell's nft rule redirected to the proxy's port: programs
// that ignore proxy variables (Node's built-in fetch, database drivers). The
// kernel remembers where they were going; a synthetic 198.18/15 destination
// maps back to the name the DNS stub handed out, any other address is judged
// as the IP literal it is. A denial simply closes the connection (there is no
// protocol to explain it in; the audit and stderr do).

#include <optional>
#include <utility>  // before asio's awaitable.hpp (Boost 1.74 misses it)

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "egress/proxy_context.h"

namespace mcpcell {

/// The destination a redirected connection was originally headed for:
/// getsockopt(SOL_IP, SO_ORIGINAL_DST) — netfilter's conntrack keeps it (see
/// linux/netfilter_ipv4.h). nullopt when the socket was not NATed (no
/// conntrack entry: ENOENT) or is not IPv4.
std::optional<boost::asio::ip::tcp::endpoint> OriginalDestination(int fd);

/// The host a redirected connection to `destination` stands for: the name of
/// a synthetic address, or the address itself. nullopt: a synthetic address
/// no name was handed out for.
std::optional<std::string> RedirectHost(const NameMap* names, const boost::asio::ip::address& destination);

/// Serves one redirected connection headed for `destination`.
boost::asio::awaitable<void> ServeRedirect(ProxyContext& ctx, boost::asio::ip::tcp::socket& client,
                                           boost::asio::ip::tcp::endpoint destination);

}  // namespace mcpcell
