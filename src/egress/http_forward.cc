// Absolute-form plain HTTP: GET http://host/path → decision → one request to
// the upstream with Connection: close, its body streamed → its response
// streamed back. One
// request per client connection and per upstream connection: simple, and a
// second request can never ride on a connection decided for the first.

#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include <chrono>
#include <exception>
#include <limits>
#include <memory>
#include <sstream>
#include <string_view>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/serializer.hpp>
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

constexpr std::uint32_t kHeadLimit = 64 * 1024;

using BodyParser = http::request_parser<http::buffer_body>;

std::string_view Std(boost::beast::string_view s) { return {s.data(), s.size()}; }

template <bool isRequest>
std::string ConnectionTokens(const http::header<isRequest>& h) {
  std::string tokens;
  auto range = h.equal_range(http::field::connection);
  for (auto it = range.first; it != range.second; ++it) tokens += std::string(it->value()) + ",";
  return tokens;
}

/// The head sent upstream: the client's fields less the hop-by-hop ones,
/// Host set from the URL, Connection: close, and the body's framing kept —
/// its Content-Length, or chunked again when the client sent it chunked.
http::request<http::buffer_body> UpstreamHead(const BodyParser& in, const HttpTarget& target) {
  const auto& head = in.get().base();
  http::request<http::buffer_body> out;
  out.method_string(head.method_string());
  out.target(target.origin_form);
  out.version(11);
  std::string tokens = ConnectionTokens(head);
  for (const auto& f : head) {
    if (IsHopByHop(Std(f.name_string()), tokens) || f.name() == http::field::host ||
        f.name() == http::field::expect || f.name() == http::field::content_length) {
      continue;
    }
    out.insert(f.name_string(), f.value());
  }
  std::string authority = FormatHostPort(target.where);
  if (target.where.port == 80) authority.resize(authority.rfind(':'));
  out.set(http::field::host, authority);
  out.set(http::field::connection, "close");
  if (auto length = in.content_length()) {
    out.content_length(*length);
  } else if (in.chunked()) {
    out.chunked(true);
  }
  return out;
}

/// Sends `out`'s head upstream, then the request body as it arrives from the
/// client, one kBodyChunk at a time through one buffer: the supervisor holds
/// at most that much of a body, whatever its size (issue 10 item 7: bodies
/// read whole let 24 uploads grow it to 778 MiB). Each read and write has
/// its own timeout, so a slow upload is fine and a stalled one ends.
/// Returns the bytes written upstream; throws on an I/O error.
asio::awaitable<std::uint64_t> StreamRequest(ProxyContext& ctx, beast::tcp_stream& client, beast::flat_buffer& buffer,
                                             BodyParser& in, beast::tcp_stream& upstream,
                                             http::request<http::buffer_body>& out) {
  auto chunk = std::make_unique_for_overwrite<char[]>(kBodyChunk);
  http::serializer<true, http::buffer_body> serializer(out);
  boost::system::error_code ec;
  upstream.expires_after(ctx.response_timeout);
  std::uint64_t written = co_await http::async_write_header(upstream, serializer, asio::use_awaitable);
  while (!in.is_done()) {
    in.get().body().data = chunk.get();
    in.get().body().size = kBodyChunk;
    client.expires_after(ctx.request_timeout);
    co_await http::async_read(client, buffer, in, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == http::error::need_buffer) ec = {};  // the chunk is full: send it
    if (ec) throw boost::system::system_error(ec, "reading the request body");
    out.body().data = chunk.get();
    out.body().size = kBodyChunk - in.get().body().size;
    out.body().more = !in.is_done();
    upstream.expires_after(ctx.response_timeout);
    written += co_await http::async_write(upstream, serializer, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == http::error::need_buffer) ec = {};  // sent; the serializer wants the next chunk
    if (ec) throw boost::system::system_error(ec, "sending the request body upstream");
  }
  if (!serializer.is_done()) {  // no body, or the chunked encoding's last chunk
    out.body().data = nullptr;
    out.body().size = 0;
    out.body().more = false;
    written += co_await http::async_write(upstream, serializer, asio::use_awaitable);
  }
  client.expires_never();
  co_return written;
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
  try {
    if (beast::iequals(parser->get()[http::field::expect], "100-continue")) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      co_await asio::async_write(client.socket(), asio::buffer(kContinue), asio::use_awaitable);
    }
    BodyParser body_parser(std::move(*parser));
    parser.reset();
    // Streamed, so no length limit (see the head parser for why not none).
    body_parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    auto request = UpstreamHead(body_parser, *target);
    beast::tcp_stream upstream(std::move(*up.socket));
    a.bytes_out += co_await StreamRequest(ctx, client, buffer, body_parser, upstream, request);

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
    co_await WriteSimpleResponse(client, http::status::bad_gateway, std::move(body));
  }
}

}  // namespace mcpcell
