#pragma once
// ToolHive's outbound rules, matched the way its Squid backend matches them:
// "example.com" is that name exactly, ".example.com" is the domain and every
// name below it; ports are a list; when hosts and ports are both set a
// connection must match both; insecure_allow_all matches everything. Names
// compare case-insensitively, a trailing dot ignored. An IP literal entry
// matches that address written the same way (IPv6 with or without brackets).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/cell_spec.h"

namespace mcpcell {

struct EgressRules {
  bool allow_all = false;
  std::vector<std::string> hosts;     ///< normalised: lower case, no trailing dot, no brackets
  std::vector<std::uint16_t> ports;   ///< empty = any port
  /// The host's loopback ports the cell may reach (host_loopback.h); judged
  /// apart from hosts/ports, whatever they allow.
  std::vector<HostLoopbackPort> host_ports;
  /// The cell has no network at all (mode none): every name and connection
  /// is denied, and the denial says so (issue 14 item 8).
  bool no_network = false;
  /// NetworkSpec::fixed_how_to_allow: the advice every denial by these
  /// rules gives instead of allow_host (empty: that advice).
  std::string fixed_how_to_allow;

  static EgressRules FromSpec(const NetworkSpec& network);
};

/// What decided a connection or a name, in words a user can act on.
struct RuleVerdict {
  bool allowed = false;
  /// The rule that decided: `allow_host ".example.com"`, `allow_port 443`,
  /// `insecure_allow_all`, or the missing rule: `no allow_host entry matches "x"`.
  std::string rule;
  /// For a denial: the profile line (and flag) that would allow it. Empty when allowed.
  std::string how_to_allow;
};

/// Lower case, trailing dot and IPv6 brackets removed.
std::string NormaliseHost(std::string_view host);

/// `v` with the rules' fixed advice when it is a denial and they have one.
RuleVerdict WithFixedAdvice(const EgressRules& rules, RuleVerdict v);

/// A TCP connection to `host`:`port`.
RuleVerdict MatchConnection(const EgressRules& rules, std::string_view host, std::uint16_t port);

/// A DNS name, before any port is known: allowed when some port could be
/// reached on it (the host part matches, or only ports are restricted).
RuleVerdict MatchName(const EgressRules& rules, std::string_view host);

}  // namespace mcpcell
