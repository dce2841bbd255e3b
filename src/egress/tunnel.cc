#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include "egress/tunnel.h"


#include <sys/socket.h>

#include <exception>
#include <memory>
#include <string>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "egress/byte_flow.h"
#include "egress/host_rules.h"
#include "egress/upstream.h"
#include "egress/tunnel_loop.h"
#include "util/diag.h"
#include "util/unique_fd.h"

namespace mcpcell {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// The io thread's copy buffer for Pump. A step never suspends, so one per
// thread serves every pump; allocated on first use (a thread_local array
// would sit in the static TLS block of every thread of the process).
char* Scratch() {
  thread_local std::unique_ptr<char[]> buffer;
  if (!buffer) buffer = std::make_unique_for_overwrite<char[]>(kFlowScratch);
  return buffer.get();
}

void ShutdownBoth(tcp::socket& a, tcp::socket& b) {
  ::shutdown(a.native_handle(), SHUT_RDWR);
  ::shutdown(b.native_handle(), SHUT_RDWR);
}

/// Takes the descriptor out of Asio (which stops watching it) for the loop.
UniqueFd Release(tcp::socket& socket) {
  boost::system::error_code ec;
  int fd = socket.release(ec);  // close-on-exec since its accept or open (socket_now.h CloseOnExec)
  return UniqueFd(ec ? -1 : fd);
}

/// Runs the tunnel loop's batches on the io thread: waits for its epoll
/// descriptor to be readable, then RunReady. Owned by its pending handler,
/// so it goes with the io_context; the loop itself lives in ProxyContext,
/// which outlives the io_context's run.
class LoopWatch : public std::enable_shared_from_this<LoopWatch> {
 public:
  LoopWatch(const asio::any_io_executor& ex, TunnelLoop& loop) : epoll_(ex, loop.fd()), loop_(loop) {}
  ~LoopWatch() { epoll_.release(); }  // the loop owns and closes its epoll descriptor
  LoopWatch(const LoopWatch&) = delete;
  LoopWatch& operator=(const LoopWatch&) = delete;

  void Arm() {
    epoll_.async_wait(asio::posix::descriptor_base::wait_read,
                      [self = shared_from_this()](const boost::system::error_code& ec) {
                        if (!ec) self->Run();
                      });
  }

 private:
  void Run() {
    if (loop_.RunReady()) {
      // Flows yielded (bulk): let the io thread's other work run, then go on.
      asio::post(epoll_.get_executor(), [self = shared_from_this()] { self->Run(); });
      return;
    }
    Arm();
  }

  asio::posix::stream_descriptor epoll_;
  TunnelLoop& loop_;
};

}  // namespace

void StartTunnel(ProxyContext& ctx, tcp::socket cell, tcp::socket upstream, EgressAttempt attempt,
                 std::chrono::steady_clock::time_point start, std::string early) {
  if (!ctx.tunnels) {
    auto loop = TunnelLoop::Create(ctx.audit, ctx.open_connections);
    if (!loop) {
      // Fail closed: no loop, no tunnel (the sockets close with this scope).
      attempt.error = loop.error().Message();
      Say("egress proxy: " + attempt.error);
      FinishAttempt(ctx, attempt, start);
      return;
    }
    ctx.tunnels = std::move(*loop);
    std::make_shared<LoopWatch>(cell.get_executor(), *ctx.tunnels)->Arm();
  }
  UniqueFd cell_fd = Release(cell);
  UniqueFd upstream_fd = Release(upstream);
  if (!cell_fd || !upstream_fd) {
    attempt.error = "egress proxy: could not take the tunnel's sockets from Asio";
    FinishAttempt(ctx, attempt, start);
    return;
  }
  // A shared front picks the site by the ClientHello's name, a shared HTTP
  // server by the Host header: a tunnel the rules allowed for one host must
  // not carry a handshake or a request for another.
  std::unique_ptr<ServerNameGate> gate;
  if (!ctx.rules.allow_all) {
    RuleVerdict advice = WithFixedAdvice(
        ctx.rules, {false, "", "open the connection to the server the TLS ClientHello or the HTTP Host header names "
                               "(CONNECT that host, or connect to it by name), so the rules judge that host"});
    gate = std::make_unique<ServerNameGate>(attempt.host, attempt.port, advice.how_to_allow, std::string());
  }
  if (auto added = ctx.tunnels->Add(std::move(cell_fd), std::move(upstream_fd), std::move(attempt), start,
                                    std::move(early), std::move(gate));
      !added) {
    Say("egress proxy: " + added.error().Message());  // the loop closed and recorded it
  }
}

asio::awaitable<void> Pump(tcp::socket& from, tcp::socket& to, std::uint64_t* count) {
  ByteFlow flow(from.native_handle(), to.native_handle());
  boost::system::error_code ec;
  bool failed = false;
  for (bool done = false; !done && !failed;) {
    switch (flow.Step(Scratch())) {
      case FlowNext::kWaitRead:
        co_await from.async_wait(tcp::socket::wait_read, asio::redirect_error(asio::use_awaitable, ec));
        break;
      case FlowNext::kWaitWrite:
        co_await to.async_wait(tcp::socket::wait_write, asio::redirect_error(asio::use_awaitable, ec));
        break;
      case FlowNext::kYield:
        co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
        break;
      case FlowNext::kEof: done = true; break;
      case FlowNext::kError: failed = true; break;
    }
    if (ec) failed = true;
  }
  if (failed) ShutdownBoth(from, to);
  *count += flow.bytes();
}

}  // namespace mcpcell
