#pragma once
// The relay's I/O: two threads, one per direction, so a blocking write in
// one direction (a client that reads slowly, a server busy with a large
// request) never stalls the other. Each reads into a LineFramer, asks
// McpRelay what to do with every line and does it: forward the line as it
// came (writev of the framer's bytes and "\n", no copy), forward a rewritten
// line, drop it, and/or answer the side it came from. Lines written to one fd
// from both threads (the client's stdout: forwarded answers and refusals) go
// out under one lock, whole.

#include <memory>
#include <mutex>
#include <string_view>

#include "relay/mcp_relay.h"
#include "util/unique_fd.h"

namespace mcpcell {

class TerminalFilter;

/// One fd that both directions may write whole lines to.
class LineSink {
 public:
  LineSink(int fd, bool owned, bool terminal);
  ~LineSink();
  /// Writes `line` and (unless told not to) a newline; false once the fd failed or was closed.
  bool Write(std::string_view line, bool newline = true);
  void Close();

 private:
  std::mutex mu_;
  int fd_;
  bool owned_;
  std::unique_ptr<TerminalFilter> filter_;  ///< a terminal sees escape sequences, not obeys them
};

/// Client → server: reads `client_in` (polled with `stop`, so the supervisor
/// can end it without touching the terminal's flags) until end of input, then
/// closes the server's stdin and signals `closed`.
void PumpClientToServer(McpRelay* relay, std::size_t max_line, int client_in, int stop, int closed,
                        LineSink* to_server, LineSink* to_client);

/// Server → client: reads the server's stdout until every writer in the cell is gone.
void PumpServerToClient(McpRelay* relay, std::size_t max_line, UniqueFd server_out, LineSink* to_client,
                        LineSink* to_server);

}  // namespace mcpcell
