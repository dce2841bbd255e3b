#pragma once
// The cell never holds one of the client's terminals. A terminal fd in the
// cell would let the server read the user's keystrokes, change the
// terminal's modes (echo off), take its foreground process group, inject
// input (TIOCSTI) or make it its controlling terminal (TIOCSCTTY), whatever
// /dev/tty is. So for each of stdin, stdout and stderr that is a terminal
// the cell gets a pipe instead, and a thread of the supervisor copies
// between the pipe and the terminal: stdin as typed (the user talks to the
// server through mcpcell, Ctrl-D is the client closing stdin), stdout and
// stderr through TerminalFilter (escape sequences shown, not obeyed).
// Pipes and other non-terminals are handed over as they are (no copy) —
// unless the MCP-aware relay is on (the default): then stdin and stdout are
// always pipes, and the relay's two pumps (src/relay/relay_pump.h) read
// every message between the client and the server.

#include <array>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "relay/mcp_relay.h"
#include "relay/relay_pump.h"

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

class AuditLog;

class StdioRelay {
 public:
  /// Looks at fds 0-2 and makes a pipe for each terminal among them; with
  /// `mcp`, pipes for stdin and stdout in any case, relayed message by
  /// message, the relay's records going to `audit` (may be null).
  static Result<StdioRelay> Prepare(std::optional<RelayConfig> mcp = std::nullopt, AuditLog* audit = nullptr);

  /// For a cell that is no MCP server (npm's install scripts,
  /// cell/script_cell.h): its fds 0-2 are `ends` as given, nothing is
  /// copied, and the client's stdin is not watched (its end of input is no
  /// reason to stop such a cell).
  static Result<StdioRelay> Given(std::array<UniqueFd, 3> ends);

  StdioRelay() = default;
  StdioRelay(StdioRelay&&) = default;
  StdioRelay& operator=(StdioRelay&&) = default;
  /// Stops the stdin copy, then waits for stdout/stderr to drain (they end
  /// once every process of the cell is gone: call after the cell was reaped).
  ~StdioRelay();

  /// The fd the cell should have as fd `n` (0-2), or -1 to keep the one it inherits.
  int CellEnd(int n) const { return cell_end_[n].get(); }
  /// After clone: closes the cell's ends here and starts the copies.
  Status Start();
  /// For a backend that carries the bytes to its cell itself (a container's
  /// FIFOs or attach stream): the cell's ends, handed over — fd n, or an
  /// invalid one where the client's own fd n is used as it is. The caller
  /// closes them once the cell is gone; the copies behind them end then.
  std::array<UniqueFd, 3> TakeCellEnds() { return std::move(cell_end_); }
  /// Readable once the client's terminal said end of input (Ctrl-D, hang-up);
  /// -1 when stdin is not relayed.
  int StdinClosedFd() const { return stdin_closed_.get(); }
  /// McpRelay::BusyUntilNs of the MCP relay; 0 without one.
  std::int64_t BusyUntilNs() const;
  /// The same as the destructor, earlier: the server's last output is on
  /// the terminal before mcpcell says how it ended.
  void Finish();

 private:

  std::array<UniqueFd, 3> cell_end_;  ///< the pipe ends the cell gets
  std::array<UniqueFd, 3> our_end_;   ///< the ends the copies use
  UniqueFd stop_;                     ///< eventfd: stop reading the terminal
  UniqueFd stdin_closed_;             ///< eventfd: the terminal said EOF
  std::vector<std::thread> threads_;
  std::unique_ptr<McpRelay> mcp_;
  std::size_t max_line_ = 0;
  std::unique_ptr<LineSink> to_server_;
  std::unique_ptr<LineSink> to_client_;
};

}  // namespace mcpcell
