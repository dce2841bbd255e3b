#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include "egress/tunnel.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <memory>
#include <string>

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "egress/upstream.h"
#include "util/unique_fd.h"

namespace mcpcell {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// The scratch buffer for small bursts. A read that fills it means bulk data:
// the rest of the burst goes through a pipe with splice(2).
constexpr std::size_t kScratch = 64 * 1024;
// Bytes per splice(2) call, and the pipe size asked for with F_SETPIPE_SZ
// (fcntl(2); /proc/sys/fs/pipe-max-size is 1 MiB by default): few syscalls
// per GiB. If the kernel refuses (an unprivileged user over
// pipe-user-pages-soft), the default 64 KiB pipe still works.
constexpr std::size_t kChunk = 1024 * 1024;
// Bytes one direction moves before letting other connections run: a bulk
// transfer must not starve the event loop.
constexpr std::uint64_t kTurnBytes = 4 * 1024 * 1024;

// One io thread serves every tunnel of a service and a Step never suspends,
// so one buffer per io thread serves them all. Allocated on first use: a
// thread_local array would sit in the static TLS block of every thread of
// the process.
char* Scratch() {
  thread_local std::unique_ptr<char[]> buffer;
  if (!buffer) buffer = std::make_unique_for_overwrite<char[]>(kScratch);
  return buffer.get();
}

/// A pipe that lives while one bulk burst flows.
struct Pipe {
  UniqueFd read_end, write_end;
  bool Open() {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return false;
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
    ::fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(kChunk));
    return true;
  }
  void Close() {
    read_end.reset();
    write_end.reset();
  }
};

enum class Next { kWaitRead, kWaitWrite, kYield, kEof, kError };

/// One direction's state between waits.
class Flow {
 public:
  Flow(int in, int out, std::uint64_t* count) : in_(in), out_(out), count_(count) {}

  /// Moves what can be moved without blocking; says what to wait for next.
  Next Step() {
    std::uint64_t moved = 0;
    while (moved < kTurnBytes) {
      if (!pending_.empty()) {  // a partial send of a small burst
        ssize_t n = ::send(out_, pending_.data(), pending_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno == EAGAIN ? Next::kWaitWrite : Next::kError;
        pending_.erase(0, static_cast<std::size_t>(n));
        if (pending_.empty()) std::string().swap(pending_);  // give the memory back
        continue;
      }
      if (in_pipe_ > 0) {
        ssize_t n = ::splice(pipe_.read_end.get(), nullptr, out_, nullptr, in_pipe_, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno == EAGAIN ? Next::kWaitWrite : Next::kError;
        in_pipe_ -= static_cast<std::size_t>(n);
        moved += static_cast<std::uint64_t>(n);
        continue;
      }
      char* scratch = Scratch();
      ssize_t n = bulk_ ? SpliceIn() : ::recv(in_, scratch, kScratch, MSG_DONTWAIT);
      if (n == 0) {
        ::shutdown(out_, SHUT_WR);  // pass the EOF on; the other direction may still flow
        return Next::kEof;
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return Next::kError;
        bulk_ = false;  // the burst is over: idle tunnels hold no pipe
        pipe_.Close();
        return Next::kWaitRead;
      }
      *count_ += static_cast<std::uint64_t>(n);
      moved += static_cast<std::uint64_t>(n);
      if (bulk_) {
        in_pipe_ = static_cast<std::size_t>(n);
        continue;
      }
      if (static_cast<std::size_t>(n) == kScratch) bulk_ = true;
      ssize_t sent = ::send(out_, scratch, static_cast<std::size_t>(n), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent < 0 && errno != EAGAIN && errno != EINTR) return Next::kError;
      std::size_t done = sent < 0 ? 0 : static_cast<std::size_t>(sent);
      if (done < static_cast<std::size_t>(n)) pending_.assign(scratch + done, static_cast<std::size_t>(n) - done);
    }
    return Next::kYield;
  }

 private:
  ssize_t SpliceIn() {
    if (!nonblocking_) {
      // splice(2) blocks on a blocking socket even with SPLICE_F_NONBLOCK;
      // recv/send above use MSG_DONTWAIT instead, so small tunnels never pay
      // for these two fcntl pairs.
      for (int fd : {in_, out_}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
      nonblocking_ = true;
    }
    if (!pipe_.read_end && !pipe_.Open()) {
      bulk_ = false;  // no pipe to be had (EMFILE): copy instead
      return ::recv(in_, Scratch(), kScratch, MSG_DONTWAIT);
    }
    // splice(2): socket → pipe without copying to user space.
    return ::splice(in_, nullptr, pipe_.write_end.get(), nullptr, kChunk, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
  }

  int in_, out_;
  std::uint64_t* count_;
  bool bulk_ = false;
  bool nonblocking_ = false;
  Pipe pipe_;
  std::size_t in_pipe_ = 0;
  std::string pending_;
};

void ShutdownBoth(tcp::socket& a, tcp::socket& b) {
  ::shutdown(a.native_handle(), SHUT_RDWR);
  ::shutdown(b.native_handle(), SHUT_RDWR);
}

/// Both directions, driven by readiness callbacks; owned by its pending
/// handlers (shared_ptr), so it lives exactly as long as something can happen.
class Tunnel : public std::enable_shared_from_this<Tunnel> {
 public:
  Tunnel(ProxyContext& ctx, tcp::socket cell, tcp::socket upstream, EgressAttempt attempt,
         std::chrono::steady_clock::time_point start)
      : ctx_(ctx),
        slot_(ctx),
        cell_(std::move(cell)),
        upstream_(std::move(upstream)),
        attempt_(std::move(attempt)),
        start_(start),
        out_(cell_.native_handle(), upstream_.native_handle(), &attempt_.bytes_out),
        in_(upstream_.native_handle(), cell_.native_handle(), &attempt_.bytes_in) {}

  ~Tunnel() {
    if (recorded_) return;
    attempt_.error = "egress service stopped";
    Record();
  }

  void Start() {
    Drive(Dir::kOut);
    Drive(Dir::kIn);
  }

 private:
  enum class Dir { kOut, kIn };  // kOut: cell → upstream

  void Drive(Dir d) {
    Flow& flow = d == Dir::kOut ? out_ : in_;
    tcp::socket& from = d == Dir::kOut ? cell_ : upstream_;
    tcp::socket& to = d == Dir::kOut ? upstream_ : cell_;
    auto again = [self = shared_from_this(), d](const boost::system::error_code& ec) {
      if (ec) {
        self->End(d, true);
      } else {
        self->Drive(d);
      }
    };
    switch (flow.Step()) {
      case Next::kWaitRead: from.async_wait(tcp::socket::wait_read, std::move(again)); return;
      case Next::kWaitWrite: to.async_wait(tcp::socket::wait_write, std::move(again)); return;
      case Next::kYield: asio::post(from.get_executor(), [again = std::move(again)] { again({}); }); return;
      case Next::kEof: End(d, false); return;
      case Next::kError: End(d, true); return;
    }
  }

  void End(Dir d, bool failed) {
    if (failed) ShutdownBoth(cell_, upstream_);  // ends the other direction too
    (d == Dir::kOut ? out_done_ : in_done_) = true;
    if (out_done_ && in_done_) Record();
  }

  void Record() {
    recorded_ = true;
    try {
      FinishAttempt(ctx_, attempt_, start_);
    } catch (const std::exception&) {  // an audit failure must not take the proxy down
    }
  }

  ProxyContext& ctx_;
  ConnectionSlot slot_;  ///< a tunnel counts against the cell's connection limit until it ends
  tcp::socket cell_, upstream_;
  EgressAttempt attempt_;
  std::chrono::steady_clock::time_point start_;
  Flow out_, in_;
  bool out_done_ = false, in_done_ = false, recorded_ = false;
};

}  // namespace

void StartTunnel(ProxyContext& ctx, tcp::socket cell, tcp::socket upstream, EgressAttempt attempt,
                 std::chrono::steady_clock::time_point start) {
  auto tunnel = std::make_shared<Tunnel>(ctx, std::move(cell), std::move(upstream), std::move(attempt), start);
  tunnel->Start();
}

asio::awaitable<void> Pump(tcp::socket& from, tcp::socket& to, std::uint64_t* count) {
  Flow flow(from.native_handle(), to.native_handle(), count);
  boost::system::error_code ec;
  for (;;) {
    switch (flow.Step()) {
      case Next::kWaitRead:
        co_await from.async_wait(tcp::socket::wait_read, asio::redirect_error(asio::use_awaitable, ec));
        break;
      case Next::kWaitWrite:
        co_await to.async_wait(tcp::socket::wait_write, asio::redirect_error(asio::use_awaitable, ec));
        break;
      case Next::kYield:
        co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
        break;
      case Next::kEof:
        co_return;
      case Next::kError:
        ShutdownBoth(from, to);
        co_return;
    }
    if (ec) {
      ShutdownBoth(from, to);
      co_return;
    }
  }
}

}  // namespace mcpcell
