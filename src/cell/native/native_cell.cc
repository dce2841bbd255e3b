#include "cell/native/native_cell.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <optional>

#include "cell/launch_prefetch.h"
#include "cell/cell_ids.h"
#include "cell/mount_plan.h"
#include "cell/native/cell_init.h"
#include "cell/native/cgroup.h"
#include "cell/native/id_map.h"
#include "cell/native/idmap_mount.h"
#include "cell/native/seccomp.h"
#include "cell/native/seccomp_prebuilt.h"
#include "cell/native/setup_report.h"
#include "cell/native/stdio_relay.h"
#include "cell/stderr_log.h"
#include "core/exit_codes.h"
#include "egress/egress_service.h"
#include "util/lazy_library.h"
#include "util/diag.h"
#include "util/phase_trace.h"
#include "util/unique_fd.h"

namespace mcpcell {
namespace {

using Clock = std::chrono::steady_clock;

CellResult Failed(int code, Error e) {
  CellResult r;
  r.exit_code = code;
  r.error = std::move(e);
  r.backend = "native";
  return r;
}

// clone3(2) into new namespaces, returning a pidfd. Raw syscall: glibc has no
// wrapper. The child continues in CellInitMain and never returns here.
// `cgroup_fd` >= 0: the child is born in that cgroup v2 directory
// (CLONE_INTO_CGROUP, Linux 5.7), which spares the supervisor moving it
// through cgroup.procs: a migration waits for the cgroup threadgroup rwsem,
// 5 ms of a launch's wall time on a loaded machine (bench/RESULTS.md).
pid_t CloneCell(const CellInitArgs& init, std::uint64_t flags, int cgroup_fd, int* pidfd) {
  struct clone_args args{};
  args.flags = flags | CLONE_PIDFD | (cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0);
  args.pidfd = reinterpret_cast<std::uintptr_t>(pidfd);
  args.exit_signal = SIGCHLD;
  args.cgroup = cgroup_fd >= 0 ? static_cast<std::uint64_t>(cgroup_fd) : 0;
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) CellInitMain(init);
  return static_cast<pid_t>(pid);
}

UniqueFd Timer(std::chrono::milliseconds after) {
  UniqueFd fd(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
  struct itimerspec its{};
  auto ms = std::max<long long>(after.count(), 1);
  its.it_value.tv_sec = static_cast<time_t>(ms / 1000);
  its.it_value.tv_nsec = static_cast<long>((ms % 1000) * 1'000'000);
  ::timerfd_settime(fd.get(), 0, &its, nullptr);
  return fd;
}

// The supervisor's event loop: one epoll over the cell's pidfd, our signals,
// the client's stdin (hang-up only — the server reads it, we never do; or,
// when stdin is a terminal, the relay's end-of-input eventfd), and one-shot
// timers for --timeout and the stop grace period, and the Cell's Stop
// request. No polling.
class Supervisor {
 public:
  /// `stdin_closed_fd`: readable when the client's input ended; -1 to watch fd 0 itself.
  Supervisor(pid_t pid, int pidfd, const CellSpec& spec, const StdioRelay& stdio, const StopRequest& stop)
      : pid_(pid),
        pidfd_(pidfd),
        spec_(spec),
        stdio_(stdio),
        stdin_fd_(stdio.StdinClosedFd() >= 0 ? stdio.StdinClosedFd() : STDIN_FILENO),
        stop_(stop) {}

  /// Returns the cell's wait status (waitid'd) once PID 1 is gone.
  int Run(bool* timed_out) {
    UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
    sigset_t sigs;
    sigemptyset(&sigs);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&sigs, s);
    UniqueFd sfd(::signalfd(-1, &sigs, SFD_CLOEXEC));
    Add(ep.get(), pidfd_, EPOLLIN);
    Add(ep.get(), sfd.get(), EPOLLIN);
    Add(ep.get(), stop_.fd(), EPOLLIN);
    bool watching_stdin = WatchStdin(ep.get());
    if (spec_.limits.timeout) {
      timeout_ = Timer(*spec_.limits.timeout);
      Add(ep.get(), timeout_.get(), EPOLLIN);
    }
    for (;;) {
      struct epoll_event ev[8];
      int n = ::epoll_wait(ep.get(), ev, 8, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      for (int i = 0; i < n; ++i) {
        int fd = ev[i].data.fd;
        if (fd == pidfd_) return Reap();
        if (fd == sfd.get()) {
          struct signalfd_siginfo si{};
          if (::read(sfd.get(), &si, sizeof si) != sizeof si) continue;
          BeginStop(ep.get(), SIGTERM, "signal");
        } else if (fd == stop_.fd()) {
          ::epoll_ctl(ep.get(), EPOLL_CTL_DEL, stop_.fd(), nullptr);
          BeginStop(ep.get(), SIGTERM, "Cell::Stop", stop_.grace());
        } else if (fd == stdin_fd_ && watching_stdin) {
          ::epoll_ctl(ep.get(), EPOLL_CTL_DEL, stdin_fd_, nullptr);
          watching_stdin = false;
          StdinClosed(ep.get());
        } else if (fd == timeout_.get()) {
          *timed_out = true;
          Say("--timeout of " + std::to_string(spec_.limits.timeout->count()) + " ms reached; stopping the server");
          ::epoll_ctl(ep.get(), EPOLL_CTL_DEL, timeout_.get(), nullptr);
          BeginStop(ep.get(), SIGTERM, "timeout");
        } else if (grace_ && fd == grace_.get()) {
          ::epoll_ctl(ep.get(), EPOLL_CTL_DEL, grace_.get(), nullptr);
          grace_.reset();
          if (stage_ == Stage::kStdinClosed && GraceLeft().count() > 0) {
            grace_ = Timer(GraceLeft());
            Add(ep.get(), grace_.get(), EPOLLIN);
          } else if (stage_ == Stage::kStdinClosed) {
            stage_ = Stage::kRunning;
            BeginStop(ep.get(), SIGTERM, "stdin closed");
          } else {
            ::kill(pid_, SIGKILL);  // PID 1 dies; the kernel kills the rest of the namespace
          }
        }
      }
    }
    return Reap();
  }

 private:
  enum class Stage { kRunning, kStdinClosed, kTerminating };

  // The client closed our stdin: the server saw EOF too. Give it the grace
  // period to exit on its own, then SIGTERM (MCP's order).
  void StdinClosed(int ep) {
    if (stage_ != Stage::kRunning) return;
    stage_ = Stage::kStdinClosed;
    grace_ = Timer(spec_.stop_grace);
    Add(ep, grace_.get(), EPOLLIN);
  }

  // Pipes and sockets: events=0 reports only EPOLLHUP/EPOLLERR, never
  // readable data; EPOLLRDHUP adds a socket whose peer shut down writing
  // (Node's child stdio is a socketpair, and stdin.end() is shutdown(SHUT_WR)).
  // stdin that epoll refuses (EPERM: a regular file, /dev/null) never says
  // more than it holds: its end of input is now, as for a client that wrote
  // everything and closed. So is a stdin that is not open at all.
  bool WatchStdin(int ep) {
    if (Add(ep, stdin_fd_, stdin_fd_ == STDIN_FILENO ? EPOLLRDHUP : EPOLLIN)) return true;
    StdinClosed(ep);
    return false;
  }

  // What is left of the grace period after stdin closed, counted from when
  // the relay last held up every message (compiling the secret rules at the
  // first one, McpRelay::BusyUntilNs): a server blocked writing meanwhile
  // was not slow to exit. Zero when the grace period is over.
  std::chrono::milliseconds GraceLeft() const {
    std::int64_t busy = stdio_.BusyUntilNs();
    if (busy == 0) return std::chrono::milliseconds(0);
    if (busy == INT64_MAX) return spec_.stop_grace;
    auto end = Clock::time_point(std::chrono::nanoseconds(busy)) + spec_.stop_grace;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(end - Clock::now());
    return std::max(left, std::chrono::milliseconds(0));
  }

  static bool Add(int ep, int fd, std::uint32_t events) {
    struct epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    return ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0;
  }

  void BeginStop(int ep, int sig, const char* /*why*/, std::optional<std::chrono::milliseconds> grace = {}) {
    if (stage_ == Stage::kTerminating) {
      ::kill(pid_, SIGKILL);  // a second request: no more waiting
      return;
    }
    stage_ = Stage::kTerminating;
    ::kill(pid_, sig);  // PID 1 forwards it to the server
    if (grace_) ::epoll_ctl(ep, EPOLL_CTL_DEL, grace_.get(), nullptr);
    grace_ = Timer(grace.value_or(spec_.stop_grace));
    Add(ep, grace_.get(), EPOLLIN);
  }

  int Reap() {
    siginfo_t info{};
    while (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_), &info, WEXITED) != 0 && errno == EINTR) {
    }
    if (info.si_code == CLD_EXITED) return info.si_status;
    return 128 + info.si_status;
  }

  pid_t pid_;
  int pidfd_;
  const CellSpec& spec_;
  const StdioRelay& stdio_;
  int stdin_fd_;
  const StopRequest& stop_;
  Stage stage_ = Stage::kRunning;
  UniqueFd timeout_;
  UniqueFd grace_;
};

// A grant mounted as its owner's needs no write check: the cell is its owner there.
Status CheckSupported(const HostIds& host, const std::vector<MountSpec>& planned, const IdmappedGrants& mapped) {
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const MountSpec& m = planned[i];
    if (m.writable && m.kind == MountSpec::Kind::kBind && !mapped.trees[i]) {
      MCPCELL_TRY(CheckCellCanWrite(m.source, host));
    }
  }
  return {};
}

// The supervisor's half of an allow-list: the two sockets the cell made in
// its network namespace (SCM_RIGHTS, in the order cell_net.cc sends them).
Result<std::unique_ptr<EgressService>> StartEgress(const CellSpec& spec, const RunContext& ctx,
                                                   std::vector<UniqueFd> fds) {
  if (spec.network.mode == NetworkSpec::Mode::kNone) {
    // The cell could not bind the stub's socket (cell_init.cc): no reports,
    // and still no network.
    if (fds.empty()) return std::unique_ptr<EgressService>();
    if (fds.size() != 1) {
      return MakeError("start the DNS stub of a cell without network", "",
                       "the cell did not hand over its DNS socket (got " + std::to_string(fds.size()) + " fds)");
    }
    return EgressService::Start(EgressConfig{spec.network, ctx.server, ctx.audit}, EgressSockets{{}, std::move(fds[0])});
  }
  if (fds.size() != 2) {
    return MakeError("start the egress proxy", "", "the cell did not hand over its egress sockets (got " +
                                                       std::to_string(fds.size()) + " fds, expected 2)");
  }
  EgressSockets sockets{std::move(fds[0]), std::move(fds[1])};
  return EgressService::Start(EgressConfig{spec.network, ctx.server, ctx.audit}, std::move(sockets));
}

// One native cell run, as the named steps StartNativeCell takes. Members are
// declared in the order they are made, so they are undone in reverse: the
// egress service first, the cgroup after the cell is gone, the claimed host
// id last.
class NativeCellRun {
 public:
  NativeCellRun(const CellSpec& spec, const RunContext& ctx, StdioRelay& stdio, const LaunchCallback& on_launch)
      : spec_(spec), ctx_(ctx), stdio_(stdio), on_launch_(on_launch) {}

  /// The steps up to a running server; the failure of the first that failed.
  std::optional<CellResult> Start() {
    start_ = Clock::now();
    TracePhase("native-start");
    auto stop = StopRequest::Make();
    if (!stop) return Failed(kExitSetupFailed, stop.error());
    stop_ = std::move(*stop);
    for (auto step : {&NativeCellRun::PrepareHost, &NativeCellRun::CompileFilter, &NativeCellRun::Clone,
                      &NativeCellRun::StartCell, &NativeCellRun::AwaitServer}) {
      if (std::optional<CellResult> failed = (this->*step)()) return failed;
    }
    return std::nullopt;
  }
  /// Cell::Wait: the Supervisor runs the cell to its end.
  CellResult Wait() {
    CellResult r = Supervise();
    TracePhase("cell-reaped");
    return r;
  }
  /// Cell::Stop: the Supervisor sends the signals.
  void Stop(std::chrono::milliseconds grace) { stop_.Request(grace); }
  /// Cell::identity: PID 1 as the host sees it.
  std::string Identity() const { return "pid " + std::to_string(pid_); }

 private:
  using Step = std::optional<CellResult>;

  // Mounts planned, the host id claimed and checked, the cgroup made.
  Step PrepareHost() {
    auto planned = PlanMounts(spec_.mounts);
    // Both are about what the user named (a target twice, a --write dir the
    // cell's user cannot write): bad input, as the README's table says.
    if (!planned) return Failed(kExitUsage, planned.error());
    planned_ = std::move(*planned);
    TracePhase("mounts-planned");
    // Root's cell gets a host uid no other process or user has (cell_ids.h);
    // held until the run is over, after the cell is gone.
    if (::geteuid() == 0) {
      auto c = CellIdClaim::Claim(CellIdDirForThisUser(), PrefetchedHostIdFacts());
      if (!c) return Failed(kExitSetupFailed, c.error());
      claim_ = std::move(*c);
    }
    host_ = CellHostIds(claim_ ? claim_->id() : 0);
    std::vector<std::string> notes;
    auto mapped = MapGrantsToOwners(spec_, planned_, host_, &notes);
    // --idmap=on refusing a grant is what the user asked for (exit 2); a
    // source that changed or a failed syscall is a setup failure, as in the cell.
    if (!mapped) return Failed(mapped.error().what == "--idmap=on" ? kExitUsage : kExitSetupFailed, mapped.error());
    mapped_ = std::move(*mapped);
    for (const auto& n : notes) Warn(n);
    if (auto ok = CheckSupported(host_, planned_, mapped_); !ok) return Failed(kExitUsage, ok.error());

    cell_id_ = NewCellId();
    TracePhase("host-id-claimed");
    (void)ReapStaleCgroups();
    TracePhase("stale-cgroups-reaped");
    std::vector<std::string> warnings;
    auto cgroup = CellCgroup::Create(spec_.limits, cell_id_, &warnings);
    if (!cgroup) return Failed(kExitIsolationUnavailable, cgroup.error());
    cgroup_.emplace(std::move(*cgroup));
    // One line, once per launch, for all unenforced defaults.
    if (auto w = UnenforcedDefaultsWarning(warnings, spec_.limits); !w.empty()) {
      Warn(w);
    }
    TracePhase("cgroup-made");
    return {};
  }

  // Built in (seccomp_prebuilt.h) or compiled here; loaded by the server with one syscall.
  Step CompileFilter() {
    if (!spec_.seccomp) return {};
    Result<SeccompProgram> compiled = spec_.refuse_preallocation
                                          ? SeccompProgramFor(SeccompVariant::kDenyAndPreallocation)
                                          : PrefetchedSeccomp();
    if (!compiled) return Failed(kExitSetupFailed, compiled.error());
    seccomp_ = std::move(*compiled);
    TracePhase("seccomp-compiled");
    return {};
  }

  // clone3 into the namespaces; the child waits on the sync socket.
  Step Clone() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
      return Failed(kExitSetupFailed, ErrnoError("socketpair"));
    }
    parent_end_.reset(sv[0]);
    UniqueFd child_end(sv[1]);
    // Terminals among fds 0-2 were replaced by pipes before the cell exists;
    // with the relay on, stdin and stdout always were, and go through it.
    bool own_netns = spec_.network.mode != NetworkSpec::Mode::kOpen;
    // An allow-list cell's PID 1 sets its nft rules after pivot_root: it gets
    // libnftables already loaded, never searches the cell's file system for it.
    if (spec_.network.mode == NetworkSpec::Mode::kAllowList) {
      if (auto ok = LazyNftables().Load(); !ok) return Failed(kExitSetupFailed, ok.error());
    }
    AwaitLaunchPrefetch();
    CellInitArgs init{&spec_, &planned_, host_, child_end.get(), own_netns, seccomp_ ? &*seccomp_ : nullptr};
    for (int n = 0; n < 3; ++n) init.stdio[n] = stdio_.CellEnd(n);
    for (const auto& t : mapped_.trees) init.idmapped_trees.push_back(t.get());
    // cgroup v1: PID 1 joins its cgroups itself (OpenV1TasksFiles says why);
    // the fds close here once the cell has its copies.
    auto tasks = cgroup_->OpenV1TasksFiles();
    if (!tasks) return Failed(kExitSetupFailed, tasks.error());
    for (const auto& t : *tasks) init.cgroup_tasks.push_back(t.get());
    init.cgroup_dirs = &cgroup_->dirs();
    std::uint64_t flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                          (own_netns ? CLONE_NEWNET : 0);
    // The supervisor handles these through signalfd; block before clone so none
    // is lost. The child resets its mask.
    sigset_t sigs;
    sigemptyset(&sigs);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&sigs, s);
    ::sigprocmask(SIG_BLOCK, &sigs, nullptr);
    ::signal(SIGPIPE, SIG_IGN);

    int pidfd_raw = -1;
    pid_ = -1;
    // No thread of ours may live at the clone (stderr_log.h says why); the
    // run's stderr copy restarts once it returns.
    std::optional<StderrLog::ClonePause> no_copy_thread;
    no_copy_thread.emplace();
    if (cgroup_->active() && cgroup_->version() == "v2") {
      UniqueFd dir(::open(cgroup_->dirs().front().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
      if (dir) pid_ = CloneCell(init, flags, dir.get(), &pidfd_raw);
      // An older kernel (EINVAL, E2BIG) or a dir we cannot open: the usual
      // clone, then the move through cgroup.procs in StartCell.
      born_in_cgroup_ = pid_ >= 0;
    }
    if (pid_ < 0) pid_ = CloneCell(init, flags, -1, &pidfd_raw);
    no_copy_thread.reset();
    if (pid_ >= 0 && !init.cgroup_tasks.empty()) born_in_cgroup_ = true;  // it joins itself at "go"
    if (pid_ < 0) {
      Error e = ErrnoError("create the cell's namespaces (clone3)");
      e.detail = "user namespaces may be disabled: run 'mcpcell doctor' for what this machine supports";
      return Failed(kExitIsolationUnavailable, e);
    }
    pidfd_.reset(pidfd_raw);
    mapped_ = {};  // the cell holds its own copies; a tree it never attaches dissolves with them
    TracePhase("cloned");
    return {};
  }

  // The parent's half of the cell's setup: stdio copies, id maps, "go", the
  // cgroup, "cgroup joined". The cell builds its root after "go" while the
  // move into the cgroup (a cgroup v2 kernel without CLONE_INTO_CGROUP)
  // waits for the kernel's cgroup threadgroup rwsem, 5-12 ms of wall time;
  // it starts no server before "cgroup joined". On v1 PID 1 joined itself.
  Step StartCell() {
    // Before the janitor forks: it must not inherit the cell's pipe ends.
    if (auto ok = stdio_.Start(); !ok) return Abort(kExitSetupFailed, ok.error());
    TracePhase("relay-started");
    if (auto ok = WriteIdMaps(pid_, spec_.uid, spec_.gid, host_); !ok) return Abort(kExitSetupFailed, ok.error());
    if (::send(parent_end_.get(), "g", 1, MSG_NOSIGNAL) != 1) return Abort(kExitSetupFailed, ErrnoError("start cell"));
    TracePhase("go-sent");
    // Started while the cell builds its root, off the launch's critical path,
    // and before "cgroup joined": no server runs before the janitor that
    // removes its cgroups after a kill -9 of the supervisor (faults.test.mjs).
    // A supervisor killed before this point leaves cgroups that the next run,
    // `mcpcell gc` (or the janitor of any later run) reaps as stale.
    if (cgroup_->active()) {
      // The janitor keeps the cell's mount namespace (cgroup.h says why); our
      // copy closes at once. Not open (PID 1 already gone): no change but speed.
      UniqueFd mnt_ns(::open(("/proc/" + std::to_string(pid_) + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC));
      if (auto j = StartCgroupJanitor(*cgroup_, mnt_ns.get()); !j) {
        Warn(j.error().Message());
      }
    }
    // The cell may have failed its setup meanwhile (a refused bind source):
    // then PID 1 is gone (ESRCH) or its end of the socket is (EPIPE), and its
    // report, read by AwaitServer, says why; no server ran, it waits for "c".
    if (cgroup_->active() && !born_in_cgroup_) {
      if (auto ok = cgroup_->AddProcess(pid_); !ok) {
        if (ok.error().err == ESRCH) return {};
        return Abort(kExitSetupFailed, ok.error());
      }
    }
    if (::send(parent_end_.get(), "c", 1, MSG_NOSIGNAL) != 1) {
      if (errno == EPIPE || errno == ECONNRESET) return {};
      return Abort(kExitSetupFailed, ErrnoError("start cell"));
    }
    TracePhase("cgroup-joined");
    return {};
  }

  // The cell's report: a setup failure, or the server exec'd. Serving starts
  // only after the server was exec'd; until then the kernel queues its
  // connections on the listener (backlog) and its DNS queries on the socket.
  // No service, no cell: an allow-list cell without its proxy would be a
  // network-less cell pretending to be allowed.
  Step AwaitServer() {
    SetupResult setup = AwaitSetupResult(parent_end_.get());
    TracePhase("server-execd");
    setup_error_ = std::move(setup.error);
    if (!setup_error_ && (spec_.network.mode == NetworkSpec::Mode::kAllowList || spec_.network.mode == NetworkSpec::Mode::kNone)) {
      auto started = StartEgress(spec_, ctx_, std::move(setup.fds));
      if (!started) return Abort(kExitSetupFailed, started.error());
      egress_ = std::move(*started);
    }
    if (!setup_error_ && on_launch_) {
      on_launch_(nlohmann::json{{"backend", "native"},
                                {"cell_id", cell_id_},
                                {"pid", pid_},
                                {"cgroup", cgroup_->version()},
                                {"cgroup_dirs", cgroup_->dirs()},
                                {"host_uid", host_.uid}});
    }
    return {};
  }

  // The cell's life after Start, to its end (Cell::Wait).
  CellResult Supervise() {
    CellResult result;
    result.backend = "native";
    result.cell_id = cell_id_;
    Supervisor sup(pid_, pidfd_.get(), spec_, stdio_, stop_);
    result.exit_code = sup.Run(&result.timed_out);
    egress_.reset();  // the cell is gone: stop serving and close every tunnel
    stdio_.Finish();
    if (setup_error_) {
      result.error = *setup_error_;
    } else if (result.timed_out) {
      result.exit_code = kExitTimeout;
    }
    result.peak_memory_bytes = cgroup_->PeakMemoryBytes();
    result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_);
    return result;
  }

  CellResult Abort(int code, Error e) {
    ::kill(pid_, SIGKILL);
    siginfo_t info{};
    ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_.get()), &info, WEXITED);
    return Failed(code, std::move(e));
  }

  const CellSpec& spec_;
  const RunContext& ctx_;
  StdioRelay& stdio_;
  const LaunchCallback& on_launch_;
  Clock::time_point start_;
  std::vector<MountSpec> planned_;
  std::optional<CellIdClaim> claim_;
  HostIds host_;
  IdmappedGrants mapped_;
  std::string cell_id_;
  std::optional<CellCgroup> cgroup_;
  std::optional<SeccompProgram> seccomp_;
  UniqueFd parent_end_;
  pid_t pid_ = -1;
  bool born_in_cgroup_ = false;  ///< CLONE_INTO_CGROUP put PID 1 in the cgroup, or it joins its v1 cgroups itself
  UniqueFd pidfd_;
  std::optional<Error> setup_error_;
  std::unique_ptr<EgressService> egress_;
  StopRequest stop_;
};

}  // namespace

StartedCell StartNativeCell(const CellSpec& spec, const RunContext& ctx, StdioRelay& stdio,
                            const LaunchCallback& on_launch) {
  return StartCellHandle(std::make_unique<NativeCellRun>(spec, ctx, stdio, on_launch));
}

}  // namespace mcpcell
