#pragma once
// The inside half of a cell's egress: run by the cell's PID 1, in the cell's
// fresh network namespace, while it still holds CAP_NET_ADMIN and
// CAP_NET_BIND_SERVICE in its user namespace (before the server starts and
// capabilities are dropped). Afterwards the namespace looks like this:
//
//   lo up, 127.0.0.0/8 and ::1 on it (the kernel's defaults)
//   route: local 0.0.0.0/0 dev lo (table local)  every IPv4 destination is
//          "this host", so a connect to any address stays inside the namespace
//          (without it: ENETUNREACH before netfilter ever sees the packet)
//   nft table ip mcpcell:
//     nat/output:    TCP to 127.0.0.1 on a named host port (host_loopback.h)
//                                                     → redirect to 127.0.0.1:3128
//                    TCP to anything outside 127/8   → redirect to 127.0.0.1:3128
//                    UDP port 53 to anything else     → dnat to 127.0.0.53:53
//     filter/output: after NAT, anything still addressed outside 127/8 that is
//                    not the reply half of a connection is dropped (UDP other
//                    than DNS, ICMP: EPERM/EACCES on send)
//   TCP 127.0.0.1:3128 listening, UDP 127.0.0.53:53 bound: handed to the
//   supervisor (SCM_RIGHTS), which serves them with EgressService.
//
// IPv6 has no route but ::1 (ENETUNREACH). The server gets no capability, so
// it can change none of this.

#include <cstdint>
#include <string>
#include <vector>

#include "egress/egress_service.h"
#include "util/error.h"

namespace mcpcell {

inline constexpr const char* kCellProxyAddress = "127.0.0.1";
inline constexpr std::uint16_t kCellProxyPort = 3128;
inline constexpr const char* kCellDnsAddress = "127.0.0.53";
inline constexpr std::uint16_t kCellDnsPort = 53;
/// "http://127.0.0.1:3128", the value of HTTP(S)_PROXY inside the cell.
std::string CellProxyUrl();

/// The nft ruleset loaded into the cell's network namespace (see above);
/// TCP to 127.0.0.1 on `host_ports` (the host's loopback ports the user
/// named, host_loopback.h) is redirected to the proxy as well.
std::string CellNftRuleset(const std::vector<std::uint16_t>& host_ports = {});

/// Brings up lo, adds the local default route, loads CellNftRuleset() and
/// creates the two sockets. Must run in a new network namespace with
/// CAP_NET_ADMIN and CAP_NET_BIND_SERVICE there. Errors name the step, the
/// errno and what to check; nothing is half-undone (the namespace dies with
/// the cell).
Result<EgressSockets> SetUpCellNet(const std::vector<std::uint16_t>& host_ports = {});

/// A cell with no network (profile none, issue 14 item 8): the DNS stub's
/// socket on 127.0.0.53:53, nothing else: no route, no nft, no proxy (lo
/// must be up already). Name lookups reach the stub, which answers NXDOMAIN
/// and reports each name once, so a server that fails for want of a network
/// says which host it wanted instead of failing with EAI_AGAIN in silence.
/// Needs CAP_NET_BIND_SERVICE in the cell's user namespace.
Result<UniqueFd> BindNoNetworkDnsSocket();

}  // namespace mcpcell
