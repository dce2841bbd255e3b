#pragma once
// The host's own loopback, reachable from a cell one named port at a time
// (issue 14 item 3): a database on the host's 127.0.0.1:5432 for a server
// run with `--allow-host localhost:5432` (or a profile's
// "allow_host": ["localhost"] with "allow_port": [5432]).
//
// A cell has a loopback of its own, so "127.0.0.1" inside it is not the
// host. The cell's nft rules redirect TCP to 127.0.0.1:PORT, for the named
// ports only, to mcpcell's egress proxy (cell_net.h), which runs in the
// host's network namespace and connects to the host's loopback on that port
// (audited like every egress attempt). Every other way to the host's loopback
// stays refused: another port, 127.0.0.2, 0.0.0.0, ::ffff:127.0.0.1, a name
// that resolves to 127.0.0.1 (the address check, address_check.h), and the
// cell's own proxy port, which the redirect could never reach.
//
// Only three spellings name it, canonical as CanonicalHost writes them:
// "localhost", "127.0.0.1" and "::1". Every other loopback or unspecified
// literal in an allow_host entry is refused with what to write instead.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/address.hpp>

#include "core/cell_spec.h"
#include "egress/host_rules.h"
#include "util/error.h"

namespace mcpcell {

/// Whether `host` (canonical, CanonicalHost's output) is one of the three
/// names of the host's loopback: "localhost", "127.0.0.1", "::1".
bool IsLoopbackName(std::string_view host);

/// An allow_host entry that names the host's loopback, with or without a port.
struct LoopbackEntry {
  std::string name;                   ///< "localhost", "127.0.0.1" or "::1"
  std::optional<std::uint16_t> port;  ///< from "localhost:5432" / "[::1]:5432"
};

/// Reads one allow_host entry (a profile's or --allow-host's). nullopt: not a
/// loopback entry, an ordinary host rule (or no host at all: AllowHostProblem
/// says why). An Error: it means the host's loopback but cannot be used as
/// written (a bad port, the cell's proxy port, 127.0.0.2, 0.0.0.0,
/// ::ffff:127.0.0.1, ...); the detail says what to write.
std::optional<Result<LoopbackEntry>> ParseLoopbackEntry(std::string_view entry);

/// The host addresses behind a loopback name: localhost → 127.0.0.1, ::1;
/// 127.0.0.1 → itself; ::1 → itself.
std::vector<boost::asio::ip::address> LoopbackTargets(std::string_view name);

/// The decision on a connection to `host` (a loopback name) port `port`:
/// allowed when some entry of `ports` names that port; then `targets` are the
/// host addresses to try, in order.
struct HostLoopbackVerdict {
  RuleVerdict verdict;
  std::vector<boost::asio::ip::address> targets;
};
HostLoopbackVerdict MatchHostLoopback(const std::vector<HostLoopbackPort>& ports, std::string_view host,
                                      std::uint16_t port);

/// The distinct port numbers of `ports`, ascending (for the cell's nft rule).
std::vector<std::uint16_t> HostLoopbackPortNumbers(const std::vector<HostLoopbackPort>& ports);

/// "localhost:5432, 127.0.0.1:6379" for messages.
std::string DescribeHostPorts(const std::vector<HostLoopbackPort>& ports);

}  // namespace mcpcell
