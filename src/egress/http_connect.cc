// CONNECT host:port → decision → "200 Connection established" → tunnel.

#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include <chrono>
#include <exception>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "egress/dns_name.h"
#include "egress/http_proxy.h"
#include "egress/http_target.h"
#include "egress/socket_now.h"
#include "egress/tunnel.h"
#include "egress/upstream.h"

namespace mcpcell {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

HttpRefusal RefusalFor(const Upstream& up, const EgressAttempt& a) {
  std::string body = a.allowed ? FailureBody(a) : EgressAudit::DenialSentence(a);
  switch (up.failure) {
    case UpstreamFailure::kDenied: return {http::status::forbidden, std::move(body)};
    case UpstreamFailure::kTimeout: return {http::status::gateway_timeout, std::move(body)};
    default: return {http::status::bad_gateway, std::move(body)};
  }
}

bool HostHeaderRefused(EgressAttempt& a, std::string_view host_header, const HostPort& target,
                       std::uint16_t default_port, std::string_view what, std::string_view target_text) {
  std::string why;
  if (host_header.empty() || HostHeaderMatches(host_header, target, default_port, &why)) return false;
  a.rule = fmt::format("the Host header \"{}\" names another host than {} \"{}\"", PrintableBytes(host_header), what,
                       PrintableBytes(target_text));
  if (!why.empty()) a.rule += " (" + why + ")";
  a.how_to_allow = fmt::format("send a Host header that names {} (or none)", what);
  return true;
}

std::string FailureBody(const EgressAttempt& a) {
  return fmt::format("mcpcell egress proxy: {} is allowed ({}), but the request failed: {}",
                     FormatHostPort({a.host, a.port}), a.rule, a.error);
}

asio::awaitable<void> ServeConnect(ProxyContext& ctx, beast::tcp_stream& client, beast::flat_buffer& buffer,
                                   std::unique_ptr<RequestHeadParser> parser) {
  std::string target(parser->get().target());
  std::string host_header(parser->get()[http::field::host]);
  parser.reset();
  auto start = std::chrono::steady_clock::now();
  EgressAttempt a;
  a.via = "connect";
  std::string why;
  auto where = ParseAuthority(target, 0, &why);
  if (!where) {
    // A target the proxy cannot take as host:port is still an attempt to go
    // somewhere: audited, and answered with what is wrong.
    DenyInvalidName(a, target, "CONNECT needs a target of the form host:port: " + why);
    FinishAttempt(ctx, a, start);
    // Arguments to a coroutine are named locals, never temporaries built in
    // the call: GCC 12 destroys some such temporaries twice (double free).
    std::string body = "mcpcell egress proxy: " + EgressAudit::DenialSentence(a);
    co_await WriteSimpleResponse(client, http::status::bad_request, std::move(body));
    co_return;
  }
  a.host = where->host;
  a.port = where->port;
  if (HostHeaderRefused(a, host_header, *where, where->port, "the CONNECT target", target)) {
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
  try {
    static constexpr std::string_view kEstablished = "HTTP/1.1 200 Connection established\r\n\r\n";
    co_await SendAll(client.socket(), kEstablished);
    client.expires_never();
  } catch (const std::exception& e) {
    a.error = e.what();
  }
  if (!a.error.empty()) {
    FinishAttempt(ctx, a, start);
    co_return;
  }
  // Bytes the client sent right behind the head (a TLS ClientHello) are the
  // tunnel's first flight, judged with what follows (tunnel.h).
  std::string early(static_cast<const char*>(buffer.data().data()), buffer.size());
  buffer.consume(buffer.size());
  buffer.shrink_to_fit();
  // The tunnel owns both sockets from here and records the attempt when it
  // ends; this coroutine (and its frames) can go.
  StartTunnel(ctx, client.release_socket(), std::move(*up.socket), std::move(a), start, std::move(early));
}

}  // namespace mcpcell
