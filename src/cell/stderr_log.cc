#include "cell/stderr_log.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "cell/stderr_redact.h"
#include "guard/secret_guard.h"
#include "guard/secret_scanner.h"
#include "util/dir_names.h"
#include "util/write_all.h"
#include "util/terminal_text.h"

namespace mcpcell {
namespace {

constexpr std::size_t kChunk = 64 * 1024;

// The run's log whose copy runs (one per process: TrackedRun's), for
// ClonePause. Set and read on the supervisor's main thread only.
StderrLog* g_live_log = nullptr;

// The file side of the copy: appends up to kLogCap, then rotates. A write
// error (disk full) stops the file, never the copy to the client.
class CappedFile {
 public:
  CappedFile(UniqueFd dir, std::string name, UniqueFd fd) : dir_(std::move(dir)), name_(std::move(name)), fd_(std::move(fd)) {}
  void Append(std::string_view data) {
    while (fd_ && !data.empty()) {
      if (size_ == kLogCap) Rotate();
      if (!fd_) return;
      std::size_t n = std::min(data.size(), kLogCap - size_);
      if (!WriteAll(fd_.get(), data.substr(0, n)).ok()) {
        fd_.reset();
        return;
      }
      size_ += n;
      data.remove_prefix(n);
    }
  }

 private:
  void Rotate() {
    std::string old = name_ + ".1";
    fd_.reset();
    size_ = 0;
    if (::renameat(dir_.get(), name_.c_str(), dir_.get(), old.c_str()) != 0) return;
    fd_.reset(::openat(dir_.get(), name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  }
  UniqueFd dir_;
  std::string name_;
  UniqueFd fd_;
  std::size_t size_ = 0;
};

// Where the copy goes: the client's stderr (filtered when it is a
// terminal) and the run's log file.
class CopyOut {
 public:
  CopyOut(int to, CappedFile file) : to_(to), tty_(::isatty(to) != 0), file_(std::move(file)) {}
  void Put(std::string_view data) {
    if (data.empty()) return;
    // A client's stderr may be non-blocking (Node shares O_NONBLOCK with the
    // children it gives its own stderr): a full one is waited for, not a
    // chunk dropped (adv19: 2256 of 20000 lines arrived).
    (void)WriteAllWaiting(to_, tty_ ? std::string_view(filter_.Filter(data)) : data);
    file_.Append(data);
    at_line_start_ = data.back() == '\n';
  }
  /// One line of mcpcell's own, on a line of its own.
  void Say(const std::string& line) { Put((at_line_start_ ? "" : "\n") + ("mcpcell: " + line + "\n")); }
  void End() {
    if (tty_) (void)WriteAllWaiting(to_, filter_.Flush());
  }

 private:
  int to_;
  bool tty_;
  TerminalFilter filter_;
  CappedFile file_;
  bool at_line_start_ = true;
};

// The secret scan of what is copied (stderr_redact.h), made at the first
// bytes: a run whose server never writes to stderr never loads the rules.
// Fail closed: when the scan cannot start, the bytes are withheld, and why
// is said once.
class CopyScan {
 public:
  CopyScan(SecretPolicy policy, std::string broken)
      : policy_(std::move(policy)), broken_(std::move(broken)),
        redactor_([this](std::string_view line, std::vector<std::string>* rules) {
          return guard_->RedactText(line, rules);
        }) {}

  void Feed(std::string_view chunk, CopyOut* out) {
    if (!Ready(out)) return;
    out->Put(redactor_.Feed(chunk));
    Tell(out);
  }
  void Flush(CopyOut* out) {
    if (guard_ == nullptr) return;
    out->Put(redactor_.Flush());
    Tell(out);
  }
  bool holding() const { return guard_ != nullptr && redactor_.holding(); }

 private:
  bool Ready(CopyOut* out) {
    if (guard_ != nullptr) return true;
    // SecretGuard::Create asks the scanner's libraries first: one that
    // cannot load withholds the bytes with a reason, never aborts.
    if (broken_.empty()) {
      auto guard = SecretGuard::Create(policy_);
      if (guard.ok()) {
        guard_ = std::move(*guard);
        return true;
      }
      broken_ = guard.error().Message();
    }
    if (!told_) {
      out->Say("the run's stderr is withheld: its secret scan cannot start (" + broken_ + "); fix mcpcell.secret_scan (" +
               policy_.origin + ") or set its mode to \"off\"");
      told_ = true;
    }
    return false;
  }
  // Once per rule for the run (docs/SECRETS.md): a server that logs its
  // token on every request must not bury its own stderr in notices.
  void Tell(CopyOut* out) {
    for (auto& rule : redactor_.TakeMasked()) {
      if (!told_rules_.insert(rule).second) continue;
      out->Say("masked a secret (" + rule + ") in the server's stderr (secret scan: " + policy_.origin +
               "; mcpcell.secret_scan mode \"off\" in a permission profile shows it)");
    }
  }

  SecretPolicy policy_;
  std::string broken_;
  bool told_ = false;
  std::set<std::string> told_rules_;
  std::unique_ptr<SecretGuard> guard_;
  StderrRedactor redactor_;
};

// How long a partial line waits for its end while the pipe is quiet.
constexpr int kPartialLineWaitMs = 500;

}  // namespace

std::string CellLogDir(const std::string& state_dir) { return state_dir + "/logs"; }

// The copy's state, kept across a pause: the pipe, where its bytes go, and
// the scan (with a line it holds).
struct StderrLog::Copier {
  Copier(UniqueFd pipe, UniqueFd stop_fd, CopyOut copy_out, std::optional<SecretPolicy> policy)
      : from(std::move(pipe)), stop(std::move(stop_fd)), out(std::move(copy_out)) {
    // The scan's rules are loaded at the first bytes (CopyScan): a server
    // that never writes to stderr never loads them.
    if (policy) scan = std::make_unique<CopyScan>(std::move(*policy), std::string());
  }

  // Copies the pipe to `out` (through the scan when there is one) until
  // `stop` fires: a pause returns at once; at the end (`finishing`) what the
  // pipe holds is taken, without waiting for more, and the copy ends.
  void Run() {
    char buf[kChunk];
    bool draining = false;
    for (;;) {
      if (!draining) {
        pollfd p[2] = {{from.get(), POLLIN, 0}, {stop.get(), POLLIN, 0}};
        int ready = ::poll(p, 2, scan != nullptr && scan->holding() ? kPartialLineWaitMs : -1);
        if (ready < 0) {
          if (errno == EINTR) continue;
          break;
        }
        if (ready == 0) {  // quiet: a line without its end goes on as it is
          scan->Flush(&out);
          continue;
        }
        if (p[1].revents != 0) {
          std::uint64_t n = 0;
          (void)!::read(stop.get(), &n, sizeof n);
          if (!finishing) return;
          // The pipe's bytes were written before the stop, as mcpcell's own
          // last lines were.
          draining = true;
          (void)::fcntl(from.get(), F_SETFL, O_NONBLOCK);
        } else if (p[0].revents == 0) {
          continue;
        }
      }
      ssize_t n = ::read(from.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::string_view chunk(buf, static_cast<std::size_t>(n));
      if (scan != nullptr) {
        scan->Feed(chunk, &out);
      } else {
        out.Put(chunk);
      }
    }
    if (scan != nullptr) scan->Flush(&out);
    out.End();
    ended = true;
  }

  void Signal() {
    std::uint64_t one = 1;
    (void)!::write(stop.get(), &one, sizeof one);
  }

  UniqueFd from;
  UniqueFd stop;
  CopyOut out;
  std::unique_ptr<CopyScan> scan;
  std::atomic<bool> finishing{false};
  bool ended = false;
};

Status StderrLog::Start(UniqueFd dir, const std::string& id, std::optional<SecretPolicy> scan) {
  std::string name = id + ".log";
  UniqueFd file(::openat(dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file) return ErrnoError("create the stderr log", name);
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return ErrnoError("create the stderr log's pipe");
  UniqueFd read_end(p[0]);
  UniqueFd write_end(p[1]);
  UniqueFd stop(::eventfd(0, EFD_CLOEXEC));
  saved_stderr_.reset(::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3));
  if (!stop || !saved_stderr_) return ErrnoError("set up the stderr log");
  // getpwuid(3) for the rules' cache, here while no thread of ours but the
  // prefetch's runs: getpwuid's result is shared by every thread, and the
  // copy's scan asks for it at its first bytes.
  if (scan) (void)SecretScanner::DefaultCache();
  // The log file is the copy's: its rotation renames within `dir`, which it
  // keeps open for that.
  copier_ = std::make_unique<Copier>(std::move(read_end), std::move(stop),
                                     CopyOut(saved_stderr_.get(), CappedFile(std::move(dir), name, std::move(file))),
                                     std::move(scan));
  open_ = true;
  if (auto started = StartCopy(); !started) {
    open_ = false;
    copier_.reset();
    return started;
  }
  // dup2 leaves fd 2 without FD_CLOEXEC: the cell's processes inherit it as
  // their stderr, as they inherited the client's before.
  if (::dup2(write_end.get(), STDERR_FILENO) < 0) {
    Status failed = ErrnoError("redirect stderr into the log");
    Finish();
    return failed;
  }
  g_live_log = this;
  return {};
}

StderrLog::ClonePause::ClonePause() : paused_(g_live_log) {
  if (paused_ != nullptr) paused_->PauseCopy();
}

// A copy that cannot restart (no thread to be had) runs once more in Finish.
StderrLog::ClonePause::~ClonePause() {
  if (paused_ != nullptr) (void)paused_->StartCopy();
}

StderrLog::StderrLog() = default;
StderrLog::~StderrLog() { Finish(); }

void StderrLog::PauseCopy() {
  if (!thread_.joinable()) return;
  copier_->Signal();
  thread_.join();
}

Status StderrLog::StartCopy() {
  if (!open_ || thread_.joinable()) return {};
  // The thread inherits this mask: Ctrl-C, a hang-up or a client's SIGTERM
  // are the supervisor's (its signalfd), and a closed stderr is EPIPE here,
  // not a SIGPIPE that ends mcpcell.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  Status started;
  try {
    thread_ = std::thread([c = copier_.get()] { c->Run(); });
  } catch (const std::system_error& e) {
    started = MakeError("start the stderr log's copy", "", e.what());
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return started;
}

void StderrLog::Finish() {
  if (!open_) return;
  if (g_live_log == this) g_live_log = nullptr;
  // Our fd 2 back first: what mcpcell says from here on goes straight to the
  // client, and the pipe's last writer in this process is gone.
  (void)::dup2(saved_stderr_.get(), STDERR_FILENO);
  copier_->finishing = true;
  // Paused (a launch that failed at its clone): the copy runs once more, to
  // take what the pipe holds.
  (void)StartCopy();
  open_ = false;
  if (thread_.joinable()) {
    copier_->Signal();
    thread_.join();
  } else if (!copier_->ended) {
    // No thread to be had (EAGAIN): the copy runs here, with SIGPIPE
    // blocked, so a closed stderr is EPIPE and the exit code stays ours.
    sigset_t pipe_sig;
    sigset_t old;
    sigemptyset(&pipe_sig);
    sigaddset(&pipe_sig, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
    copier_->Signal();
    copier_->Run();
    timespec now{};
    while (::sigtimedwait(&pipe_sig, nullptr, &now) == SIGPIPE) {
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  copier_.reset();
  saved_stderr_.reset();
}

std::vector<std::string> ListCellLogIds(int dir) {
  std::vector<std::string> ids;
  auto names = DirNames(dir);
  if (!names.ok()) return ids;
  for (const std::string& name : *names) {
    auto dot = name.find(".log");
    if (dot == std::string::npos || name[0] == '.') continue;
    std::string id = name.substr(0, dot);
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

SweepCount PruneCellLogs(int dir, int keep, const std::vector<std::string>& live_ids) {
  SweepCount count;
  struct Log {
    std::string name;
    std::int64_t mtime;
  };
  std::vector<Log> logs;
  auto names = DirNames(dir);
  if (!names.ok()) return count;
  for (const std::string& name : *names) {
    auto dot = name.find(".log");
    if (dot == std::string::npos || name[0] == '.') continue;
    struct stat st{};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    ++count.checked;
    std::string id = name.substr(0, dot);
    if (std::find(live_ids.begin(), live_ids.end(), id) != live_ids.end()) continue;
    logs.push_back({name, static_cast<std::int64_t>(st.st_mtime)});
  }
  std::sort(logs.begin(), logs.end(), [](const Log& a, const Log& b) { return a.mtime > b.mtime; });
  for (std::size_t i = static_cast<std::size_t>(std::max(keep, 0)); i < logs.size(); ++i) {
    if (::unlinkat(dir, logs[i].name.c_str(), 0) == 0) ++count.removed;
  }
  return count;
}

}  // namespace mcpcell
