#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include "egress/socket_now.h"

#include <fcntl.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <memory>

#include <boost/asio/buffer.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>

namespace mcpcell {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

boost::system::error_code ErrnoCode(int err) { return {err, boost::system::system_category()}; }

/// Waits until `socket` is writable or `timeout` passes (then the wait is
/// cancelled and the result is beast's timeout). The timer's handler may run
/// after this coroutine has moved on (it was already queued when the wait
/// ended): it reaches the socket only through `watch`, which is cleared first.
asio::awaitable<boost::system::error_code> WaitWritable(tcp::socket& socket,
                                                        std::chrono::steady_clock::duration timeout) {
  struct Watch {
    tcp::socket* socket;
    bool fired = false;
  };
  auto watch = std::make_shared<Watch>(Watch{&socket});
  asio::steady_timer timer(socket.get_executor(), timeout);
  timer.async_wait([watch](const boost::system::error_code& ec) {
    if (ec || watch->socket == nullptr) return;
    watch->fired = true;
    boost::system::error_code ignored;
    watch->socket->cancel(ignored);
  });
  boost::system::error_code ec;
  co_await socket.async_wait(tcp::socket::wait_write, asio::redirect_error(asio::use_awaitable, ec));
  watch->socket = nullptr;
  timer.cancel();
  if (watch->fired) co_return boost::beast::error::timeout;
  co_return ec;
}

}  // namespace

ReadNowResult ReadNow(int fd, boost::beast::flat_buffer& buffer, std::size_t max) {
  auto space = buffer.prepare(max);
  for (;;) {
    ssize_t n = ::recv(fd, space.data(), space.size(), MSG_DONTWAIT);
    if (n > 0) {
      buffer.commit(static_cast<std::size_t>(n));
      return ReadNowResult::kData;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ReadNowResult::kWouldBlock;
    return ReadNowResult::kClosed;
  }
}

asio::awaitable<void> SendAll(tcp::socket& socket, std::span<const char> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(socket.native_handle(), bytes.data() + done, bytes.size() - done, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) throw boost::system::system_error(ErrnoCode(errno));
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (done < bytes.size()) {
    co_await asio::async_write(socket, asio::buffer(bytes.data() + done, bytes.size() - done), asio::use_awaitable);
  }
}

void CloseOnExec(int fd) { (void)::fcntl(fd, F_SETFD, FD_CLOEXEC); }

asio::awaitable<std::optional<tcp::socket>> ConnectNow(tcp::endpoint endpoint,
                                                       std::chrono::steady_clock::duration timeout,
                                                       boost::system::error_code* ec) {
  // Opened by Asio rather than adopted: an adopted descriptor may be a dup,
  // so Asio would remove it from epoll with one more epoll_ctl(2) on close.
  // non_blocking(true) is the one FIONBIO Asio would make before its first
  // wait anyway.
  tcp::socket socket(co_await asio::this_coro::executor);
  socket.open(endpoint.protocol(), *ec);
  if (!*ec) CloseOnExec(socket.native_handle());
  if (!*ec) socket.non_blocking(true, *ec);
  if (*ec) co_return std::nullopt;
  socket.set_option(tcp::no_delay(true), *ec);  // small requests must not wait for Nagle
  if (*ec) co_return std::nullopt;
  // connect(2) on a non-blocking socket: EINPROGRESS, then writable when
  // done, with the outcome in SO_ERROR.
  bool in_progress = false;
  if (::connect(socket.native_handle(), endpoint.data(), static_cast<socklen_t>(endpoint.size())) != 0) {
    if (errno != EINPROGRESS) {
      *ec = ErrnoCode(errno);
      co_return std::nullopt;
    }
    in_progress = true;
  }
  if (in_progress) {
    // On loopback (the host's own ports, benchmarks) the handshake is done
    // by the time connect(2) returns: the SYN-ACK waits in the socket's
    // backlog, processed when connect releases the socket lock. One poll(2)
    // with no timeout sees that and saves the timer, the epoll_ctl and a
    // trip through the event loop; a remote peer is not there yet, and the
    // wait below takes over.
    pollfd now{socket.native_handle(), POLLOUT, 0};
    if (::poll(&now, 1, 0) != 1) {
      *ec = co_await WaitWritable(socket, timeout);
      if (*ec) co_return std::nullopt;
    }
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(socket.native_handle(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      *ec = ErrnoCode(err);
      co_return std::nullopt;
    }
  }
  co_return std::optional<tcp::socket>(std::move(socket));
}

}  // namespace mcpcell
