#pragma once
// Bytes both ways between the cell's connection and the upstream one, after
// the decision. splice(2) moves them through a pipe inside the kernel (no
// copy into this process); the pipe exists only while data flows, so an idle
// tunnel costs two sockets and a few hundred bytes, nothing more.

#include <cstdint>
#include <utility>  // before asio's awaitable.hpp (Boost 1.74 misses it)

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace mcpcell {

/// Copies `from` → `to` until EOF on `from` (then half-closes `to` with
/// shutdown(SHUT_WR), so the far end sees the EOF too) or an error (then
/// shuts both sockets down completely, which also ends the other direction).
/// Adds every byte moved to `*count`. Never throws.
boost::asio::awaitable<void> Pump(boost::asio::ip::tcp::socket& from, boost::asio::ip::tcp::socket& to,
                                  std::uint64_t* count);

/// Runs both directions until both have ended. `*bytes_out` counts cell →
/// upstream, `*bytes_in` upstream → cell. Never throws.
boost::asio::awaitable<void> RunTunnel(boost::asio::ip::tcp::socket& cell, boost::asio::ip::tcp::socket& upstream,
                                       std::uint64_t* bytes_out, std::uint64_t* bytes_in);

}  // namespace mcpcell
