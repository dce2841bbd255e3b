#pragma once
// Holds a tunnel's first bytes from the cell until they show which TLS
// server they ask for (tls_client_hello.h), then opens or refuses: a
// ClientHello may name the host the tunnel was opened for, or no host; a
// first flight that is no TLS handshake at all passes as it is (plain HTTP,
// SSH, a server that speaks first), except a PostgreSQL SSLRequest, after
// which it reads on. Lives only until it decides. Not read: TLS after a
// text protocol's STARTTLS (SMTP, IMAP, XMPP), docs/THREAT_MODEL.md.

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

  /// kPassSome: a preamble after which TLS may start (a PostgreSQL
  /// SSLRequest) passes now, and what follows is judged as a first flight;
  /// or plain HTTP requests judged whole, and the gate reads on.
  enum class Verdict { kNeedMore, kOpen, kPassSome, kRefused };

  /// Adds what was read from the cell.
  void Add(std::string_view bytes) { held_.append(bytes); }
  /// Decides on what is held; `eof`: the cell sent all it will.
  Verdict Decide(bool eof);
  /// kOpen: the bytes held, to be passed on in order.
  std::string TakeHeld();
  /// kPassSome: the preamble, to be passed on; the gate keeps the rest.
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
