#pragma once
// Socket I/O that first tries the non-blocking call and waits only when the
// kernel says EAGAIN. On the proxy's hot path (a CONNECT and its 200) the
// bytes are almost always there or the buffer has room, so this saves what
// Asio's own operations cost each connection: a FIONBIO ioctl(2) before the
// first read or write on a socket, a poll(2) in its connect operation, and
// the operation's allocation. Every wait still goes through Asio (readiness
// with async_wait), with the same timeouts as before.

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <utility>  // before asio's awaitable.hpp (Boost 1.74 misses it)

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>

namespace mcpcell {

/// Marks a socket Asio made (accept, open: neither asks for SOCK_CLOEXEC)
/// close-on-exec at once, so no process mcpcell starts inherits a proxy
/// connection, not even one still in its handshake (adv6), and no child
/// keeps one in the tunnel loop's epoll set after the proxy closed it.
void CloseOnExec(int fd);

/// What one non-blocking recv(2) gave.
enum class ReadNowResult { kData, kWouldBlock, kClosed };

/// Appends at most `max` bytes that `fd` holds now to `buffer` (recv with
/// MSG_DONTWAIT). kClosed: EOF or an error; the caller drops the connection.
ReadNowResult ReadNow(int fd, boost::beast::flat_buffer& buffer, std::size_t max);

/// Sends all of `bytes`: at once when the socket buffer has room (the usual
/// case for a short reply), else the rest through asio::async_write. Throws
/// boost::system::system_error like async_write.
boost::asio::awaitable<void> SendAll(boost::asio::ip::tcp::socket& socket, std::span<const char> bytes);

/// A TCP connection to `endpoint` (TCP_NODELAY set) within `timeout`: a
/// non-blocking connect(2) and a wait for writability, without the poll(2)
/// Asio's connect operation makes after the wait.
/// nullopt: *ec says why (boost::beast::error::timeout when it timed out).
boost::asio::awaitable<std::optional<boost::asio::ip::tcp::socket>> ConnectNow(
    boost::asio::ip::tcp::endpoint endpoint, std::chrono::steady_clock::duration timeout,
    boost::system::error_code* ec);

}  // namespace mcpcell
