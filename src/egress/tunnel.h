#pragma once
// Bytes both ways between the cell's connection and the upstream one, after
// the decision. Small bursts are copied through one shared scratch buffer
// (recv + send: no pipe, no allocation); a burst that fills the buffer is a
// bulk transfer and switches to splice(2) through a pipe, which moves pages
// inside the kernel. The pipe exists only while the burst lasts, so an idle
// tunnel costs two sockets and about a kilobyte: no buffers, no coroutine
// frames.

#include <chrono>
#include <cstdint>
#include <utility>  // before asio's awaitable.hpp (Boost 1.74 misses it)

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "egress/egress_audit.h"
#include "egress/proxy_context.h"

namespace mcpcell {

/// Starts a tunnel that owns both sockets and runs on their executor. When
/// both directions have ended (EOF each way, each passed on with
/// shutdown(SHUT_WR)) or either failed (then both sockets are shut down), it
/// adds the byte counts and duration since `start` to `attempt` and records
/// it on ctx.audit. If the io_context is torn down first, it records the
/// attempt then, with error "egress service stopped". Never throws.
void StartTunnel(ProxyContext& ctx, boost::asio::ip::tcp::socket cell, boost::asio::ip::tcp::socket upstream,
                 EgressAttempt attempt, std::chrono::steady_clock::time_point start);

/// One direction as a coroutine, for a caller that waits for it (the HTTP
/// forwarder streams a response body with it): copies `from` → `to` until
/// EOF on `from` (then half-closes `to`) or an error (then shuts both down).
/// Adds every byte moved to `*count`. Never throws.
boost::asio::awaitable<void> Pump(boost::asio::ip::tcp::socket& from, boost::asio::ip::tcp::socket& to,
                                  std::uint64_t* count);

}  // namespace mcpcell
