#include "egress/cell_net.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nftables/libnftables.h>

#include "egress/loopback.h"

namespace mcpcell {
namespace {

// One RTM_NEWROUTE request: header, route message, one RTA_OIF attribute.
// Hand-rolled (36 bytes) instead of the NLMSG_*/RTA_* macros, whose C casts
// this build rejects. Every member is 4-byte aligned, so there is no padding
// and the layout is what rtnetlink(7) expects.
struct RouteRequest {
  struct nlmsghdr nh;
  struct rtmsg rt;
  struct rtattr oif_attr;
  std::uint32_t oif;
};
static_assert(offsetof(RouteRequest, oif_attr) == sizeof(nlmsghdr) + sizeof(rtmsg));
static_assert(sizeof(RouteRequest) == sizeof(nlmsghdr) + sizeof(rtmsg) + sizeof(rtattr) + 4);

Error RouteError(int err) {
  return Error{"add the cell's local default route (rtnetlink RTM_NEWROUTE local 0.0.0.0/0 dev lo)", "", err,
               "the cell's PID 1 needs CAP_NET_ADMIN in its own network namespace; this kernel refused it"};
}

// The reply to a request sent with NLM_F_ACK is one NLMSG_ERROR message whose
// error field is 0 (success) or a negative errno (netlink(7), "NLMSG_ERROR").
Status ReadAck(int fd) {
  alignas(nlmsghdr) char buf[1024];
  ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  if (n < 0) return RouteError(errno);
  if (static_cast<std::size_t>(n) < sizeof(nlmsghdr) + sizeof(nlmsgerr)) return RouteError(EPROTO);
  nlmsghdr hdr{};
  std::memcpy(&hdr, buf, sizeof hdr);
  if (hdr.nlmsg_type != NLMSG_ERROR) return RouteError(EPROTO);
  nlmsgerr ack{};
  std::memcpy(&ack, buf + sizeof(nlmsghdr), sizeof ack);
  if (ack.error != 0) return RouteError(-ack.error);
  return {};
}

// `ip route add local 0.0.0.0/0 dev lo`: a local route makes every IPv4
// address "this host", so connects to anywhere reach the output hook (where
// nft redirects them) instead of failing with ENETUNREACH. The SIOCADDRT
// ioctl cannot express a route of type local, hence rtnetlink.
Status AddLocalDefaultRoute() {
  unsigned lo = ::if_nametoindex("lo");
  if (lo == 0) return ErrnoError("find the cell's loopback interface", "lo");
  UniqueFd nl(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!nl) return RouteError(errno);
  RouteRequest req{};
  req.nh.nlmsg_len = sizeof req;
  req.nh.nlmsg_type = RTM_NEWROUTE;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
  req.nh.nlmsg_seq = 1;
  req.rt.rtm_family = AF_INET;
  req.rt.rtm_dst_len = 0;  // 0.0.0.0/0: no RTA_DST needed
  req.rt.rtm_table = RT_TABLE_LOCAL;
  req.rt.rtm_protocol = RTPROT_BOOT;
  req.rt.rtm_scope = RT_SCOPE_HOST;
  req.rt.rtm_type = RTN_LOCAL;
  req.oif_attr.rta_len = sizeof(rtattr) + sizeof(std::uint32_t);
  req.oif_attr.rta_type = RTA_OIF;
  req.oif = lo;
  struct sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(nl.get(), &req, sizeof req, 0, reinterpret_cast<const sockaddr*>(&kernel), sizeof kernel) !=
      static_cast<ssize_t>(sizeof req)) {
    return RouteError(errno);
  }
  return ReadAck(nl.get());
}

// nft through libnftables (the same parser as the nft binary, which the cell
// does not have): one transaction, so the table is either complete or absent.
Status LoadNftRules(const std::vector<std::uint16_t>& host_ports) {
  std::unique_ptr<nft_ctx, decltype(&nft_ctx_free)> ctx(nft_ctx_new(NFT_CTX_DEFAULT), nft_ctx_free);
  if (!ctx) return MakeError("load the cell's nft rules", "table ip mcpcell", "libnftables could not create a context");
  // Errors into a buffer, not onto the cell's stderr (which is the client's).
  nft_ctx_buffer_error(ctx.get());
  nft_ctx_buffer_output(ctx.get());
  std::string rules = CellNftRuleset(host_ports);
  errno = 0;
  if (nft_run_cmd_from_buffer(ctx.get(), rules.c_str()) != 0) {
    int err = errno;
    const char* said = nft_ctx_get_error_buffer(ctx.get());
    std::string text = said != nullptr ? said : "";
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return Error{"load the cell's nft rules", "table ip mcpcell", err,
                 "nft said: " + (text.empty() ? std::string("nothing") : text) +
                     ". The kernel needs nf_tables with NAT and conntrack (nft_nat, nft_redirect, nf_conntrack); "
                     "check that 'unshare -Urn nft list ruleset' works on this machine"};
  }
  return {};
}

Result<UniqueFd> BoundSocket(int type, const char* address, std::uint16_t port, const char* what) {
  UniqueFd s(::socket(AF_INET, type | SOCK_CLOEXEC, 0));
  std::string where = fmt::format("{}:{}", address, port);
  if (!s) return ErrnoError(std::string("create the ") + what + " socket", where);
  struct sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  ::inet_pton(AF_INET, address, &sin.sin_addr);
  // No SO_REUSEADDR/SO_REUSEPORT: with the server running as the same uid,
  // SO_REUSEPORT would let it bind the same port and steal connections.
  if (::bind(s.get(), reinterpret_cast<const sockaddr*>(&sin), sizeof sin) != 0) {
    Error e = ErrnoError(std::string("bind the ") + what + " socket", where);
    e.detail = "binding a port below 1024 needs CAP_NET_BIND_SERVICE in the cell's user namespace";
    return e;
  }
  return s;
}

}  // namespace

std::string CellProxyUrl() { return fmt::format("http://{}:{}", kCellProxyAddress, kCellProxyPort); }

std::string CellNftRuleset(const std::vector<std::uint16_t>& host_ports) {
  // Locally generated packets pass nat/output (priority -100) before
  // filter/output (0): the filter sees redirected packets already addressed
  // to 127/8. A connect() to a local-route address picks that address as its
  // own source (the "connecting to yourself" rule), so replies to the cell's
  // clients go to non-127 addresses: "ct direction reply" lets them through.
  // The host's loopback ports the user named (host_loopback.h) are
  // redirected first: 127.0.0.1 itself only, so 127.0.0.2 or another port
  // stays the cell's own loopback. A connect to 0.0.0.0 reaches 127.0.0.1
  // (the kernel picks the loopback address for INADDR_ANY), so it is covered
  // too, on the same ports only.
  std::string loopback;
  if (!host_ports.empty()) {
    loopback = fmt::format("    ip daddr 127.0.0.1 tcp dport {{ {} }} redirect to :{}\n", fmt::join(host_ports, ", "),
                           kCellProxyPort);
  }
  return fmt::format(
      "table ip mcpcell {{\n"
      "  chain out_nat {{\n"
      "    type nat hook output priority -100; policy accept;\n"
      "{loopback}"
      "    ip daddr != 127.0.0.0/8 meta l4proto tcp redirect to :{proxy}\n"
      "    ip daddr != {dns} udp dport 53 dnat to {dns}:{dns_port}\n"
      "  }}\n"
      "  chain out_filter {{\n"
      "    type filter hook output priority 0; policy accept;\n"
      "    ip daddr 127.0.0.0/8 accept\n"
      "    ct direction reply accept\n"
      "    drop\n"
      "  }}\n"
      "}}\n",
      fmt::arg("loopback", loopback), fmt::arg("proxy", kCellProxyPort), fmt::arg("dns", kCellDnsAddress),
      fmt::arg("dns_port", kCellDnsPort));
}

Result<UniqueFd> BindNoNetworkDnsSocket() {
  return BoundSocket(SOCK_DGRAM, kCellDnsAddress, kCellDnsPort, "DNS stub");
}

Result<EgressSockets> SetUpCellNet(const std::vector<std::uint16_t>& host_ports) {
  MCPCELL_TRY(BringUpLoopback());
  MCPCELL_TRY(AddLocalDefaultRoute());
  MCPCELL_TRY(LoadNftRules(host_ports));
  EgressSockets out;
  auto proxy = BoundSocket(SOCK_STREAM, kCellProxyAddress, kCellProxyPort, "egress proxy");
  if (!proxy) return proxy.error();
  // A big backlog: connections wait here while the supervisor's thread gets
  // to them (capped by the namespace's net.core.somaxconn, 4096 by default).
  if (::listen(proxy->get(), 4096) != 0) {
    return ErrnoError("listen on the egress proxy socket", fmt::format("{}:{}", kCellProxyAddress, kCellProxyPort));
  }
  out.proxy_listener = std::move(*proxy);
  auto dns = BoundSocket(SOCK_DGRAM, kCellDnsAddress, kCellDnsPort, "DNS stub");
  if (!dns) return dns.error();
  out.dns_socket = std::move(*dns);
  return out;
}

}  // namespace mcpcell
