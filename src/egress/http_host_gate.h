#pragma once
// Plain HTTP/1.x inside a tunnel: every request must name the host the
// tunnel was allowed for. A server that hosts several sites picks one by the
// Host header (or an absolute-form target), so a tunnel opened for the npm
// registry could otherwise ask the registry's server for its other virtual
// hosts (adversary pass 3, 2026-11-28). The stream is parsed request by
// request (Boost.Beast's parser: heads, Content-Length and chunked bodies) so
// a second request of a keep-alive connection is judged like the first; its
// bytes are only observed, never rewritten.
//
// What cannot be judged is refused, not passed: a request with no Host or two,
// a CONNECT (the server would become a proxy), HTTP/0.9 and plain-text
// HTTP/2 (they name the host nowhere or inside compressed frames), an
// ambiguous body length (the server could read a hidden request in it). After
// a request that asked to upgrade (WebSocket), bytes that cannot begin an
// HTTP request are the new protocol: the stream passes on unjudged, as a
// server that declined the upgrade reads such bytes as a bad request.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace mcpcell {

/// Whether a tunnel's first bytes (after any empty lines) begin an HTTP/1.x
/// request line ("METHOD target HTTP/"), or an HTTP/0.9 "GET target". A
/// method is read in capitals (what every server takes); a first word in
/// lower case is another protocol (docs/THREAT_MODEL.md: the residual).
enum class HttpStart : std::uint8_t { kNeedMore, kHttp, kOther };
HttpStart ClassifyHttpStart(std::string_view bytes, bool eof);

class HttpHostGate {
 public:
  /// `host`: canonical, as the rules allowed it; `port`: the tunnel's.
  HttpHostGate(std::string host, std::uint16_t port);
  ~HttpHostGate();
  HttpHostGate(const HttpHostGate&) = delete;
  HttpHostGate& operator=(const HttpHostGate&) = delete;

  struct Step {
    enum class Kind : std::uint8_t { kPass, kOpaque, kRefused } kind = Kind::kPass;
    /// kPass: how many of the bytes given are judged and may go on (0: the
    /// gate needs more). kOpaque: the rest is another protocol, all of it passes.
    std::size_t judged = 0;
    std::string why;  ///< kRefused
  };

  /// Reads `bytes` (what the cell sent and was not yet judged); `eof`: the
  /// cell sent all it will.
  Step Read(std::string_view bytes, bool eof);

 private:
  class Parser;
  std::string host_;
  std::uint16_t port_;
  std::unique_ptr<Parser> parser_;  ///< only in the middle of a request
  bool upgrade_asked_ = false;      ///< the last whole request asked to upgrade
};

}  // namespace mcpcell
