#include "egress/http_host_gate.h"

#include <limits>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include "egress/dns_name.h"
#include "egress/host_loopback.h"
#include "egress/http_target.h"

namespace mcpcell {

namespace http = boost::beast::http;
using boost::beast::error_code;

namespace {

// A request head larger than this is refused (Beast's header_limit): servers
// keep theirs at 8-64 KiB, and the gate holds a head whole while it waits.
constexpr std::uint32_t kHeadLimit = 64 * 1024;

// RFC 9110 section 5.6.2: the characters of a method (a token).
bool IsTchar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

// The longest registered method is 17 characters (UPDATEREDIRECTREF, RFC 5842).
constexpr std::size_t kLongestMethod = 24;

bool IsMethodChar(char c) { return (c >= 'A' && c <= 'Z') || c == '_' || c == '-'; }

// What lenient servers take for the space between the request line's parts
// (RFC 9112 section 3: SP, HTAB, VT, FF, bare CR).
bool IsLineSpace(unsigned char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

bool ContainsHttpSlash(std::string_view line) {
  for (std::size_t i = 0; i + 5 <= line.size(); ++i) {
    std::string_view s = line.substr(i, 5);
    if ((s[0] | 0x20) == 'h' && (s[1] | 0x20) == 't' && (s[2] | 0x20) == 't' && (s[3] | 0x20) == 'p' && s[4] == '/') {
      return true;
    }
  }
  return false;
}

std::size_t SkipEmptyLines(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size() && (bytes[i] == '\r' || bytes[i] == '\n')) ++i;
  return i;
}

// The Host header or an absolute-form target's authority names the tunnel's
// host: the same canonical name (any of the three loopback names for a host
// of the host's loopback) and, when it says one, the tunnel's port.
bool NamesTunnelHost(std::string_view authority, const std::string& host, std::uint16_t port, std::string* why) {
  auto named = ParseAuthority(authority, port, why);
  if (!named) return false;
  if (named->host != host && !(IsLoopbackName(host) && IsLoopbackName(named->host))) return false;
  return named->port == port;
}

}  // namespace

HttpStart ClassifyHttpStart(std::string_view bytes, bool eof) {
  std::string_view line = bytes.substr(SkipEmptyLines(bytes));
  if (line.empty()) return eof ? HttpStart::kOther : HttpStart::kNeedMore;
  bool whole = false;
  if (auto lf = line.find('\n'); lf != std::string_view::npos) {
    line = line.substr(0, lf);
    whole = true;
  }
  // A method as the servers that read request lines loosely (nginx) accept
  // it: capitals, '_' and '-'. A first word in lower case or with digits
  // ("ping", "x", "SSH-2.0-...") is taken for another protocol at once, so a
  // tunnel that carries one is not held waiting for a line end.
  std::size_t method = 0;
  while (method < line.size() && method <= kLongestMethod && IsMethodChar(line[method])) ++method;
  if (method == 0 || method > kLongestMethod) return HttpStart::kOther;
  if (method == line.size()) return whole || eof ? HttpStart::kOther : HttpStart::kNeedMore;
  if (!IsLineSpace(static_cast<unsigned char>(line[method]))) return HttpStart::kOther;
  // "GET target": HTTP/0.9, which names no host (a server answers from its default site).
  if (line.substr(0, method) == "GET") return HttpStart::kHttp;
  // The target may hold spaces (nginx reads "PUT /a b HTTP/1.1"): only the
  // line's end tells, so it is waited for.
  if (ContainsHttpSlash(line.substr(method))) return HttpStart::kHttp;
  if (whole || eof) return HttpStart::kOther;
  if (line.size() >= kHeadLimit) return HttpStart::kHttp;  // the parser refuses it
  for (char c : line) {
    // A control byte ends any request line (RFC 9112 section 3): binary.
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && !IsLineSpace(u)) || u == 0x7f) return HttpStart::kOther;
  }
  return HttpStart::kNeedMore;
}

// Observes one request; sets why_ (and an error) for what the gate refuses.
class HttpHostGate::Parser : public http::basic_parser<true> {
 public:
  Parser(const std::string& host, std::uint16_t port) : host_(host), port_(port) {
    header_limit(kHeadLimit);
    // Bodies are only counted past, never held. Not boost::none: Boost
    // 1.74 compares a Content-Length with an empty optional as "over".
    body_limit(std::numeric_limits<std::uint64_t>::max());
    eager(true);
  }
  const std::string& why() const { return why_; }
  bool asked_upgrade() const { return upgrade_; }

 private:
  void Refuse(std::string why, error_code& ec) {
    why_ = std::move(why);
    ec = http::error::bad_field;
  }

  void on_request_impl(http::verb method, boost::string_view, boost::string_view target, int version,
                       error_code& ec) override {
    std::string_view t(target.data(), target.size());
    if (version != 10 && version != 11) return Refuse("the request is HTTP/" + std::to_string(version / 10) + "." +
                                                      std::to_string(version % 10) + ", not HTTP/1.x", ec);
    if (method == http::verb::connect) return Refuse("a CONNECT inside the tunnel would make the server a proxy", ec);
    if (t == "*" || (!t.empty() && t.front() == '/')) return;
    auto scheme_end = t.find("://");
    if (scheme_end == std::string_view::npos) {
      return Refuse("the request target \"" + PrintableBytes(t, 64) + "\" is neither a path nor an absolute URL", ec);
    }
    std::string_view rest = t.substr(scheme_end + 3);
    std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
    std::string problem;
    if (!NamesTunnelHost(authority, host_, port_, &problem)) {
      return Refuse("the request's absolute URL names \"" + PrintableBytes(authority, 253) + "\"" +
                    (problem.empty() ? "" : " (" + problem + ")"), ec);
    }
  }

  void on_response_impl(int, boost::string_view, int, error_code&) override {}

  void on_field_impl(http::field name, boost::string_view, boost::string_view value, error_code& ec) override {
    switch (name) {
      case http::field::host:
        ++hosts_;
        host_header_.assign(value.data(), value.size());
        return;
      case http::field::content_length:
        if (++lengths_ > 1 || value.find(',') != boost::string_view::npos) {
          Refuse("the request has more than one Content-Length (its end is ambiguous)", ec);
        }
        return;
      case http::field::transfer_encoding:
        // Only the one coding every server reads alike: a list, or another
        // coding, is where servers disagree on a body's end (smuggling).
        if (++codings_ > 1 || !boost::beast::iequals(value, "chunked")) {
          Refuse("the request's Transfer-Encoding is not exactly \"chunked\" (its end is ambiguous)", ec);
        }
        return;
      case http::field::upgrade:
        upgrade_ = true;
        return;
      default:
        return;
    }
  }

  void on_header_impl(error_code& ec) override {
    if (lengths_ > 0 && codings_ > 0) {
      return Refuse("the request has both Content-Length and Transfer-Encoding (its end is ambiguous)", ec);
    }
    if (hosts_ != 1) {
      return Refuse(hosts_ == 0 ? "the request has no Host header (the server would pick a site itself)"
                                : "the request has more than one Host header", ec);
    }
    std::string problem;
    if (!NamesTunnelHost(host_header_, host_, port_, &problem)) {
      Refuse("the request's Host header names \"" + PrintableBytes(host_header_, 253) + "\"" +
             (problem.empty() ? "" : " (" + problem + ")"), ec);
    }
  }

  void on_body_init_impl(const boost::optional<std::uint64_t>&, error_code&) override {}
  std::size_t on_body_impl(boost::string_view body, error_code&) override { return body.size(); }
  void on_chunk_header_impl(std::uint64_t, boost::string_view, error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, boost::string_view body, error_code&) override { return body.size(); }
  void on_finish_impl(error_code&) override {}

  const std::string& host_;
  std::uint16_t port_;
  std::string host_header_;
  std::string why_;
  int hosts_ = 0, lengths_ = 0, codings_ = 0;
  bool upgrade_ = false;
};

HttpHostGate::HttpHostGate(std::string host, std::uint16_t port) : host_(std::move(host)), port_(port) {}
HttpHostGate::~HttpHostGate() = default;

HttpHostGate::Step HttpHostGate::Read(std::string_view bytes, bool eof) {
  std::size_t at = 0;
  for (;;) {
    if (!parser_) {
      at += SkipEmptyLines(bytes.substr(at));  // servers skip them before a request line
      if (at == bytes.size()) return {Step::Kind::kPass, at, {}};
      // After an upgrade, the new protocol's bytes begin no request line (a
      // WebSocket frame's first byte is no token character); a server that
      // declined the upgrade reads them as a bad request and stops.
      if (upgrade_asked_ && !IsTchar(static_cast<unsigned char>(bytes[at])) &&
          !IsLineSpace(static_cast<unsigned char>(bytes[at]))) {
        return {Step::Kind::kOpaque, bytes.size(), {}};
      }
      upgrade_asked_ = false;
      parser_ = std::make_unique<Parser>(host_, port_);
    }
    if (at == bytes.size()) return {Step::Kind::kPass, at, {}};
    error_code ec;
    std::size_t used = parser_->put(boost::asio::const_buffer(bytes.data() + at, bytes.size() - at), ec);
    at += used;
    if (ec == http::error::need_more) {
      if (eof && !parser_->is_header_done()) {
        return {Step::Kind::kRefused, 0, "the connection closed in the middle of an HTTP request's head"};
      }
      return {Step::Kind::kPass, at, {}};
    }
    if (ec) {
      if (parser_->why().empty() && bytes.substr(at).starts_with("PRI * HTTP/2")) {
        return {Step::Kind::kRefused, 0, "plain-text HTTP/2 names its host inside compressed frames the proxy does "
                                         "not read (use TLS, or HTTP/1.1)"};
      }
      std::string why = parser_->why().empty()
                            ? "the HTTP request cannot be read whole (" + ec.message() + "), so the host it asks "
                              "for is unknown"
                            : parser_->why();
      return {Step::Kind::kRefused, 0, std::move(why)};
    }
    if (parser_->is_done()) {
      upgrade_asked_ = parser_->asked_upgrade();
      parser_.reset();
      continue;
    }
    if (used == 0) return {Step::Kind::kPass, at, {}};
  }
}

}  // namespace mcpcell
