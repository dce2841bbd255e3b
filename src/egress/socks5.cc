#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include "egress/socks5.h"

#include <array>
#include <chrono>
#include <exception>

#include <boost/asio/buffer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "egress/dns_name.h"
#include "egress/socket_now.h"
#include "egress/tunnel.h"

namespace mcpcell {

namespace asio = boost::asio;
namespace beast = boost::beast;

namespace {

constexpr std::uint8_t kVersion = 0x05;
constexpr std::uint8_t kNoAuth = 0x00;
constexpr std::uint8_t kNoAcceptableMethod = 0xFF;
constexpr std::uint8_t kCmdConnect = 0x01;
constexpr std::uint8_t kAtypIPv4 = 0x01, kAtypDomain = 0x03, kAtypIPv6 = 0x04;
constexpr std::uint8_t kSucceeded = 0x00, kGeneralFailure = 0x01, kNotAllowed = 0x02, kNetworkUnreachable = 0x03,
                       kHostUnreachable = 0x04, kConnectionRefused = 0x05, kTtlExpired = 0x06,
                       kCommandNotSupported = 0x07, kAddressTypeNotSupported = 0x08;

/// Reads until `buffer` holds at least `n` bytes (under the stream's timeout).
asio::awaitable<void> Fill(beast::tcp_stream& client, beast::flat_buffer& buffer, std::size_t n) {
  while (buffer.size() < n) {
    std::size_t got = co_await client.async_read_some(buffer.prepare(n - buffer.size()), asio::use_awaitable);
    buffer.commit(got);
  }
}

std::span<const std::uint8_t> Bytes(const beast::flat_buffer& buffer) {
  return {static_cast<const std::uint8_t*>(buffer.data().data()), buffer.size()};
}

/// A reply with BND.ADDR 0.0.0.0:0: clients ignore it for CONNECT, and the
/// proxy's real outbound address is none of the cell's business.
asio::awaitable<void> Reply(beast::tcp_stream& client, std::uint8_t code) {
  std::array<char, 10> reply{kVersion, static_cast<char>(code), 0x00, kAtypIPv4, 0, 0, 0, 0, 0, 0};
  co_await SendAll(client.socket(), reply);
}

/// Greeting, method choice and request; consumes them from `buffer`.
/// nullopt: the client offered no acceptable method (already answered).
asio::awaitable<std::optional<Socks5Request>> ReadRequest(beast::tcp_stream& client, beast::flat_buffer& buffer) {
  co_await Fill(client, buffer, 2);
  std::size_t greeting = Socks5GreetingSize(Bytes(buffer));
  co_await Fill(client, buffer, greeting);
  bool no_auth = Socks5OffersNoAuth(Bytes(buffer).first(greeting));
  buffer.consume(greeting);
  std::array<char, 2> choice{kVersion, static_cast<char>(no_auth ? kNoAuth : kNoAcceptableMethod)};
  co_await SendAll(client.socket(), choice);
  if (!no_auth) co_return std::nullopt;

  co_await Fill(client, buffer, 5);  // VER CMD RSV ATYP + first address byte
  std::size_t size = Socks5RequestSize(Bytes(buffer));
  co_await Fill(client, buffer, size);
  Socks5Request req = ParseSocks5Request(Bytes(buffer).first(size));
  buffer.consume(size);
  co_return req;
}

}  // namespace

std::uint8_t Socks5ReplyFor(UpstreamFailure failure) {
  switch (failure) {
    case UpstreamFailure::kNone: return kSucceeded;
    case UpstreamFailure::kDenied: return kNotAllowed;
    case UpstreamFailure::kNameNotFound: return kHostUnreachable;
    case UpstreamFailure::kRefused: return kConnectionRefused;
    case UpstreamFailure::kUnreachable: return kNetworkUnreachable;
    case UpstreamFailure::kTimeout: return kTtlExpired;
    case UpstreamFailure::kOther: return kGeneralFailure;
  }
  return kGeneralFailure;
}

asio::awaitable<void> ServeSocks5(ProxyContext& ctx, beast::tcp_stream& client, beast::flat_buffer& buffer) {
  client.expires_after(ctx.request_timeout);
  auto req = co_await ReadRequest(client, buffer);
  if (!req) co_return;
  if (req->atyp != kAtypIPv4 && req->atyp != kAtypIPv6 && req->atyp != kAtypDomain) {
    co_await Reply(client, kAddressTypeNotSupported);
    co_return;
  }
  if (req->command != kCmdConnect) {  // BIND and UDP ASSOCIATE: no inbound, no UDP out of a cell
    co_await Reply(client, kCommandNotSupported);
    co_return;
  }
  auto start = std::chrono::steady_clock::now();
  EgressAttempt a;
  a.via = "socks5";
  a.port = req->port;
  // The domain is up to 255 bytes of anything (RFC 1928 section 5): it
  // becomes a host name here or nowhere (a NUL in it once passed the
  // allow-list as "x\0.allowed.test" and was resolved as "x").
  std::string why;
  auto name = CanonicalHost(req->host, &why);
  if (!name) {
    DenyInvalidName(a, req->host, why);
    FinishAttempt(ctx, a, start);
    co_await Reply(client, kNotAllowed);
    co_return;
  }
  a.host = std::move(*name);
  Upstream up = co_await OpenUpstream(ctx, a);
  if (!up.socket) {
    FinishAttempt(ctx, a, start);
    std::uint8_t code = Socks5ReplyFor(up.failure);
    co_await Reply(client, code);
    co_return;
  }
  try {
    co_await Reply(client, kSucceeded);
    client.expires_never();
  } catch (const std::exception& e) {
    a.error = e.what();
  }
  if (!a.error.empty()) {
    FinishAttempt(ctx, a, start);
    co_return;
  }
  std::string early(static_cast<const char*>(buffer.data().data()), buffer.size());  // judged with the first flight
  buffer.consume(buffer.size());
  buffer.shrink_to_fit();
  StartTunnel(ctx, client.release_socket(), std::move(*up.socket), std::move(a), start, std::move(early));
}

}  // namespace mcpcell
