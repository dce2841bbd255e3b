// GCC 12 reports -Wnull-dereference inside asio's scheduler after inlining
// (boost/asio/detail/impl/scheduler.ipp); the pointer is never null there.
#pragma GCC diagnostic ignored "-Wnull-dereference"
// GCC 12 also pairs asio's coroutine-frame operator new/delete wrongly after
// inlining (-Wmismatched-new-delete); both are asio's own recycling allocator.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#include <utility>  // first: Boost 1.74's asio/awaitable.hpp uses std::exchange without it

#include "egress/tunnel.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <limits>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "util/unique_fd.h"

namespace mcpcell {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// Bytes per splice(2) call: one default-sized pipe (16 pages).
constexpr std::size_t kChunk = 64 * 1024;
// Chunks moved before yielding to other connections: a bulk transfer must not
// starve the rest of the event loop.
constexpr int kChunksPerTurn = 16;

/// A pipe that lives while one burst of data flows.
struct Pipe {
  UniqueFd read_end, write_end;
  bool Open() {
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return false;
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
    return true;
  }
  void Close() {
    read_end.reset();
    write_end.reset();
  }
};

void ShutdownBoth(tcp::socket& a, tcp::socket& b) {
  ::shutdown(a.native_handle(), SHUT_RDWR);
  ::shutdown(b.native_handle(), SHUT_RDWR);
}

}  // namespace

asio::awaitable<void> Pump(tcp::socket& from, tcp::socket& to, std::uint64_t* count) {
  boost::system::error_code ec;
  from.native_non_blocking(true, ec);
  to.native_non_blocking(true, ec);
  const int in = from.native_handle();
  const int out = to.native_handle();
  Pipe pipe;
  std::size_t in_pipe = 0;
  int turn = 0;
  for (;;) {
    if (++turn % kChunksPerTurn == 0) co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    if (in_pipe == 0) {
      if (!pipe.read_end && !pipe.Open()) break;
      // splice(2): socket → pipe without copying to user space; NONBLOCK so
      // an empty socket says EAGAIN instead of blocking the event loop.
      ssize_t n = ::splice(in, nullptr, pipe.write_end.get(), nullptr, kChunk, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) {
        in_pipe = static_cast<std::size_t>(n);
        *count += static_cast<std::uint64_t>(n);
      } else if (n == 0) {
        ::shutdown(out, SHUT_WR);  // pass the EOF on; the other direction may still flow
        co_return;
      } else if (errno == EAGAIN) {
        pipe.Close();  // idle: give the pipe back until data flows again
        co_await from.async_wait(tcp::socket::wait_read, asio::redirect_error(asio::use_awaitable, ec));
        if (ec) break;
        continue;
      } else if (errno != EINTR) {
        break;
      }
      continue;
    }
    ssize_t m = ::splice(pipe.read_end.get(), nullptr, out, nullptr, in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (m > 0) {
      in_pipe -= static_cast<std::size_t>(m);
    } else if (m < 0 && errno == EAGAIN) {
      co_await to.async_wait(tcp::socket::wait_write, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) break;
    } else if (m < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  ShutdownBoth(from, to);
}

asio::awaitable<void> RunTunnel(tcp::socket& cell, tcp::socket& upstream, std::uint64_t* bytes_out,
                                std::uint64_t* bytes_in) {
  auto executor = co_await asio::this_coro::executor;
  // The upstream → cell direction runs as its own coroutine; this one waits
  // for it on a timer that its completion cancels. Both reference sockets in
  // the caller's frame, which outlives them (this frame waits for both).
  asio::steady_timer other_done(executor, asio::steady_timer::time_point::max());
  bool other_finished = false;
  asio::co_spawn(executor, Pump(upstream, cell, bytes_in), [&](std::exception_ptr) {
    other_finished = true;
    other_done.cancel();
  });
  co_await Pump(cell, upstream, bytes_out);
  if (!other_finished) {
    boost::system::error_code ec;
    co_await other_done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

}  // namespace mcpcell
