#include "egress/tunnel_loop.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <cstdint>
#include <exception>
#include <vector>

#include "egress/byte_flow.h"

namespace mcpcell {

/// Both directions of one tunnel; flow[0] reads fd[0] (the cell) and writes
/// fd[1] (the upstream), flow[1] the other way.
struct LoopTunnel {
  LoopTunnel(UniqueFd cell, UniqueFd upstream, std::chrono::steady_clock::time_point began)
      : fd{std::move(cell), std::move(upstream)},
        flow{ByteFlow(fd[0].get(), fd[1].get()), ByteFlow(fd[1].get(), fd[0].get())},
        start(began) {}

  UniqueFd fd[2];
  ByteFlow flow[2];
  /// When the audit writes allowed attempts (an audit log is open), or
  /// while a gate may still refuse (its denial is always told): without
  /// either nothing reads it, and 900 idle tunnels keep ~250 kB less.
  std::unique_ptr<EgressAttempt> attempt;
  std::chrono::steady_clock::time_point start;
  LoopTunnel *prev = nullptr, *next = nullptr;  ///< the loop's list of open tunnels
  FlowNext state[2] = {FlowNext::kWaitRead, FlowNext::kWaitRead};
  std::uint32_t interest[2] = {EPOLLIN, EPOLLIN};  ///< as registered; 0 = not in the epoll set
  bool yielded = false;
  bool rearm = false;  ///< its interest is to be registered after the batch
  bool dead = false;  ///< ended in this batch; freed after it
};

static_assert(alignof(LoopTunnel) >= 2, "the side of a socket rides in the pointer's low bit");

namespace {

// Which socket of a tunnel an event is for rides in the pointer's low bit.
void* Tag(LoopTunnel* t, int side) {
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(t) | static_cast<std::uintptr_t>(side));
}
LoopTunnel* TunnelOf(void* p) {
  return reinterpret_cast<LoopTunnel*>(reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{1});
}
int SideOf(void* p) { return static_cast<int>(reinterpret_cast<std::uintptr_t>(p) & 1); }

constexpr std::uint32_t kDone = EPOLLHUP | EPOLLERR;

bool Ended(FlowNext s) { return s == FlowNext::kEof || s == FlowNext::kError; }

}  // namespace

Result<std::unique_ptr<TunnelLoop>> TunnelLoop::Create(EgressAudit& audit, std::atomic<std::size_t>& open) {
  std::unique_ptr<TunnelLoop> loop(new TunnelLoop(audit, open));
  loop->epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!loop->epoll_) return ErrnoError("egress tunnels: epoll_create1");
  return loop;
}

TunnelLoop::~TunnelLoop() {
  // The service stops: end what is left (fail closed).
  while (head_ != nullptr) Finish(*head_, false, "egress service stopped");
  FreeEnded();
}

Status TunnelLoop::Add(UniqueFd cell, UniqueFd upstream, EgressAttempt attempt,
                       std::chrono::steady_clock::time_point start, std::string early,
                       std::unique_ptr<ServerNameGate> gate) {
  auto t = std::make_unique<LoopTunnel>(std::move(cell), std::move(upstream), start);
  if (audit_.WritesAllowed() || gate) t->attempt = std::make_unique<EgressAttempt>(std::move(attempt));
  if (gate) {
    gate->Add(early);
    t->flow[0].Gate(std::move(gate));
  } else {
    t->flow[0].Prime(early);
  }
  for (int side = 0; side < 2; ++side) {
    epoll_event ev{};
    ev.events = EPOLLIN;  // level-triggered: bytes already there are reported at once
    ev.data.ptr = Tag(t.get(), side);
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, t->fd[side].get(), &ev) == 0) continue;
    Error error = ErrnoError("egress tunnels: epoll_ctl EPOLL_CTL_ADD");
    Record(*t, "egress tunnels: could not register the tunnel's sockets");
    return error;  // close(2) takes a registered side out of the set
  }
  open_.fetch_add(1);
  ++count_;
  LoopTunnel* owned = t.release();  // freed when it ends
  owned->next = head_;
  if (head_ != nullptr) head_->prev = owned;
  head_ = owned;
  // Early bytes go on (or are judged) now: no event would step the flow
  // for bytes that are not in a socket any more.
  StepFlow(*owned, 0);
  Settle(*owned, false);
  if (!owned->dead && owned->rearm) {
    owned->rearm = false;
    std::erase(rearm_, owned);
    if (!Rearm(*owned)) Finish(*owned, true, "egress tunnels: epoll_ctl failed");
  }
  return {};
}

bool TunnelLoop::RunReady() {
  epoll_event events[64];
  int n = ::epoll_wait(epoll_.get(), events, 64, 0);
  for (int i = 0; i < n; ++i) {
    LoopTunnel* t = TunnelOf(events[i].data.ptr);
    if (!t->dead) Handle(*t, SideOf(events[i].data.ptr), events[i].events);
  }
  std::vector<LoopTunnel*> again;
  again.swap(yielded_);
  for (LoopTunnel* t : again) {
    t->yielded = false;
    if (t->dead) continue;
    for (int dir = 0; dir < 2 && !t->dead; ++dir) {
      if (t->state[dir] == FlowNext::kYield) StepFlow(*t, dir);
    }
    Settle(*t, false);
  }
  for (LoopTunnel* t : rearm_) {
    t->rearm = false;
    if (!t->dead && !Rearm(*t)) Finish(*t, true, "egress tunnels: epoll_ctl failed");
  }
  rearm_.clear();
  FreeEnded();
  return !yielded_.empty();
}

void TunnelLoop::Handle(LoopTunnel& t, int side, std::uint32_t events) {
  // The flow that reads this socket, and the one that writes to it. HUP and
  // ERR wake both: the step meets the EOF or the error.
  if ((events & (EPOLLIN | kDone)) && t.state[side] == FlowNext::kWaitRead) StepFlow(t, side);
  if ((events & (EPOLLOUT | kDone)) && t.state[1 - side] == FlowNext::kWaitWrite) StepFlow(t, 1 - side);
  Settle(t, (events & EPOLLERR) != 0);
}

void TunnelLoop::StepFlow(LoopTunnel& t, int dir) {
  if (!scratch_) scratch_ = std::make_unique_for_overwrite<char[]>(kFlowScratch);
  t.state[dir] = t.flow[dir].Step(scratch_.get());
  // The gate opened: its attempt is kept only for an audit log.
  if (dir == 0 && t.flow[0].gate() == nullptr && t.attempt && !audit_.WritesAllowed()) t.attempt.reset();
  if (t.state[dir] == FlowNext::kYield && !t.yielded) {
    t.yielded = true;
    yielded_.push_back(&t);
  }
}

void TunnelLoop::Settle(LoopTunnel& t, bool socket_error) {
  if (t.dead) return;
  // A socket error (a reset) ends the tunnel even if its flow was not
  // waiting on that socket: level-triggered, it would be reported forever.
  if (socket_error || t.state[0] == FlowNext::kError || t.state[1] == FlowNext::kError) {
    Finish(t, true, nullptr);
  } else if (Ended(t.state[0]) && Ended(t.state[1])) {
    Finish(t, false, nullptr);
  } else if (!t.rearm) {
    // Registered after the batch: the next event may end the tunnel, and a
    // closed socket needs no epoll_ctl (the common end of a request: the
    // upstream's EOF, then the cell's, in one batch).
    t.rearm = true;
    rearm_.push_back(&t);
  }
}

bool TunnelLoop::Rearm(LoopTunnel& t) {
  for (int side = 0; side < 2; ++side) {
    std::uint32_t want = 0;
    if (t.state[side] == FlowNext::kWaitRead) want |= EPOLLIN;
    if (t.state[1 - side] == FlowNext::kWaitWrite) want |= EPOLLOUT;
    if (want == t.interest[side]) continue;
    // No interest: out of the set, because HUP and ERR are reported even
    // with none, and a socket whose peer is gone while its bytes wait for
    // the other side would wake the loop in a circle.
    epoll_event ev{};
    ev.events = want;
    ev.data.ptr = Tag(&t, side);
    int op = want == 0 ? EPOLL_CTL_DEL : t.interest[side] == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    if (::epoll_ctl(epoll_.get(), op, t.fd[side].get(), &ev) != 0) return false;
    t.interest[side] = want;
  }
  return true;
}

void TunnelLoop::Finish(LoopTunnel& t, bool failed, const char* error) {
  if (failed) {
    // A reset on one side becomes a reset on the other (SO_LINGER 0, socket(7)):
    // a transfer cut short must not look like one that ended.
    linger reset{1, 0};
    for (auto& fd : t.fd) ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  }
  Unlink(&t);
  // Out of the epoll set first: close(2) removes a registration only with
  // the last descriptor of the socket, and a child forked meanwhile (a
  // cell, a copy of stderr) may still hold one, so epoll_wait would hand
  // back this tunnel after it was freed (ASan, adv_http_host_gate_test).
  for (auto& fd : t.fd) {
    if (fd) ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd.get(), nullptr);
  }
  t.fd[0].reset();
  t.fd[1].reset();
  Record(t, error);
  open_.fetch_sub(1);
  --count_;
  if (t.yielded) std::erase(yielded_, &t);
  t.dead = true;
  ended_.push_back(&t);
}

void TunnelLoop::Record(LoopTunnel& t, const char* error) {
  if (!t.attempt) return;
  EgressAttempt& a = *t.attempt;
  if (const ServerNameGate* gate = t.flow[0].gate(); gate != nullptr && gate->refused()) {
    // Nothing of the cell's passed: a denial, said as every denial is.
    a.allowed = false;
    a.rule = gate->refusal();
    a.how_to_allow = gate->how_to_allow();
    error = nullptr;
  }
  a.bytes_out += t.flow[0].bytes();
  a.bytes_in += t.flow[1].bytes();
  if (error != nullptr) a.error = error;
  a.duration = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t.start);
  try {
    audit_.Record(a);
  } catch (const std::exception&) {  // an audit failure must not take the tunnels down
  }
  t.attempt.reset();
}

void TunnelLoop::Unlink(LoopTunnel* t) {
  if (t->prev != nullptr) t->prev->next = t->next;
  if (t->next != nullptr) t->next->prev = t->prev;
  if (head_ == t) head_ = t->next;
  t->prev = t->next = nullptr;
}

void TunnelLoop::FreeEnded() {
  for (LoopTunnel* t : ended_) delete t;
  ended_.clear();
}

}  // namespace mcpcell
