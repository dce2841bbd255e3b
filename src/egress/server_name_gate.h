#pragma once
// The gate on a tunnel's bytes from the cell. Holds its first flight until
// it shows which TLS server it asks for (tls_client_hello.h), then opens or
// refuses: a ClientHello may name the host the tunnel was opened for, or no
// host. A PostgreSQL SSLRequest passes and the handshake after it is judged
// the same way. A first flight that is no TLS is read line by line
// (http_host_gate.h's HttpStartReader, its bytes passing as they come):
// plain HTTP/1.x keeps the gate for the tunnel's whole life, each request's
// Host judged (HttpHostGate); anything else opens the tunnel. Not read: TLS
// after a text protocol's STARTTLS (SMTP, IMAP, XMPP), docs/THREAT_MODEL.md.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "egress/http_host_gate.h"

namespace mcpcell {

class ServerNameGate {
 public:
  /// `host`: the name (or IP literal) the rules allowed, canonical; `port`:
  /// the tunnel's (a Host header that names a port must name this one);
  /// `how_to_allow`: the advice a refusal gives; `early`: bytes the cell
  /// sent before the tunnel existed (behind its CONNECT or SOCKS5 request).
  /// A host of the host's loopback takes any of its three names (a client
  /// of https://localhost:8443 reaches it as 127.0.0.1 and names localhost).
  ServerNameGate(std::string host, std::uint16_t port, std::string how_to_allow, std::string early)
      : host_(std::move(host)), how_to_allow_(std::move(how_to_allow)), held_(std::move(early)), port_(port) {}

  /// kPassSome: judged bytes pass now and the gate reads on: a PostgreSQL
  /// SSLRequest, empty lines, a first line's early part, plain HTTP
  /// requests judged whole. TakePassable() before the next Decide().
  enum class Verdict { kNeedMore, kOpen, kPassSome, kRefused };

  /// Adds what was read from the cell.
  void Add(std::string_view bytes) { held_.append(bytes); }
  /// Decides on what is held; `eof`: the cell sent all it will.
  Verdict Decide(bool eof);
  /// kOpen: the bytes held, to be passed on in order.
  std::string TakeHeld();
  /// kPassSome: the judged bytes, to be passed on; the gate keeps the rest.
  std::string TakePassable();
  /// kRefused: why (for the denial's rule) and what to do instead.
  const std::string& refusal() const { return refusal_; }
  bool refused() const { return !refusal_.empty(); }
  const std::string& how_to_allow() const { return how_to_allow_; }

 private:
  Verdict Refuse(std::string why);
  /// Once the first flight read as plain HTTP: each request's Host.
  Verdict DecideHttp(bool eof);
  /// A first flight that is no TLS: whether its first line is HTTP.
  Verdict DecideFirstLine(bool eof);

  std::string host_;
  std::string how_to_allow_;
  std::string held_;
  std::string refusal_;
  std::size_t passable_ = 0;
  HttpStartReader start_;               ///< whether a first flight is plain HTTP
  bool reading_line_ = false;           ///< its first line is being read
  std::string line_;                    ///< that line so far, for the parser (its early part passed already)
  std::size_t skip_ = 0;                ///< bytes at held_'s front that passed early
  std::unique_ptr<HttpHostGate> http_;  ///< once the tunnel carries plain HTTP
  std::uint16_t port_;
};

}  // namespace mcpcell
