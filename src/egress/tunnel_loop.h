#pragma once
// Established tunnels of one proxy, on a small epoll set of their own.
//
// Asio decides (parse, rules, resolve, connect); once the 200 or the SOCKS5
// success is out, a tunnel is two descriptors and two byte counts. Left in
// Asio it would keep a descriptor state per socket and a pending wait
// operation per direction carrying a type-erased executor: ~1.6 kB per
// idle tunnel (issue 15 item 3 asks for 900 tunnels within 1.5 MB of private
// memory). Here each socket is registered once, level-triggered, with the
// interest its flows need (read while its direction is open and not parked,
// write while bytes wait for it, out of the set when neither); a step stops
// at a short read; an idle tunnel is ~180 bytes.
//
// The set is one descriptor on the proxy's io thread (Asio waits for it to
// be readable, then RunReady handles the batch): no second thread and no
// state shared between threads. The price is the nesting: each wake costs
// one epoll_wait more and Asio's re-arm (bench/RESULTS.md has the counts).
// The tunnel carries bytes only between the two descriptors it was given:
// where they lead was decided before.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "egress/egress_audit.h"
#include "egress/server_name_gate.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

struct LoopTunnel;

class TunnelLoop {
 public:
  /// A loop whose ended tunnels are recorded on `audit` and whose open ones
  /// count in `open` (the cell's connection limit). Both must outlive it.
  /// Errors: epoll_create1 failed.
  static Result<std::unique_ptr<TunnelLoop>> Create(EgressAudit& audit, std::atomic<std::size_t>& open);

  /// Ends every open tunnel (both sockets closed) and records it with error
  /// "egress service stopped".
  ~TunnelLoop();
  TunnelLoop(const TunnelLoop&) = delete;
  TunnelLoop& operator=(const TunnelLoop&) = delete;

  /// The epoll descriptor: readable when a tunnel has something to do.
  int fd() const { return epoll_.get(); }

  /// Takes a decided tunnel: `cell` and `upstream` connected sockets,
  /// `attempt` its allowed attempt (bytes already sent added to it), `start`
  /// when the attempt began. Counts against `open` until it ends; when both
  /// directions have ended (EOF each way, each passed on with
  /// shutdown(SHUT_WR)), or either socket failed (then the other one is
  /// reset, so a cut transfer never looks complete), the attempt is recorded
  /// with its byte counts and duration. Errors: the sockets could not be
  /// registered (the tunnel is closed and recorded with that error).
  /// `early`: bytes the cell sent before the tunnel existed, passed on
  /// first; `gate`: when set, the cell's first flight (early included) is
  /// held until it decides, and a refusal ends the tunnel and is recorded
  /// as a denial (server_name_gate.h).
  Status Add(UniqueFd cell, UniqueFd upstream, EgressAttempt attempt, std::chrono::steady_clock::time_point start,
             std::string early = {}, std::unique_ptr<ServerNameGate> gate = nullptr);

  /// Handles what is ready now (epoll_wait with no timeout) and steps the
  /// flows that yielded last time. True: flows yielded again, so call it
  /// again soon even if fd() is not readable.
  bool RunReady();

  /// Tunnels open now.
  std::size_t size() const { return count_; }

 private:
  TunnelLoop(EgressAudit& audit, std::atomic<std::size_t>& open) : audit_(audit), open_(open) {}
  void Handle(LoopTunnel& t, int side, std::uint32_t events);
  void StepFlow(LoopTunnel& t, int dir);
  /// After steps: ends the tunnel if a flow failed or both ended, else
  /// queues it to register the interest its flows now have.
  void Settle(LoopTunnel& t, bool socket_error);
  bool Rearm(LoopTunnel& t);
  /// Closes both sockets (reset first if `failed`), records the attempt and
  /// frees the tunnel after the current batch of events.
  void Finish(LoopTunnel& t, bool failed, const char* error);
  void Record(LoopTunnel& t, const char* error);
  void Unlink(LoopTunnel* t);
  void FreeEnded();

  EgressAudit& audit_;
  std::atomic<std::size_t>& open_;
  UniqueFd epoll_;
  std::unique_ptr<char[]> scratch_;   ///< the copy buffer (kFlowScratch), allocated on first use
  LoopTunnel* head_ = nullptr;         ///< open tunnels, for the destructor
  std::size_t count_ = 0;
  std::vector<LoopTunnel*> yielded_;  ///< to step again on the next call
  std::vector<LoopTunnel*> rearm_;    ///< interest to register after the batch
  std::vector<LoopTunnel*> ended_;    ///< freed after the batch (its events may name them)
};

}  // namespace mcpcell
