#pragma once
// Bytes both ways between the cell's connection and the upstream one, after
// the decision. An established tunnel leaves Asio for the proxy's tunnel
// loop (tunnel_loop.h); a caller that waits for one direction (the HTTP
// forwarder streaming a response body) pumps it here with Asio's waits.
// Both copy with ByteFlow (byte_flow.h).

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>  // before asio's awaitable.hpp (Boost 1.74 misses it)

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "egress/egress_audit.h"
#include "egress/proxy_context.h"

namespace mcpcell {

/// Hands both sockets to ctx.tunnels (started here with the first tunnel,
/// so call it on the io thread). The loop records `attempt` with its byte
/// counts and duration since `start` when the tunnel ends, or with error
/// "egress service stopped" if the context goes first. If the loop cannot
/// take it, both sockets are closed and the attempt is recorded with why.
/// Never throws. `early`: bytes the cell sent behind its CONNECT or SOCKS5
/// request, passed on first. Unless the rules allow every host, the cell's
/// first flight must not be a TLS ClientHello naming another server than
/// attempt.host (server_name_gate.h); such a tunnel is refused and recorded
/// as a denial.
void StartTunnel(ProxyContext& ctx, boost::asio::ip::tcp::socket cell, boost::asio::ip::tcp::socket upstream,
                 EgressAttempt attempt, std::chrono::steady_clock::time_point start, std::string early = {});

/// One direction as a coroutine, for a caller that waits for it: copies
/// `from` → `to` until EOF on `from` (then half-closes `to`) or an error
/// (then shuts both down). Adds every byte moved to `*count`. Never throws.
boost::asio::awaitable<void> Pump(boost::asio::ip::tcp::socket& from, boost::asio::ip::tcp::socket& to,
                                  std::uint64_t* count);

}  // namespace mcpcell
