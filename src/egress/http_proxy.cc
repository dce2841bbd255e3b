#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include "egress/http_proxy.h"

#include <limits>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace mcpcell {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {
// Request heads beyond this are refused (Beast's default of 8 KiB is too
// small for some cookies; 64 KiB is what common proxies allow).
constexpr std::uint32_t kHeadLimit = 64 * 1024;
}  // namespace

asio::awaitable<void> ServeHttp(ProxyContext& ctx, beast::tcp_stream& client, beast::flat_buffer& buffer) {
  // On the heap, so the parser's space is given back before a long tunnel.
  auto parser = std::make_unique<RequestHeadParser>();
  parser->header_limit(kHeadLimit);
  // Beast checks Content-Length against the body limit as soon as the head is
  // parsed (default 1 MiB for requests); the forwarder sets the real limit.
  // Not boost::none: Beast 1.74 compares `len > optional` there, and
  // anything is greater than none.
  parser->body_limit(std::numeric_limits<std::uint64_t>::max());
  client.expires_after(ctx.request_timeout);
  boost::system::error_code ec;
  // The whole head usually came with the first read: parse it here, as
  // async_read_header would (same parser, same limits), without its
  // composed operation; read more only if the parser needs it.
  parser->eager(false);  // as async_read_header sets it: stop after the head
  buffer.consume(parser->put(buffer.data(), ec));
  if (ec == http::error::need_more) {
    ec = {};
    co_await http::async_read_header(client, buffer, *parser, asio::redirect_error(asio::use_awaitable, ec));
  }
  if (ec) {
    // Not an egress attempt yet: nothing to audit. A malformed head gets an
    // answer; a client that went away or stalled does not.
    if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
      // A named local, not a temporary in the call: GCC 12 destroys some
      // temporaries in co_await expressions twice.
      std::string body = "mcpcell egress proxy: malformed HTTP request (" + ec.message() + ")";
      co_await WriteSimpleResponse(client, http::status::bad_request, std::move(body));
    }
    co_return;
  }
  if (parser->get().method() == http::verb::connect) {
    co_await ServeConnect(ctx, client, buffer, std::move(parser));
  } else {
    co_await ServeForward(ctx, client, buffer, std::move(parser));
  }
}

asio::awaitable<void> WriteSimpleResponse(beast::tcp_stream& client, http::status status, std::string body) {
  http::response<http::string_body> res{status, 11};
  res.set(http::field::server, "mcpcell");
  res.set(http::field::content_type, "text/plain; charset=utf-8");
  res.keep_alive(false);
  res.body() = std::move(body) + "\n";
  res.prepare_payload();
  boost::system::error_code ec;
  co_await http::async_write(client, res, asio::redirect_error(asio::use_awaitable, ec));
  client.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
}

}  // namespace mcpcell
