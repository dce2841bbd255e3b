#pragma once
// The HTTP face of the egress proxy: one request per client connection,
// either CONNECT host:port (then a tunnel) or an absolute-form http:// request
// (forwarded with Connection: close, the response streamed back). Headers are
// parsed by Boost.Beast. A denial is a 403 whose body is the same sentence
// the user sees on stderr; a Host header that names another host than the
// request target is refused with 400 (and audited: it is a bypass attempt).

#include <memory>
#include <string>
#include <utility>  // before asio's awaitable.hpp (Boost 1.74 misses it)

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/status.hpp>

#include "egress/http_target.h"
#include "egress/proxy_context.h"
#include "egress/upstream.h"

namespace mcpcell {

using RequestHeadParser = boost::beast::http::request_parser<boost::beast::http::empty_body>;

/// A plain-HTTP request body passes the supervisor in pieces of at most this
/// many bytes, through one buffer per connection (never whole).
constexpr std::size_t kBodyChunk = 16 * 1024;

/// Serves one HTTP proxy request from `client`, whose first bytes may already
/// be in `buffer`. Returns when the exchange or tunnel is over; the caller
/// closes `client`. Throws only on client I/O errors before an attempt exists.
boost::asio::awaitable<void> ServeHttp(ProxyContext& ctx, boost::beast::tcp_stream& client,
                                       boost::beast::flat_buffer& buffer);

/// CONNECT: `parser` holds the parsed head.
boost::asio::awaitable<void> ServeConnect(ProxyContext& ctx, boost::beast::tcp_stream& client,
                                          boost::beast::flat_buffer& buffer, std::unique_ptr<RequestHeadParser> parser);

/// Absolute-form forwarding: `parser` holds the parsed head; the body (if
/// any) is read from `client`/`buffer`.
boost::asio::awaitable<void> ServeForward(ProxyContext& ctx, boost::beast::tcp_stream& client,
                                          boost::beast::flat_buffer& buffer, std::unique_ptr<RequestHeadParser> parser);

/// Writes a complete short response (text/plain, Connection: close). Never throws.
boost::asio::awaitable<void> WriteSimpleResponse(boost::beast::tcp_stream& client, boost::beast::http::status status,
                                                 std::string body);

/// The response to an attempt that got no upstream: 403 with the denial
/// sentence, 504 (timed out) or 502 with FailureBody.
struct HttpRefusal {
  boost::beast::http::status status;
  std::string body;
};
HttpRefusal RefusalFor(const Upstream& up, const EgressAttempt& attempt);

/// Whether a non-empty Host header names another host than the request's
/// target (`target_text`, said as `what`: "the CONNECT target"); if so fills
/// `attempt`'s rule and how_to_allow, so the caller refuses it with a 400.
bool HostHeaderRefused(EgressAttempt& attempt, std::string_view host_header, const HostPort& target,
                       std::uint16_t default_port, std::string_view what, std::string_view target_text);

/// The body of a 502/504: the attempt was allowed but did not get through.
std::string FailureBody(const EgressAttempt& attempt);

}  // namespace mcpcell
