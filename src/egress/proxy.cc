#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include "egress/proxy.h"

#include <sys/resource.h>
#include <sys/socket.h>

#include <chrono>
#include <exception>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <fmt/format.h>

#include "egress/http_proxy.h"
#include "egress/redirect.h"
#include "egress/socket_now.h"
#include "egress/socks5.h"
#include "egress/upstream.h"
#include "util/diag.h"

namespace mcpcell {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;

namespace {

constexpr std::uint8_t kSocks5Version = 0x05;

/// Whether `socket` reached us through the cell's redirect rule, and if so
/// where it was going. A connection made to the listener itself has either
/// no conntrack entry or an original destination equal to the listener.
std::optional<tcp::endpoint> RedirectedFrom(const ProxyContext& ctx, tcp::socket& socket) {
  if (ctx.names == nullptr) return std::nullopt;
  auto original = OriginalDestination(socket.native_handle());
  boost::system::error_code ec;
  auto local = socket.local_endpoint(ec);
  if (!original || ec || *original == local) return std::nullopt;
  return original;
}

/// A connection over the cell's limit: reset at once (nothing read, so no
/// protocol to answer in) and audited; repeats coalesce in the audit.
void RefuseOverLimit(ProxyContext& ctx, tcp::socket& socket) {
  auto start = std::chrono::steady_clock::now();
  EgressAttempt a;
  a.via = "proxy";
  boost::system::error_code ec;
  if (auto destination = RedirectedFrom(ctx, socket)) {
    a.via = "redirect";
    a.host = destination->address().to_string();
    a.port = destination->port();
  }
  a.rule = fmt::format("connection limit: this cell already has {} connections open through mcpcell's egress "
                       "proxy, the most one cell may have (it bounds the supervisor's memory)",
                       ctx.max_connections);
  a.how_to_allow = "close connections the server no longer uses (the limit is per cell and fixed)";
  socket.set_option(asio::socket_base::linger(true, 0), ec);  // RST: the client learns at once
  socket.close(ec);
  FinishAttempt(ctx, a, start);
}

asio::awaitable<void> ServeConnection(ProxyContext& ctx, tcp::socket socket) {
  if (ctx.open_connections >= ctx.max_connections) {
    RefuseOverLimit(ctx, socket);
    co_return;
  }
  ConnectionSlot slot(ctx);
  boost::system::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  if (auto destination = RedirectedFrom(ctx, socket)) {
    co_await ServeRedirect(ctx, socket, *destination);
    co_return;
  }
  beast::flat_buffer buffer;
  // The client has usually sent its request by the time it is accepted: one
  // non-blocking recv takes it (socket_now.h); only if nothing is there yet
  // does the read wait, under the request timeout.
  ReadNowResult first = ReadNow(socket.native_handle(), buffer, 1024);
  if (first == ReadNowResult::kClosed) co_return;
  beast::tcp_stream client(std::move(socket));
  client.expires_after(ctx.request_timeout);
  if (first == ReadNowResult::kWouldBlock) {
    std::size_t n = co_await client.async_read_some(buffer.prepare(1024), asio::use_awaitable);
    buffer.commit(n);
  }
  if (static_cast<const std::uint8_t*>(buffer.data().data())[0] == kSocks5Version) {
    co_await ServeSocks5(ctx, client, buffer);
  } else {
    co_await ServeHttp(ctx, client, buffer);
  }
}

void Spawn(asio::io_context& io, ProxyContext& ctx, tcp::socket socket) {
  asio::co_spawn(io, ServeConnection(ctx, std::move(socket)), [](std::exception_ptr e) {
    // Client I/O errors before an attempt existed (the client went away, timed
    // out, spoke garbage): nothing to audit, nothing to tell the user.
    // Anything else would be a bug in the proxy: say so, keep serving.
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const boost::system::system_error&) {
    } catch (const std::exception& ex) {
      Say(std::string("egress proxy: connection dropped: ") + ex.what());
    } catch (...) {
      Say("egress proxy: connection dropped: unknown exception");
    }
  });
}

asio::awaitable<void> AcceptLoop(asio::io_context& io, tcp::acceptor acceptor, ProxyContext& ctx) {
  bool failing = false;
  for (;;) {
    boost::system::error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) {
      failing = false;
      CloseOnExec(socket.native_handle());
      Spawn(io, ctx, std::move(socket));
      continue;
    }
    if (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor) co_return;
    // EMFILE/ENFILE/ENOBUFS: out of descriptors or memory. Say so once per
    // episode and back off briefly instead of spinning on a ready listener.
    if (!failing) {
      Say(fmt::format("egress proxy: accept: {} (retrying until connections close)", ec.message()));
    }
    failing = true;
    asio::steady_timer pause(io, std::chrono::milliseconds(100));
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

}  // namespace

void RaiseFdLimit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
}

Status StartProxy(asio::io_context& io, UniqueFd listener, ProxyContext& ctx) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return ErrnoError("egress proxy: getsockname on the listening socket");
  }
  if (addr.ss_family != AF_INET && addr.ss_family != AF_INET6) {
    return MakeError("egress proxy: adopt the listening socket", "", "not an IPv4 or IPv6 socket");
  }
  tcp::acceptor acceptor(io);
  boost::system::error_code ec;
  acceptor.assign(addr.ss_family == AF_INET ? tcp::v4() : tcp::v6(), listener.get(), ec);
  if (ec) return MakeError("egress proxy: adopt the listening socket", "", ec.message());
  listener.release();
  RaiseFdLimit();
  asio::co_spawn(io, AcceptLoop(io, std::move(acceptor), ctx), [](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      Say(std::string("egress proxy stopped accepting: ") + ex.what());
    } catch (...) {
    }
  });
  return {};
}

}  // namespace mcpcell
