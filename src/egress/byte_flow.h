#pragma once
// One direction of a tunnel, between readiness waits: bytes from one socket
// to another without blocking. Small bursts are copied through a scratch
// buffer the caller owns (one per thread: recv + send, no pipe, no
// allocation); a burst that fills the buffer is bulk and switches to
// splice(2) through a pipe, which moves pages inside the kernel. The pipe
// exists only while the burst lasts, so an idle direction holds no pipe and
// no buffer: 48 bytes.
//
// Used by the tunnel loop (tunnel_loop.h, level-triggered epoll) and by Pump
// (tunnel.h, Asio waits). Both ask the kernel again before sleeping, so a
// short read can end a step: the socket is most likely drained, and if not,
// the next wait says so at once (no recv(2) just to see EAGAIN).

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "egress/server_name_gate.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// What a flow waits for after a step.
enum class FlowNext : std::uint8_t {
  kWaitRead,   ///< its source has nothing more now
  kWaitWrite,  ///< its destination's buffer is full; bytes are parked
  kYield,      ///< it moved kFlowTurnBytes: let other connections run, then step again
  kEof,        ///< the source said EOF and it was passed on (shutdown SHUT_WR)
  kError,      ///< a socket failed (reset, broken pipe): end the tunnel
};

/// The scratch buffer a step copies small bursts through.
constexpr std::size_t kFlowScratch = 64 * 1024;
/// Bytes one step moves at most before it yields: a bulk transfer must not
/// starve the other connections of its thread.
constexpr std::uint64_t kFlowTurnBytes = 4 * 1024 * 1024;

class ByteFlow {
 public:
  ByteFlow(int in, int out) : in_(in), out_(out) {}

  /// Moves what can be moved without blocking, through `scratch`
  /// (kFlowScratch bytes); says what to wait for next.
  FlowNext Step(char* scratch);

  /// Bytes read from the source so far (each counted once, when passed on).
  std::uint64_t bytes() const { return bytes_; }

  /// Holds what is read until `gate` decides (a tunnel's first flight from
  /// the cell): opened, the bytes go on in order; refused, the step says
  /// kError and gate() keeps why.
  void Gate(std::unique_ptr<ServerNameGate> gate) { gate_ = std::move(gate); }
  /// Bytes to pass on before any read (sent behind a CONNECT or SOCKS5
  /// request, before the flow existed); without a gate.
  void Prime(std::string_view early);
  /// The gate while it holds bytes, or after it refused; null otherwise.
  const ServerNameGate* gate() const { return gate_.get(); }

 private:
  /// One gated step: true when the step ends with *next; false when the
  /// gate passed bytes (parked, counted in *primed) and the flow goes on.
  bool StepGate(char* scratch, FlowNext* next, std::uint64_t* primed);
  ssize_t SpliceIn(char* scratch);
  /// Keeps what a send(2) did not take, to send when the peer drains.
  void Park(const char* data, std::size_t n);

  int in_, out_;
  UniqueFd pipe_read_, pipe_write_;  ///< only while a bulk burst flows
  std::uint32_t in_pipe_ = 0;        ///< bytes spliced into the pipe, not yet out
  std::uint32_t parked_ = 0, parked_off_ = 0;
  std::unique_ptr<char[]> parked_bytes_;  ///< a small burst's rest after a partial send
  std::unique_ptr<ServerNameGate> gate_;  ///< only while it holds the first flight, or refused
  std::uint64_t bytes_ = 0;
  bool bulk_ = false;
  bool nonblocking_ = false;
};

}  // namespace mcpcell
