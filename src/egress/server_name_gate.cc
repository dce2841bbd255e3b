#include "egress/server_name_gate.h"

#include <algorithm>

#include "egress/dns_name.h"
#include "egress/host_loopback.h"
#include "egress/tls_client_hello.h"

namespace mcpcell {

ServerNameGate::Verdict ServerNameGate::Refuse(std::string why) {
  refusal_ = std::move(why);
  held_.clear();
  line_.clear();
  return Verdict::kRefused;
}

namespace {

// PostgreSQL's SSLRequest and GSSENCRequest (protocol 3, "Message Formats"):
// once the server answers 'S' the TLS handshake follows on the same
// connection, so the request passes and the gate reads on (adversary pass 2
// of 2026-11-28: a Postgres front that routes by server name).
constexpr std::string_view kPostgresSslRequest("\0\0\0\x08\x04\xd2\x16\x2f", 8);
constexpr std::string_view kPostgresGssEncRequest("\0\0\0\x08\x04\xd2\x16\x30", 8);

}  // namespace

std::string ServerNameGate::TakePassable() {
  // A judged request is passed from where the early part of its first line ended.
  std::string part = held_.substr(skip_, passable_ - std::min(skip_, passable_));
  held_.erase(0, passable_);
  passable_ = 0;
  skip_ = 0;
  return part;
}

std::string ServerNameGate::TakeHeld() {
  held_.erase(0, std::min(skip_, held_.size()));
  skip_ = 0;
  return std::move(held_);
}

ServerNameGate::Verdict ServerNameGate::DecideHttp(bool eof) {
  HttpHostGate::Step step = http_->Read(held_, eof);
  switch (step.kind) {
    case HttpHostGate::Step::Kind::kRefused:
      return Refuse("plain HTTP sent to " + host_ + ": " + step.why + "; a connection carries requests for the host "
                    "it was allowed for only (a shared server would answer for that other site)");
    case HttpHostGate::Step::Kind::kUpgraded:
      // WebSocket, TLS (RFC 2817) or HTTP again if the server declined:
      // what follows is read as a first flight.
      http_.reset();
      start_ = HttpStartReader();
      line_.clear();
      reading_line_ = false;
      passable_ = step.judged;
      return Verdict::kPassSome;
    case HttpHostGate::Step::Kind::kPass:
      break;
  }
  if (step.judged > 0) {
    passable_ = step.judged;
    return Verdict::kPassSome;
  }
  if (!eof) return Verdict::kNeedMore;
  if (held_.empty()) return Verdict::kOpen;  // the EOF passes on
  return Refuse("the connection to " + host_ + " closed in the middle of a plain-HTTP request");
}

ServerNameGate::Verdict ServerNameGate::DecideFirstLine(bool eof) {
  // Every byte held is new to the reader: it passed all it had read before.
  std::string_view fresh(held_);
  HttpStart start = start_.Read(fresh, eof);
  reading_line_ = true;
  // The parser will want the line from its first byte: a copy is kept, up
  // to what any head may hold.
  if (line_.size() <= kHttpHoldLimit) line_.append(fresh.substr(0, kHttpHoldLimit + 1 - line_.size()));
  switch (start) {
    case HttpStart::kNeedMore:
      // No server acts on a request line before its end: what came so far
      // passes now, so a word sent without a newline ("ping") is not held.
      if (held_.empty()) return Verdict::kNeedMore;
      passable_ = held_.size();
      return Verdict::kPassSome;
    case HttpStart::kOther:
      line_.clear();
      reading_line_ = false;
      return Verdict::kOpen;
    case HttpStart::kHttp:
      break;
  }
  if (line_.size() > kHttpHoldLimit) return Refuse("its first line, over 64 KiB, reads as an HTTP request");
  // The parser reads the line from its first byte; what of it passed
  // already is not passed again (TakePassable skips it).
  skip_ = line_.size() - held_.size();
  held_ = std::move(line_);
  line_.clear();
  reading_line_ = false;
  http_ = std::make_unique<HttpHostGate>(host_, port_);
  return DecideHttp(eof);
}

ServerNameGate::Verdict ServerNameGate::Decide(bool eof) {
  if (http_) return DecideHttp(eof);
  if (reading_line_) return DecideFirstLine(eof);  // a first line is being read: only it decides
  // Empty lines first: servers skip them before a request line. They pass
  // on as they come, so an endless run of them is neither held nor read twice.
  std::size_t blank = 0;
  while (blank < held_.size() && (held_[blank] == '\r' || held_[blank] == '\n')) ++blank;
  if (blank > 0) {
    passable_ = blank;
    return Verdict::kPassSome;
  }
  for (std::string_view preamble : {kPostgresSslRequest, kPostgresGssEncRequest}) {
    std::string_view head = std::string_view(held_).substr(0, preamble.size());
    if (head != preamble.substr(0, head.size()) || held_.empty()) continue;
    if (head.size() == preamble.size()) {
      passable_ = preamble.size();
      return Verdict::kPassSome;
    }
    if (!eof) return Verdict::kNeedMore;  // a preamble sent byte by byte is still one
  }
  ClientHelloRead hello = ReadClientHello(held_);
  switch (hello.kind) {
    case ClientHelloRead::Kind::kNotTls:
      return DecideFirstLine(eof);
    case ClientHelloRead::Kind::kNeedMore:
      if (held_.empty() && eof) return Verdict::kOpen;  // nothing sent: the EOF passes on
      if (!eof) return Verdict::kNeedMore;
      return Refuse("the connection to " + host_ + " closed in the middle of its TLS ClientHello");
    case ClientHelloRead::Kind::kMalformed:
      return Refuse("the TLS ClientHello sent to " + host_ + " cannot be read whole (" + hello.why +
                    "), so the server it names is unknown");
    case ClientHelloRead::Kind::kHello:
      break;
  }
  if (!hello.server_name) return Verdict::kOpen;
  // Compared in the canonical form every name a cell sends is judged in.
  auto name = CanonicalHost(*hello.server_name, nullptr);
  if (name && (*name == host_ || (IsLoopbackName(host_) && IsLoopbackName(*name)))) return Verdict::kOpen;
  return Refuse("the TLS ClientHello names server \"" + PrintableBytes(*hello.server_name, 253) +
                "\", not " + host_ + ", the host this connection was allowed for (a shared front would route it "
                "to that other site)");
}

}  // namespace mcpcell
