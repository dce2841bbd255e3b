#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include "egress/redirect.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <exception>

#include <fmt/format.h>

#include "egress/tunnel.h"
#include "egress/upstream.h"

namespace mcpcell {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
// From linux/netfilter_ipv4.h; that header drags in kernel definitions that
// clash with glibc's netinet/in.h, so the one constant is repeated here.
constexpr int kSoOriginalDst = 80;
}  // namespace

std::optional<tcp::endpoint> OriginalDestination(int fd) {
  sockaddr_in sin{};
  socklen_t len = sizeof sin;
  if (::getsockopt(fd, SOL_IP, kSoOriginalDst, &sin, &len) != 0 || sin.sin_family != AF_INET) return std::nullopt;
  return tcp::endpoint(asio::ip::address_v4(ntohl(sin.sin_addr.s_addr)), ntohs(sin.sin_port));
}

std::optional<std::string> RedirectHost(const NameMap* names, const asio::ip::address& destination) {
  if (destination.is_v4() && NameMap::IsSynthetic(destination.to_v4().to_uint())) {
    if (names == nullptr) return std::nullopt;
    return names->NameOf(destination.to_v4().to_uint());
  }
  return destination.to_string();
}

asio::awaitable<void> ServeRedirect(ProxyContext& ctx, tcp::socket& client, tcp::endpoint destination) {
  auto start = std::chrono::steady_clock::now();
  EgressAttempt a;
  a.via = "redirect";
  a.port = destination.port();
  auto host = RedirectHost(ctx.names, destination.address());
  if (!host) {
    a.host = destination.address().to_string();
    a.rule = fmt::format("{} is a synthetic address the DNS stub never handed out", a.host);
    a.how_to_allow = "connect by a name the profile allows (resolved through the cell's DNS)";
    FinishAttempt(ctx, a, start);
    co_return;
  }
  a.host = *host;
  Upstream up = co_await OpenUpstream(ctx, a);
  if (!up.socket) {
    // Reset rather than a clean close: the program sees ECONNRESET at once
    // instead of a connection that says nothing.
    boost::system::error_code ec;
    client.set_option(asio::socket_base::linger(true, 0), ec);
    FinishAttempt(ctx, a, start);
    co_return;
  }
  StartTunnel(ctx, std::move(client), std::move(*up.socket), std::move(a), start);
}

}  // namespace mcpcell
