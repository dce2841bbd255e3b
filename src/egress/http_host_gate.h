#pragma once
// Plain HTTP/1.x inside a tunnel: every request must name the host the
// tunnel was allowed for. A server that hosts several sites picks one by the
// Host header (or an absolute-form target), so a tunnel opened for the npm
// registry could otherwise ask the registry's server for its other virtual
// hosts (adversary pass 3, 2026-11-28). The stream is parsed request by
// request (Boost.Beast's parser: heads, Content-Length and chunked bodies) so
// a second request of a keep-alive connection is judged like the first; its
// bytes are only observed, never rewritten, and a request's head passes on
// only once it is judged whole.
//
// What cannot be judged is refused, not passed: a request with no Host or two,
// a CONNECT (the server would become a proxy), HTTP/0.9 and plain-text
// HTTP/2 (they name the host nowhere or inside compressed frames), an
// ambiguous body length (the server could read a hidden request in it), a
// body on GET, HEAD, OPTIONS, TRACE or DELETE (a server that does not read it
// reads it as the next request), more than 64 KiB held unjudged. After a
// request that asked to upgrade (WebSocket, TLS), what follows is judged as a
// tunnel's first bytes again (server_name_gate.h).
//
// Which first bytes are HTTP (HttpStartReader): servers read request lines
// loosely, each its own way (adversary pass 4: nginx takes spaces inside the
// target, Go lower-case and any-length methods, python any whitespace,
// control bytes in the path and blanks before the method), so a line is
// taken for another protocol only when no server here reads it as a request.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace mcpcell {

/// More than this held without a verdict is refused: a request head, a
/// chunk line or a first line that long is no client's.
inline constexpr std::size_t kHttpHoldLimit = 64 * 1024;

enum class HttpStart : std::uint8_t { kNeedMore, kHttp, kOther };

/// Reads a tunnel's first line (leading empty lines already passed on) as
/// it comes: each call reads only the bytes that arrived since the last, so
/// a line dripped byte by byte costs linear time and the line need not be
/// kept. kHttp as soon as some server would read a request line (a method
/// and "HTTP/", or "GET "), kOther as soon as none would, kNeedMore
/// otherwise (at most until the line's end).
class HttpStartReader {
 public:
  HttpStart Read(std::string_view more, bool eof);

 private:
  enum class Part : std::uint8_t { kLead, kMethod, kGap1, kTarget, kGap2, kVersion };
  HttpStart LineEnded() const;

  Part part_ = Part::kLead;
  std::size_t method_len_ = 0;
  char method_start_[3] = {};
  std::size_t version_matched_ = 0;
  bool capitals_only_ = true;  ///< a method nginx reads: [A-Z_-]; it takes blanks inside a target
};

class HttpHostGate {
 public:
  /// `host`: canonical, as the rules allowed it; `port`: the tunnel's.
  HttpHostGate(std::string host, std::uint16_t port);
  ~HttpHostGate();
  HttpHostGate(const HttpHostGate&) = delete;
  HttpHostGate& operator=(const HttpHostGate&) = delete;

  struct Step {
    /// kPass: `judged` bytes may go on (0: it needs more). kUpgraded: the
    /// `judged` bytes end with a request that asked to upgrade: what follows
    /// is judged as a first flight again. kRefused: `why`.
    enum class Kind : std::uint8_t { kPass, kUpgraded, kRefused } kind = Kind::kPass;
    std::size_t judged = 0;
    std::string why;
  };

  /// Reads `bytes` (what the cell sent and was not yet judged: the same
  /// first bytes as at the last call, and maybe more); `eof`: the cell sent
  /// all it will.
  Step Read(std::string_view bytes, bool eof);

 private:
  class Parser;
  /// Nothing more to read now: passes `judged`, keeps the rest (bounded).
  Step Wait(std::string_view bytes, std::size_t judged, std::size_t fed, bool eof);

  std::string host_;
  std::uint16_t port_;
  std::unique_ptr<Parser> parser_;  ///< only in the middle of a request
  std::size_t head_fed_ = 0;        ///< bytes of an unjudged head the parser already read
};

}  // namespace mcpcell
