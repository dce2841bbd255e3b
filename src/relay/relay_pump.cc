#include "relay/relay_pump.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "util/terminal_text.h"
#include "relay/line_framer.h"

namespace mcpcell {
namespace {

bool WriteV(int fd, std::string_view a, std::string_view b) {
  if (a.empty() && b.empty()) return true;  // writev(2) would return 0, read as a closed fd
  iovec iov[2] = {{const_cast<char*>(a.data()), a.size()}, {const_cast<char*>(b.data()), b.size()}};
  int first = 0;
  while (first < 2) {
    ssize_t n = ::writev(fd, iov + first, 2 - first);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    auto left = static_cast<std::size_t>(n);
    while (first < 2 && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      ++first;
    }
    if (first < 2) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return true;
}

// Does what the relay decided for one line read from a side.
void Apply(const RelayAction& a, const LineFramer::Line& line, LineSink* onward, LineSink* back) {
  switch (a.forward) {
    case RelayAction::Forward::kAsIs:
      // As it came: a last line without a newline (a plain program's output) gets none.
      if (!line.oversize) onward->Write(line.text, line.terminated);  // an oversize line is never kAsIs
      break;
    case RelayAction::Forward::kReplaced:
      onward->Write(a.replacement);
      break;
    case RelayAction::Forward::kDrop:
      break;
  }
  if (!a.reply.empty()) back->Write(a.reply);
}

// Lines passed as they came sit one after another in the framer's buffer,
// each followed by its '\n': a run of them goes out in one write instead of
// one per line (1 KiB lines: 64 per pipe read, one write(2) for all). The run
// is flushed before anything else is written to the same side and before the
// next read, so the order of lines on each side stays as read.
class PassedRun {
 public:
  explicit PassedRun(LineSink* onward) : onward_(onward) {}
  ~PassedRun() { Flush(); }
  /// Takes `line` into the run when it is passed as it came and whole; false otherwise.
  bool Take(const RelayAction& a, const LineFramer::Line& line) {
    if (a.forward != RelayAction::Forward::kAsIs || !a.reply.empty() || line.oversize || !line.terminated) return false;
    if (begin_ != nullptr && line.text.data() != end_) Flush();
    if (begin_ == nullptr) begin_ = line.text.data();
    end_ = line.text.data() + line.text.size() + 1;  // the '\n' after it in the framer's buffer
    return true;
  }
  void Flush() {
    if (begin_ == nullptr) return;
    onward_->Write(std::string_view(begin_, static_cast<std::size_t>(end_ - begin_)), false);
    begin_ = end_ = nullptr;
  }

 private:
  LineSink* onward_;
  const char* begin_ = nullptr;
  const char* end_ = nullptr;
};

// Apply(), or into `run` when the line is passed as it came.
void Handle(const RelayAction& a, const LineFramer::Line& line, PassedRun* run, LineSink* onward, LineSink* back) {
  if (run->Take(a, line)) return;
  run->Flush();
  Apply(a, line, onward, back);
}

void Signal(int eventfd) {
  std::uint64_t one = 1;
  (void)!::write(eventfd, &one, sizeof one);
}

// The client closed stdin, but it may still read stdout (a client on pipes
// writes its requests, closes, then reads the answers), and the stop order
// gives the server --grace to answer: a call's --call-timeout holds until the
// cell is gone (`stop`) as before EOF, the client answered with the same
// error. No call can start any more, so this ends at the last deadline.
void ExpireAfterEof(McpRelay* relay, int stop, LineSink* to_client) {
  for (int ms = relay->MsToNextDeadline(); ms >= 0; ms = relay->MsToNextDeadline()) {
    pollfd p = {stop, POLLIN, 0};
    int ready = ::poll(&p, 1, ms);
    if (ready < 0 && errno != EINTR) return;
    if (ready > 0) return;  // the cell is gone: End() records what is left as no_response
    for (const RelayAction& a : relay->Expire(false)) to_client->Write(a.reply);
  }
}

}  // namespace

LineSink::LineSink(int fd, bool owned, bool terminal) : fd_(fd), owned_(owned) {
  if (terminal) filter_ = std::make_unique<TerminalFilter>();
}

LineSink::~LineSink() { Close(); }

bool LineSink::Write(std::string_view line, bool newline) {
  std::lock_guard lock(mu_);
  if (fd_ < 0) return false;
  std::string_view nl = newline ? "\n" : "";
  bool ok = filter_ ? WriteV(fd_, filter_->Filter(line), filter_->Filter(nl)) : WriteV(fd_, line, nl);
  if (!ok && owned_) {
    ::close(fd_);
    fd_ = -1;
  }
  return ok;
}

void LineSink::Close() {
  std::lock_guard lock(mu_);
  if (filter_ && fd_ >= 0) (void)WriteV(fd_, filter_->Flush(), "");
  if (owned_ && fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void PumpClientToServer(McpRelay* relay, std::size_t max_line, int client_in, int stop, int closed,
                        LineSink* to_server, LineSink* to_client) {
  LineFramer framer(max_line);
  const LineFramer::Line none{};
  for (;;) {
    // The poll's timeout is the next call's deadline (--call-timeout): calls
    // come in on this thread, so a new deadline is never later than this wait.
    pollfd p[2] = {{client_in, POLLIN, 0}, {stop, POLLIN, 0}};
    int ready = ::poll(p, 2, relay->MsToNextDeadline());
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (const RelayAction& a : relay->Expire()) Apply(a, none, to_server, to_client);
    if (ready == 0) continue;
    if (p[1].revents != 0) return;  // the cell is gone; nothing to tell it
    std::size_t room = 0;
    char* buf = framer.WritePtr(&room);
    ssize_t n = ::read(client_in, buf, room);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // the client closed stdin (or the terminal hung up)
    framer.Commit(static_cast<std::size_t>(n));
    PassedRun run(to_server);
    while (auto line = framer.Next()) Handle(relay->FromClient(*line), *line, &run, to_server, to_client);
  }
  if (auto line = framer.Finish()) Apply(relay->FromClient(*line), *line, to_server, to_client);
  to_server->Close();  // the server sees EOF
  Signal(closed);      // and the supervisor starts the stop order
  ExpireAfterEof(relay, stop, to_client);
}

void PumpServerToClient(McpRelay* relay, std::size_t max_line, UniqueFd server_out, LineSink* to_client,
                        LineSink* to_server) {
  LineFramer framer(max_line);
  for (;;) {
    std::size_t room = 0;
    char* buf = framer.WritePtr(&room);
    ssize_t n = ::read(server_out.get(), buf, room);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    framer.Commit(static_cast<std::size_t>(n));
    PassedRun run(to_client);
    while (auto line = framer.Next()) Handle(relay->FromServer(*line), *line, &run, to_client, to_server);
  }
  if (auto line = framer.Finish()) Apply(relay->FromServer(*line), *line, to_client, to_server);
}

}  // namespace mcpcell
