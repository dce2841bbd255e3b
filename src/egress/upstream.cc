#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include "egress/upstream.h"

#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <fmt/format.h>

#include "egress/address_check.h"
#include "egress/dns_name.h"
#include "egress/host_loopback.h"
#include "egress/socket_now.h"

namespace mcpcell {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

UpstreamFailure FailureOf(const boost::system::error_code& ec) {
  if (ec == boost::beast::error::timeout) return UpstreamFailure::kTimeout;
  if (ec == asio::error::connection_refused) return UpstreamFailure::kRefused;
  if (ec == asio::error::network_unreachable || ec == asio::error::host_unreachable) {
    return UpstreamFailure::kUnreachable;
  }
  return UpstreamFailure::kOther;
}

// A TCP connect with the proxy's connect timeout, TCP_NODELAY set
// (socket_now.h). nullopt: *ec says why.
asio::awaitable<std::optional<tcp::socket>> ConnectWithTimeout(ProxyContext& ctx, tcp::endpoint endpoint,
                                                               boost::system::error_code* ec) {
  return ConnectNow(endpoint, ctx.connect_timeout, ec);
}

// "localhost", "127.0.0.1", "::1": the host's own loopback, reached only on
// a port the user named (host_loopback.h), never through the resolver or the
// address check (which refuse loopback for every other name).
asio::awaitable<Upstream> OpenHostLoopback(ProxyContext& ctx, EgressAttempt& a) {
  Upstream out;
  HostLoopbackVerdict v = MatchHostLoopback(ctx.rules.host_ports, a.host, a.port);
  v.verdict = WithFixedAdvice(ctx.rules, std::move(v.verdict));
  a.allowed = v.verdict.allowed;
  a.rule = v.verdict.rule;
  a.how_to_allow = v.verdict.how_to_allow;
  if (!a.allowed) {
    out.failure = UpstreamFailure::kDenied;
    co_return out;
  }
  boost::system::error_code ec;
  for (const auto& address : v.targets) {
    a.address = address.to_string();
    out.socket = co_await ConnectWithTimeout(ctx, tcp::endpoint(address, a.port), &ec);
    if (out.socket) {
      a.error.clear();
      co_return out;
    }
    a.error = fmt::format("connect to {} port {}: {}", a.address, a.port, DescribeConnectError(ec));
  }
  out.failure = FailureOf(ec);
  co_return out;
}

}  // namespace

std::string DescribeConnectError(const boost::system::error_code& ec) {
  if (ec == boost::beast::error::timeout) return "connect timed out";
  return ec.message();
}

void DenyInvalidName(EgressAttempt& a, std::string_view raw, const std::string& why) {
  a.host = PrintableBytes(raw);
  a.allowed = false;
  a.rule = why;
  a.how_to_allow = "name the host as a DNS name (letters, digits, '-' and dots, at most 253 bytes) or an IP "
                   "address written a.b.c.d or [v6]; nothing allows any other name";
}

asio::awaitable<Upstream> OpenUpstream(ProxyContext& ctx, EgressAttempt& a) {
  Upstream out;
  // Fail closed: no connection the audit cannot record (egress_audit.h).
  if (ctx.audit.RefuseIfBroken(a)) {
    out.failure = UpstreamFailure::kDenied;
    co_return out;
  }
  std::string why;
  if (auto canonical = CanonicalHost(a.host, &why); !canonical || *canonical != a.host) {
    if (canonical) why = "\"" + a.host + "\" is not in canonical form (" + *canonical + ")";
    DenyInvalidName(a, a.host, why);
    out.failure = UpstreamFailure::kDenied;
    co_return out;
  }
  if (IsLoopbackName(a.host)) co_return co_await OpenHostLoopback(ctx, a);
  // A metadata address named as a literal is refused as what it is, before
  // the host rules would suggest adding it to allow_host (issue 18 item 11).
  boost::system::error_code literal_ec;
  auto literal = asio::ip::make_address(a.host, literal_ec);
  RuleVerdict by_name = !literal_ec && IsMetadataAddress(literal)
                            ? WithFixedAdvice(ctx.rules, CheckAddress(ctx.rules, a.host, a.port, literal, false))
                            : MatchConnection(ctx.rules, a.host, a.port);
  a.allowed = by_name.allowed;
  a.rule = by_name.rule;
  a.how_to_allow = by_name.how_to_allow;
  if (!by_name.allowed) {
    out.failure = UpstreamFailure::kDenied;
    co_return out;
  }
  // Pins and IP literals need no coroutine of their own (one frame less per
  // connection); names go to DNS.
  Resolution resolved;
  if (auto now = ctx.resolver.ResolveNow(a.host, a.port)) {
    resolved = std::move(*now);
  } else {
    resolved = co_await ctx.resolver.Resolve(a.host, a.port);
  }
  if (!resolved.error.empty()) {
    a.error = resolved.error;
    out.failure = UpstreamFailure::kNameNotFound;
    co_return out;
  }
  std::optional<RuleVerdict> first_refusal;
  boost::system::error_code last_error;
  for (const auto& address : resolved.addresses) {
    // A cell's fixed advice (an install-script cell) replaces --resolve and
    // --secret here too: no flag reaches it.
    RuleVerdict by_address = WithFixedAdvice(ctx.rules, CheckAddress(ctx.rules, a.host, a.port, address, resolved.pinned));
    if (!by_address.allowed) {
      if (!first_refusal) first_refusal = by_address;
      continue;
    }
    a.address = address.to_string();
    std::optional<tcp::socket> socket = co_await ConnectWithTimeout(ctx, tcp::endpoint(address, a.port), &last_error);
    if (!socket) continue;
    a.rule = by_address.rule == "public address" ? by_name.rule : by_name.rule + "; " + by_address.rule;
    a.error.clear();
    out.socket = std::move(socket);
    co_return out;
  }
  if (last_error) {
    a.error = fmt::format("connect to {} port {}: {}", a.address, a.port, DescribeConnectError(last_error));
    out.failure = FailureOf(last_error);
    co_return out;
  }
  // Every address was refused by the address check.
  a.allowed = false;
  a.rule = first_refusal->rule;
  a.how_to_allow = first_refusal->how_to_allow;
  a.address = resolved.addresses.front().to_string();
  out.failure = UpstreamFailure::kDenied;
  co_return out;
}

void FinishAttempt(ProxyContext& ctx, EgressAttempt& a, std::chrono::steady_clock::time_point start) {
  a.duration = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  ctx.audit.Record(a);
}

}  // namespace mcpcell
