#include "cell/native/stdio_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <string_view>

#include "audit/audit_log.h"
#include "util/diag.h"
#include "util/phase_trace.h"
#include "util/terminal_text.h"
#include "util/write_all.h"

namespace mcpcell {
namespace {

constexpr std::size_t kChunk = 64 * 1024;
// The relay's pipes to and from the cell keep the default 64 KiB: 1 MiB
// pipes (F_SETPIPE_SZ) cut a 24 MiB line's context switches from ~1,200 to
// ~250 but not its CPU or wall time, and showed no gain for 1 KiB lines
// (bench/RESULTS.md, "Large lines and page faults").

void Signal(int eventfd) {
  std::uint64_t one = 1;
  (void)!::write(eventfd, &one, sizeof one);
}

// The user's terminal → the server's stdin pipe. The terminal is polled
// together with `stop`, so the destructor can end this thread without
// touching the terminal's file flags (O_NONBLOCK on it would be shared with
// the user's shell). Blocking reads are fine: poll said there is data.
void CopyTerminalIn(UniqueFd to_cell, int stop, int closed) {
  char buf[kChunk];
  for (;;) {
    pollfd p[2] = {{STDIN_FILENO, POLLIN, 0}, {stop, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[1].revents != 0) return;  // the cell is gone; nothing to tell it
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // Ctrl-D, or the terminal hung up
    if (!WriteAll(to_cell.get(), std::string_view(buf, static_cast<std::size_t>(n)))) break;
  }
  to_cell.reset();  // the server sees EOF
  Signal(closed);   // and the supervisor starts the stop order
}

// The server's stdout or stderr pipe → the user's terminal, filtered. Ends
// when every writer in the cell is gone.
void CopyToTerminal(UniqueFd from_cell, int terminal) {
  TerminalFilter filter;
  char buf[kChunk];
  for (;;) {
    ssize_t n = ::read(from_cell.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!WriteAll(terminal, filter.Filter(std::string_view(buf, static_cast<std::size_t>(n))))) return;
  }
  (void)WriteAll(terminal, filter.Flush());
}

}  // namespace

Result<StdioRelay> StdioRelay::Prepare(std::optional<RelayConfig> mcp, AuditLog* audit) {
  TracePhase("relay-prepare");
  StdioRelay r;
  if (mcp) {
    r.max_line_ = mcp->max_message;
    // A failed write is the relay's to act on (it refuses calls from then on, and says so).
    // No --audit-log: no sink, and the relay builds no records at all.
    McpRelay::AuditSink sink;
    // The text path: the record as the secret scan already dumped it, not dumped again.
    if (audit != nullptr) sink = McpRelay::AuditSink::Text([audit](std::string_view o) { return audit->WriteObject(o); });
    r.mcp_ = std::make_unique<McpRelay>(std::move(*mcp), sink);
    TracePhase("relay-made");
  }
  for (int n = 0; n < 3; ++n) {
    if (::isatty(n) == 0 && !(r.mcp_ && n < 2)) continue;
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return ErrnoError("create a pipe to stand in for the terminal on fd", std::to_string(n));
    // stdin: the cell reads p[0]; stdout/stderr: the cell writes p[1].
    r.cell_end_[n].reset(n == 0 ? p[0] : p[1]);
    r.our_end_[n].reset(n == 0 ? p[1] : p[0]);
  }
  if (r.our_end_[0]) {
    r.stop_.reset(::eventfd(0, EFD_CLOEXEC));
    r.stdin_closed_.reset(::eventfd(0, EFD_CLOEXEC));
    if (!r.stop_ || !r.stdin_closed_) return ErrnoError("create an eventfd for the terminal relay");
  }
  return r;
}

Result<StdioRelay> StdioRelay::Given(std::array<UniqueFd, 3> ends) {
  StdioRelay r;
  r.cell_end_ = std::move(ends);
  // Never signalled: the supervisor watches it instead of mcpcell's stdin.
  r.stdin_closed_.reset(::eventfd(0, EFD_CLOEXEC));
  if (!r.stdin_closed_) return ErrnoError("create an eventfd for a cell's stdin");
  return r;
}

Status StdioRelay::Start() {
  for (auto& fd : cell_end_) fd.reset();
  try {
    if (mcp_) {
      to_server_ = std::make_unique<LineSink>(our_end_[0].release(), true, false);
      to_client_ = std::make_unique<LineSink>(STDOUT_FILENO, false, ::isatty(STDOUT_FILENO) != 0);
      threads_.emplace_back(PumpClientToServer, mcp_.get(), max_line_, STDIN_FILENO, stop_.get(), stdin_closed_.get(),
                            to_server_.get(), to_client_.get());
      threads_.emplace_back(PumpServerToClient, mcp_.get(), max_line_, std::move(our_end_[1]), to_client_.get(),
                            to_server_.get());
    }
    if (our_end_[0]) threads_.emplace_back(CopyTerminalIn, std::move(our_end_[0]), stop_.get(), stdin_closed_.get());
    for (int n = 1; n < 3; ++n) {
      if (our_end_[n]) threads_.emplace_back(CopyToTerminal, std::move(our_end_[n]), n);
    }
  } catch (const std::system_error& e) {
    return MakeError("start the terminal relay", "", e.what());
  }
  return {};
}

std::int64_t StdioRelay::BusyUntilNs() const { return mcp_ ? mcp_->BusyUntilNs() : 0; }

void StdioRelay::Finish() {
  if (stop_) Signal(stop_.get());
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
  if (mcp_) mcp_->End();
  if (to_client_) to_client_->Close();
}

StdioRelay::~StdioRelay() { Finish(); }

}  // namespace mcpcell
