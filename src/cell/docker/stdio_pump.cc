#include "cell/docker/stdio_pump.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "cell/docker/frame_demux.h"
#include "util/diag.h"
#include "util/terminal_text.h"
#include "util/write_all.h"

namespace mcpcell::docker {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kChunk = 256 * 1024;
// Stop reading the client while this much stdin waits for the engine.
constexpr std::size_t kMaxPending = 1 << 20;

sigset_t SupervisorSignals() {
  sigset_t s;
  sigemptyset(&s);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&s, sig);
  return s;
}

// Writes all of `data` to a blocking fd. EPIPE (the reader is gone) is
// reported as false, not as an error.
Result<bool> WriteAllOrEpipe(int fd, std::string_view data, const char* what) {
  Status ok = WriteAll(fd, data, what);
  if (ok) return true;
  if (ok.error().err == EPIPE) return false;
  return ok.error();
}

class Pump {
 public:
  Pump(HijackedStream stream, const PumpConfig& config)
      : stream_(std::move(stream)), config_(config), demux_([this](int s, std::string_view d) { return Sink(s, d); }) {}

  Result<PumpOutcome> Run() {
    sigset_t sigs = SupervisorSignals();
    UniqueFd sfd(::signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sfd) return ErrnoError("signalfd for the supervisor");
    if (config_.timeout) timeout_at_ = Clock::now() + *config_.timeout;
    MCPCELL_TRY(demux_.Feed(stream_.leftover));
    for (;;) {
      pollfd fds[7] = {};
      bool want_out = !pending_.empty() && !Fifo();
      fds[0] = {stream_.fd.get(), static_cast<short>(POLLIN | (want_out ? POLLOUT : 0)), 0};
      fds[1] = {sfd.get(), POLLIN, 0};
      bool want_stdin = !stdin_eof_ && pending_.size() < kMaxPending;
      fds[2] = {want_stdin ? config_.client_in : -1, POLLIN, 0};
      bool fifo_out = Fifo() && !pending_.empty() && config_.stdin_fifo->valid();
      fds[3] = {fifo_out ? config_.stdin_fifo->get() : -1, POLLOUT, 0};
      fds[4] = {Fifo() ? config_.stdout_fifo->get() : -1, POLLIN, 0};
      fds[5] = {Fifo() && !cell_ready_ && config_.ready_fifo != nullptr ? config_.ready_fifo->get() : -1, POLLIN, 0};
      fds[6] = {config_.stop != nullptr && !stop_seen_ ? config_.stop->fd() : -1, POLLIN, 0};
      int n = ::poll(fds, 7, PollTimeoutMs());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoError("poll the attach stream");
      MCPCELL_TRY(OnDeadlines());
      if ((fds[1].revents & POLLIN) != 0) MCPCELL_TRY(OnSignal(sfd.get()));
      if (fds[6].revents != 0) {
        stop_seen_ = true;
        MCPCELL_TRY(BeginStop("Cell::Stop", config_.stop->grace()));
      }
      if (fds[2].revents != 0) ReadStdin();
      if (fds[4].revents != 0) MCPCELL_TRY(DrainStdoutFifo());
      if (fds[5].revents != 0) {
        char b;
        if (::read(config_.ready_fifo->get(), &b, 1) == 1) cell_ready_ = true;
      }
      if ((fds[0].revents & POLLOUT) != 0 || fds[3].revents != 0 || (fds[2].revents != 0 && !pending_.empty()) ||
          (stdin_eof_ && !shut_wr_)) {
        MCPCELL_TRY(FlushStdin());
      }
      if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        auto more = ReadStream();
        if (!more) return more.error();
        if (!*more) break;
      }
    }
    // The container is gone: whatever it wrote to the stdout FIFO is there.
    if (Fifo()) MCPCELL_TRY(DrainStdoutFifo());
    outcome_.stream_cut = !demux_.AtFrameBoundary();
    return outcome_;
  }

 private:
  Status Sink(int stream, std::string_view data) {
    if (stream == 2) {
      auto ok = WriteAllOrEpipe(config_.client_err, err_filter_.Pass(data), "write server stderr");
      return ok ? Status{} : Status{ok.error()};
    }
    if (outcome_.client_gone) return {};
    auto ok = WriteAllOrEpipe(config_.client_out, out_filter_.Pass(data), "write server output to stdout");
    if (!ok) return ok.error();
    if (!*ok) {
      // The client closed our stdout: nobody will read the server again.
      outcome_.client_gone = true;
      return BeginStop("client closed stdout");
    }
    return {};
  }

  bool Fifo() const { return config_.stdin_fifo != nullptr && config_.stdout_fifo != nullptr; }

  // Reads the stdout FIFO until it is empty (non-blocking: we hold a write end
  // too, so it never reports EOF) and passes it on as stream 1.
  Status DrainStdoutFifo() {
    char buf[kChunk];
    for (;;) {
      ssize_t n = ::read(config_.stdout_fifo->get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return {};
      if (n < 0) return ErrnoError("read the server's stdout FIFO");
      if (n == 0) return {};
      MCPCELL_TRY(Sink(1, std::string_view(buf, static_cast<std::size_t>(n))));
    }
  }

  int PollTimeoutMs() const {
    std::optional<Clock::time_point> next;
    for (const auto& t : {timeout_at_, grace_at_}) {
      if (t && (!next || *t < *next)) next = t;
    }
    if (!next) return -1;
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(ms, 0, 1 << 30));
  }

  Status OnDeadlines() {
    auto now = Clock::now();
    if (timeout_at_ && now >= *timeout_at_) {
      timeout_at_.reset();
      outcome_.timed_out = true;
      Say("--timeout of " + std::to_string(config_.timeout->count()) + " ms reached; stopping the server");
      MCPCELL_TRY(BeginStop("timeout"));
    }
    if (grace_at_ && now >= *grace_at_) {
      grace_at_.reset();
      if (stage_ == Stage::kStdinClosed) return BeginStop("stdin closed");
      if (stage_ == Stage::kTerminating) {
        stage_ = Stage::kKilled;
        return config_.kill("SIGKILL");
      }
    }
    return {};
  }

  Status OnSignal(int sfd) {
    signalfd_siginfo si{};
    while (::read(sfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
    }
    return BeginStop("signal");
  }

  // SIGTERM now, SIGKILL after the grace period (once).
  Status BeginStop(const std::string& why, std::optional<std::chrono::milliseconds> grace = {}) {
    if (stage_ == Stage::kTerminating || stage_ == Stage::kKilled) return {};
    stage_ = Stage::kTerminating;
    outcome_.stop_reason = why;
    grace_at_ = Clock::now() + grace.value_or(config_.grace);
    return config_.kill("SIGTERM");
  }

  void ReadStdin() {
    char buf[kChunk];
    ssize_t n = ::read(config_.client_in, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {  // EOF, or an error that means the same: no more input
      stdin_eof_ = true;
      return;
    }
    pending_.append(buf, static_cast<std::size_t>(n));
  }

  Status FlushStdin() {
    while (!pending_.empty()) {
      if (Fifo() && !config_.stdin_fifo->valid()) {
        pending_.clear();
        break;
      }
      ssize_t n = Fifo() ? ::write(config_.stdin_fifo->get(), pending_.data(), pending_.size())
                         : ::send(stream_.fd.get(), pending_.data(), pending_.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return {};
      if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
        pending_.clear();  // the container's stdin is gone; its exit will follow
        break;
      }
      if (n < 0) return ErrnoError("write stdin to the attach stream");
      pending_.erase(0, static_cast<std::size_t>(n));
    }
    if (stdin_eof_ && !shut_wr_ && (!Fifo() || cell_ready_ || config_.ready_fifo == nullptr)) {
      // Half-close: with StdinOnce the engine closes the server's stdin and
      // keeps sending its output (shutdown(2) SHUT_WR sends our FIN only).
      if (Fifo()) {
        config_.stdin_fifo->reset();  // the last writer gone: the server reads EOF
      } else {
        ::shutdown(stream_.fd.get(), SHUT_WR);
      }
      shut_wr_ = true;
      if (stage_ == Stage::kRunning) {
        stage_ = Stage::kStdinClosed;
        grace_at_ = Clock::now() + config_.grace;
      }
    }
    return {};
  }

  // False when the engine closed the stream.
  Result<bool> ReadStream() {
    char buf[kChunk];
    ssize_t n = ::recv(stream_.fd.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n < 0 && errno == ECONNRESET) return false;
    if (n < 0) return ErrnoError("read the attach stream");
    if (n == 0) return false;
    MCPCELL_TRY(demux_.Feed(std::string_view(buf, static_cast<std::size_t>(n))));
    return true;
  }

  enum class Stage { kRunning, kStdinClosed, kTerminating, kKilled };

  // A terminal among our stdout/stderr gets the server's bytes with escape
  // sequences shown, not obeyed (cell/terminal_text.h), as from a native cell.
  struct TerminalSink {
    explicit TerminalSink(int fd) : tty(::isatty(fd) != 0) {}
    std::string_view Pass(std::string_view data) {
      if (!tty) return data;
      shown = filter.Filter(data);
      return shown;
    }
    bool tty;
    TerminalFilter filter;
    std::string shown;
  };

  HijackedStream stream_;
  const PumpConfig& config_;
  TerminalSink out_filter_{config_.client_out};
  TerminalSink err_filter_{config_.client_err};
  FrameDemux demux_;
  PumpOutcome outcome_;
  Stage stage_ = Stage::kRunning;
  std::string pending_;
  bool stdin_eof_ = false;
  bool shut_wr_ = false;
  bool cell_ready_ = false;  ///< FIFO path: the cell has opened its end of `in`
  bool stop_seen_ = false;   ///< Cell::Stop was asked (the eventfd stays readable)
  std::optional<Clock::time_point> timeout_at_;
  std::optional<Clock::time_point> grace_at_;
};

}  // namespace

void BlockSupervisorSignals() {
  sigset_t s = SupervisorSignals();
  sigaddset(&s, SIGPIPE);
  ::sigprocmask(SIG_BLOCK, &s, nullptr);
}

Result<PumpOutcome> RunStdioPump(HijackedStream stream, const PumpConfig& config) {
  Pump pump(std::move(stream), config);
  return pump.Run();
}

}  // namespace mcpcell::docker
