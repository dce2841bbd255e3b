#include "egress/http_host_gate.h"

#include <limits>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include "egress/dns_name.h"
#include "egress/host_loopback.h"

namespace mcpcell {

namespace http = boost::beast::http;
using boost::beast::error_code;

namespace {

// RFC 9110 section 5.6.2: the characters of a method (a token).
bool IsTchar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool IsCapital(unsigned char c) { return (c >= 'A' && c <= 'Z') || c == '_' || c == '-'; }

// What some server takes for the blank between a request line's parts:
// python's str.split() (SP, HTAB, VT, FF, CR, FS..US, NEL, NBSP in
// ISO-8859-1), RFC 9112 section 3's lenient parsers (SP, HTAB, VT, FF, CR).
bool IsBlank(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || (c >= 0x1c && c <= 0x1f) || c == 0x85 ||
         c == 0xa0;
}

std::size_t SkipEmptyLines(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size() && (bytes[i] == '\r' || bytes[i] == '\n')) ++i;
  return i;
}

// The Host header or an absolute-form target's authority names the tunnel's
// host: the name as the rules hold it (any case, no trailing dot; any of the
// three loopback names for a host of the host's loopback) and, when it says
// one, the tunnel's port in plain digits. Strict, because a server that
// routes on the exact string serves its default site for another spelling.
bool NamesTunnelHost(std::string_view authority, const std::string& host, std::uint16_t port) {
  std::vector<std::string> names;
  if (IsLoopbackName(host)) {
    names = {"localhost", "127.0.0.1", "[::1]"};
  } else {
    names = {host.find(':') != std::string::npos ? "[" + host + "]" : host};
  }
  boost::beast::string_view a(authority.data(), authority.size());
  for (const auto& n : names) {
    if (boost::beast::iequals(a, n) || boost::beast::iequals(a, n + ":" + std::to_string(port))) return true;
  }
  return false;
}

bool Bodiless(http::verb v) {
  return v == http::verb::get || v == http::verb::head || v == http::verb::options || v == http::verb::trace ||
         v == http::verb::delete_;
}

}  // namespace

HttpStart HttpStartReader::LineEnded() const {
  // A whole line that no server reads as a request (they answer 400 and
  // close): another protocol.
  return HttpStart::kOther;
}

HttpStart HttpStartReader::Read(std::string_view more, bool eof) {
  constexpr std::string_view kVersionStart = "http/";
  for (char ch : more) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '\n') return LineEnded();
    switch (part_) {
      case Part::kLead:
        if (IsBlank(c)) continue;  // python strips blanks before the method
        if (!IsTchar(c)) return HttpStart::kOther;
        part_ = Part::kMethod;
        [[fallthrough]];
      case Part::kMethod:
        if (IsTchar(c)) {
          capitals_only_ = capitals_only_ && IsCapital(c);
          if (method_len_ < sizeof method_start_) method_start_[method_len_] = ch;
          ++method_len_;
          continue;
        }
        // A byte no server takes after a method: binary, another protocol.
        if (!IsBlank(c)) return HttpStart::kOther;
        // "GET target": HTTP/0.9 too, which names no host.
        if (method_len_ == 3 && std::string_view(method_start_, 3) == "GET") return HttpStart::kHttp;
        part_ = Part::kGap1;
        continue;
      case Part::kGap1:
        if (!IsBlank(c)) part_ = Part::kTarget;
        continue;
      case Part::kTarget:
        if (IsBlank(c)) part_ = Part::kGap2;
        continue;  // python takes control bytes in a path
      case Part::kGap2:
        if (IsBlank(c)) continue;
        part_ = Part::kVersion;
        version_matched_ = 0;
        [[fallthrough]];
      case Part::kVersion:
        if (static_cast<char>(c >= 'A' && c <= 'Z' ? c | 0x20 : c) == kVersionStart[version_matched_]) {
          if (++version_matched_ == kVersionStart.size()) return HttpStart::kHttp;
          continue;
        }
        // nginx reads a target with blanks in it when the method is in
        // capitals: only a later "HTTP/" on the line tells.
        if (!capitals_only_) return HttpStart::kOther;
        part_ = IsBlank(c) ? Part::kGap2 : Part::kTarget;
        continue;
    }
  }
  // A partial line asks nothing of anyone. No length decides: Go reads a
  // request line of up to 1 MiB, and the bytes pass on as they come.
  return eof ? HttpStart::kOther : HttpStart::kNeedMore;
}

// Observes one request; sets why_ (and an error) for what the gate refuses.
class HttpHostGate::Parser : public http::basic_parser<true> {
 public:
  Parser(const std::string& host, std::uint16_t port) : host_(host), port_(port) {
    header_limit(static_cast<std::uint32_t>(kHttpHoldLimit));
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
    method_ = method;
    if (version != 10 && version != 11) return Refuse("the request is HTTP/" + std::to_string(version / 10) + "." +
                                                      std::to_string(version % 10) + ", not HTTP/1.x", ec);
    if (method == http::verb::connect) return Refuse("a CONNECT inside the tunnel would make the server a proxy", ec);
    if (t == "*" || (!t.empty() && t.front() == '/')) return;
    auto scheme_end = t.find("://");
    if (scheme_end == std::string_view::npos) {
      return Refuse("the request target \"" + PrintableBytes(t, 64) + "\" is neither a path nor an absolute URL", ec);
    }
    std::string_view rest = t.substr(scheme_end + 3);
    // Up to the path only: "http://allowed?@other/" is refused rather than
    // trusted to be read alike by every server (adversary pass 4).
    std::string_view authority = rest.substr(0, rest.find('/'));
    if (!NamesTunnelHost(authority, host_, port_)) {
      return Refuse("the request's absolute URL names \"" + PrintableBytes(authority, 253) + "\"", ec);
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
        has_body_ = has_body_ || value.find_first_not_of('0') != boost::string_view::npos;
        return;
      case http::field::transfer_encoding:
        // Only the one coding every server reads alike: a list, or another
        // coding, is where servers disagree on a body's end (smuggling).
        if (++codings_ > 1 || !boost::beast::iequals(value, "chunked")) {
          Refuse("the request's Transfer-Encoding is not exactly \"chunked\" (its end is ambiguous)", ec);
        }
        has_body_ = true;
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
    if (!NamesTunnelHost(host_header_, host_, port_)) {
      return Refuse("the request's Host header names \"" + PrintableBytes(host_header_, 253) + "\"", ec);
    }
    // A server that answers a GET without reading its body reads the body
    // as the next request (python's http.server does): judged unread.
    if (Bodiless(method_) && has_body_) {
      Refuse(std::string("the request is a ") + std::string(http::to_string(method_)) +
                 " with a body, which a server that does not read it takes for the next request",
             ec);
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
  bool has_body_ = false;
  http::verb method_ = http::verb::unknown;
};

HttpHostGate::HttpHostGate(std::string host, std::uint16_t port) : host_(std::move(host)), port_(port) {}
HttpHostGate::~HttpHostGate() = default;

namespace {

HttpHostGate::Step Refused(std::string why) { return {HttpHostGate::Step::Kind::kRefused, 0, std::move(why)}; }

}  // namespace

HttpHostGate::Step HttpHostGate::Wait(std::string_view bytes, std::size_t judged, std::size_t fed, bool eof) {
  if (!parser_->is_header_done()) {
    // The head passes on only once it is judged whole; the parser has read
    // `fed` bytes of it, which are not given to it again.
    head_fed_ = fed;
    if (eof) return Refused("the connection closed in the middle of an HTTP request's head");
  } else {
    head_fed_ = 0;
  }
  // What the parser holds back (a head, a chunk line, a trailer) is bounded.
  if (bytes.size() - judged > kHttpHoldLimit) {
    return Refused("more than " + std::to_string(kHttpHoldLimit / 1024) +
                   " KiB of a request's head, chunk line or trailer came without its end");
  }
  return {Step::Kind::kPass, judged, {}};
}

HttpHostGate::Step HttpHostGate::Read(std::string_view bytes, bool eof) {
  std::size_t at = 0;  // judged: may go on
  std::size_t fed = parser_ && !parser_->is_header_done() ? head_fed_ : 0;  // read by the parser beyond `at`
  for (;;) {
    if (!parser_) {
      at += SkipEmptyLines(bytes.substr(at));  // servers skip them before a request line
      if (at == bytes.size()) return {Step::Kind::kPass, at, {}};
      parser_ = std::make_unique<Parser>(host_, port_);
      fed = 0;
    }
    if (at + fed == bytes.size()) return Wait(bytes, at, fed, eof);
    error_code ec;
    std::size_t used = parser_->put(boost::asio::const_buffer(bytes.data() + at + fed, bytes.size() - at - fed), ec);
    fed += used;
    if (ec && ec != http::error::need_more) {
      if (parser_->why().empty() && bytes.substr(at).starts_with("PRI * HTTP/2")) {
        return Refused("plain-text HTTP/2 names its host inside compressed frames the proxy does not read (use TLS, "
                       "or HTTP/1.1)");
      }
      return Refused(parser_->why().empty() ? "the HTTP request cannot be read whole (" + ec.message() +
                                                  "), so the host it asks for is unknown"
                                            : parser_->why());
    }
    if (parser_->is_header_done()) {  // judged whole: the head and the body read so far go on
      at += fed;
      fed = 0;
    }
    if (ec == http::error::need_more) return Wait(bytes, at, fed, eof);
    if (parser_->is_done()) {
      bool upgrade = parser_->asked_upgrade();
      parser_.reset();
      head_fed_ = 0;
      // What follows an upgrade is another protocol, or HTTP again if the
      // server declined: judged as a first flight (server_name_gate.h).
      if (upgrade) return {Step::Kind::kUpgraded, at, {}};
      continue;
    }
    if (used == 0) return Wait(bytes, at, fed, eof);
  }
}

}  // namespace mcpcell
