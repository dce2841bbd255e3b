#pragma once
// Carries the client's stdio (or the relay's pipes) over a hijacked attach stream while the
// container runs: stdin → stream (raw), stream → demultiplexed stdout/stderr.
// Also the supervisor's clock: SIGINT/SIGTERM/SIGHUP/SIGQUIT, --timeout, and
// the MCP shutdown order (stdin EOF → grace → SIGTERM → grace → SIGKILL), the
// signals sent through the engine API.

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "cell/cell.h"
#include "cell/docker/engine_client.h"
#include "util/unique_fd.h"
#include "util/error.h"

namespace mcpcell::docker {

struct PumpConfig {
  /// The client's side: where stdin is read and stdout/stderr are written.
  /// The client's own fds, or the supervisor's relay pipes in front of them
  /// (cell/native/stdio_relay.h: terminals, the MCP-aware relay).
  int client_in = 0;
  int client_out = 1;
  int client_err = 2;
  /// The FIFO path (stdio_fifos.h): when both are valid, stdin goes to
  /// `stdin_fifo` and stdout comes from `stdout_fifo`; the attach stream then
  /// only carries stderr (and its end is the end of the run). Otherwise
  /// stdin/stdout travel on the attach stream itself.
  UniqueFd* stdin_fifo = nullptr;
  UniqueFd* stdout_fifo = nullptr;
  /// The cell writes one byte here once it holds `in` open (stdio_fifos.h);
  /// stdin EOF is passed on (our end of `in` closed) only after that.
  UniqueFd* ready_fifo = nullptr;
  std::chrono::milliseconds grace{2000};
  std::optional<std::chrono::milliseconds> timeout;
  /// Sends a signal to the container (POST /containers/{id}/kill?signal=).
  std::function<Status(const char* signal)> kill;
  /// Cell::Stop: once its fd is readable, SIGTERM now and SIGKILL after its
  /// grace (may be null).
  const StopRequest* stop = nullptr;
};

struct PumpOutcome {
  bool timed_out = false;
  bool client_gone = false;        ///< our stdout was closed under us
  bool stream_cut = false;         ///< the stream ended inside a frame (engine died?)
  std::string stop_reason;         ///< why a stop signal was sent, if one was
};

/// Blocks SIGINT, SIGTERM, SIGHUP, SIGQUIT (handled through signalfd by
/// RunStdioPump) and SIGPIPE (so a vanished client is an EPIPE, not a death).
/// Call before creating the container so no signal is lost in between.
void BlockSupervisorSignals();

/// Runs until the engine closes the stream (the container's stdout and
/// stderr ended). Errors are failures of mcpcell's own side (read/write of
/// the stream, a malformed frame).
Result<PumpOutcome> RunStdioPump(HijackedStream stream, const PumpConfig& config);

}  // namespace mcpcell::docker
