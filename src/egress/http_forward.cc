// Absolute-form plain HTTP: GET http://host/path → decision → one request to
// the upstream with Connection: close → its response streamed back. One
// request per client connection and per upstream connection: simple, and a
// second request can never ride on a connection decided for the first.

#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include <chrono>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>
#include <strings.h>

#include "egress/http_proxy.h"
#include "egress/http_target.h"
#include "egress/tunnel.h"
#include "egress/upstream.h"

namespace mcpcell {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// Request bodies are read whole before forwarding (they are rare and small
// for plain HTTP; HTTPS goes through CONNECT untouched).
constexpr std::uint64_t kBodyLimit = 16 * 1024 * 1024;
constexpr std::uint32_t kHeadLimit = 64 * 1024;

std::string_view Std(boost::beast::string_view s) { return {s.data(), s.size()}; }

template <bool isRequest>
std::string ConnectionTokens(const http::header<isRequest>& h) {
  std::string tokens;
  auto range = h.equal_range(http::field::connection);
  for (auto it = range.first; it != range.second; ++it) tokens += std::string(it->value()) + ",";
  return tokens;
}

http::request<http::string_body> UpstreamRequest(const http::request<http::string_body>& in,
                                                 const HttpTarget& target) {
  http::request<http::string_body> out;
  out.method_string(in.method_string());
  out.target(target.origin_form);
  out.version(11);
  std::string tokens = ConnectionTokens(in);
  for (const auto& f : in) {
    if (IsHopByHop(Std(f.name_string()), tokens) || f.name() == http::field::host || f.name() == http::field::expect) {
      continue;
    }
    out.insert(f.name_string(), f.value());
  }
  std::string authority = FormatHostPort(target.where);
  if (target.where.port == 80) authority.resize(authority.rfind(':'));
  out.set(http::field::host, authority);
  out.set(http::field::connection, "close");
  out.body() = in.body();
  out.prepare_payload();
  return out;
}

/// The upstream's response head as it goes to the client: hop-by-hop fields
/// that concern the connection go; the body framing (Content-Length,
/// Transfer-Encoding, Trailer) stays, because the body is passed through as is.
std::string ClientResponseHead(http::response_header<>& res) {
  std::string tokens = ConnectionTokens(res);
  std::vector<std::string> drop;
  for (const auto& f : res) {
    auto name = f.name_string();
    bool framing = f.name() == http::field::transfer_encoding || f.name() == http::field::trailer;
    if (!framing && IsHopByHop(Std(name), tokens)) drop.emplace_back(name);
  }
  for (const auto& name : drop) res.erase(name);
  res.set(http::field::connection, "close");
  std::ostringstream os;
  os << res;
  return os.str();
}

}  // namespace

asio::awaitable<void> ServeForward(ProxyContext& ctx, beast::tcp_stream& client, beast::flat_buffer& buffer,
                                   std::unique_ptr<RequestHeadParser> parser) {
  std::string why;
  auto start = std::chrono::steady_clock::now();
  EgressAttempt a;
  auto target = ParseHttpTarget(Std(parser->get().target()), &why);
  if (!target) {
    std::string_view raw = Std(parser->get().target());
    if (raw.size() >= 7 && strncasecmp(raw.data(), "http://", 7) == 0) {
      // An http:// URL whose host the proxy refused: an attempt, audited.
      a.via = "http";
      DenyInvalidName(a, raw.substr(7, raw.find_first_of("/?#", 7) - 7), why);
      FinishAttempt(ctx, a, start);
    }
    // Arguments to a coroutine are named locals, never temporaries built in
    // the call: GCC 12 destroys some such temporaries twice (double free).
    std::string body = "mcpcell egress proxy: " + why;
    co_await WriteSimpleResponse(client, http::status::bad_request, std::move(body));
    co_return;
  }
  a.via = "http";
  a.host = target->where.host;
  a.port = target->where.port;
  std::string host_header(parser->get()[http::field::host]);
  if (HostHeaderRefused(a, host_header, target->where, 80, "the URL's host", FormatHostPort(target->where))) {
    FinishAttempt(ctx, a, start);
    std::string body = EgressAudit::DenialSentence(a);
    co_await WriteSimpleResponse(client, http::status::bad_request, std::move(body));
    co_return;
  }
  Upstream up = co_await OpenUpstream(ctx, a);
  if (!up.socket) {
    FinishAttempt(ctx, a, start);
    HttpRefusal refusal = RefusalFor(up, a);
    co_await WriteSimpleResponse(client, refusal.status, std::move(refusal.body));
    co_return;
  }
  bool responded = false;
  http::status failure = http::status::bad_gateway;
  try {
    // Beast 1.74 checks a Content-Length against the body limit only when the
    // head is parsed (before the limit below is set), so check it here.
    if (auto length = parser->content_length(); length && *length > kBodyLimit) {
      failure = http::status::payload_too_large;
      throw std::length_error(fmt::format("request body of {} bytes is over the {} MiB limit for plain HTTP "
                                          "(use HTTPS: CONNECT tunnels have no limit)",
                                          *length, kBodyLimit >> 20));
    }
    if (beast::iequals(parser->get()[http::field::expect], "100-continue")) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      co_await asio::async_write(client.socket(), asio::buffer(kContinue), asio::use_awaitable);
    }
    http::request_parser<http::string_body> body_parser(std::move(*parser));
    parser.reset();
    body_parser.body_limit(kBodyLimit);
    boost::system::error_code ec;
    co_await http::async_read(client, buffer, body_parser, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == http::error::body_limit) failure = http::status::payload_too_large;
      throw boost::system::system_error(ec, "reading the request body");
    }
    client.expires_never();
    auto request = UpstreamRequest(body_parser.get(), *target);
    beast::tcp_stream upstream(std::move(*up.socket));
    upstream.expires_after(ctx.response_timeout);  // a body of up to 16 MiB may take a while
    a.bytes_out += co_await http::async_write(upstream, request, asio::use_awaitable);

    beast::flat_buffer upstream_buffer;
    http::response_parser<http::empty_body> response;
    response.header_limit(kHeadLimit);
    upstream.expires_after(ctx.response_timeout);
    co_await http::async_read_header(upstream, upstream_buffer, response, asio::use_awaitable);
    upstream.expires_never();
    std::string head = ClientResponseHead(response.get().base());
    responded = true;
    a.bytes_in += co_await asio::async_write(client.socket(), asio::buffer(head), asio::use_awaitable);
    if (upstream_buffer.size() > 0) {
      a.bytes_in += co_await asio::async_write(client.socket(), upstream_buffer.data(), asio::use_awaitable);
    }
    std::uint64_t body = 0;
    co_await Pump(upstream.socket(), client.socket(), &body);
    a.bytes_in += body;
  } catch (const std::exception& e) {
    a.error = e.what();
  }
  FinishAttempt(ctx, a, start);
  if (!responded) {
    std::string body = FailureBody(a);
    co_await WriteSimpleResponse(client, failure, std::move(body));
  }
}

}  // namespace mcpcell
