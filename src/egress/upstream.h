#pragma once
// The one path every egress attempt takes from "a cell wants HOST:PORT" to a
// connected upstream socket, whatever way it arrived (CONNECT, HTTP, SOCKS5,
// redirect): the rules decide by name and port, the resolver finds addresses
// (pins first), the address check refuses internal ones, then a TCP connect
// with a timeout.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>  // before asio's awaitable.hpp (Boost 1.74 misses it)

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "egress/egress_audit.h"
#include "egress/proxy_context.h"

namespace mcpcell {

/// Why no upstream socket came back; SOCKS5 maps these to its reply codes.
enum class UpstreamFailure { kNone, kDenied, kNameNotFound, kRefused, kUnreachable, kTimeout, kOther };

struct Upstream {
  std::optional<boost::asio::ip::tcp::socket> socket;  ///< connected, TCP_NODELAY set
  UpstreamFailure failure = UpstreamFailure::kNone;
};

/// Decides and connects `attempt.host`:`attempt.port`. `attempt.host` must
/// already be canonical (CanonicalHost); anything else is refused here too,
/// so no path can hand the rules one name and the resolver another. Fills attempt's
/// allowed, rule, how_to_allow, address and error. A denial leaves
/// allowed=false; an allowed attempt that could not connect has error set.
/// Every resolved address is checked; the first one that passes and accepts
/// the connection is used. After a failed audit write, every attempt is
/// denied (EgressAudit::RefuseIfBroken). Never throws.
boost::asio::awaitable<Upstream> OpenUpstream(ProxyContext& ctx, EgressAttempt& attempt);

/// Marks `attempt` as refused because the name the cell sent (`raw`, any
/// bytes) is no valid host name (`why` from CanonicalHost): the audit shows
/// the bytes escaped and cut to a name's length, the rule says why.
void DenyInvalidName(EgressAttempt& attempt, std::string_view raw, const std::string& why);

/// Sets the duration since `start` and records the attempt on the audit.
void FinishAttempt(ProxyContext& ctx, EgressAttempt& attempt, std::chrono::steady_clock::time_point start);

/// "connection refused", "timed out", ... for an upstream error.
std::string DescribeConnectError(const boost::system::error_code& ec);

}  // namespace mcpcell
