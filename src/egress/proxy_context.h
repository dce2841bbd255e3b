#pragma once
// What every connection handler of the egress proxy shares: the rules, the
// resolver, the audit, and (in a cell) the name map the DNS stub fills. One
// per proxy; handlers hold a reference, the owner keeps it alive until the
// io_context has stopped.

#include <chrono>

#include "egress/egress_audit.h"
#include "egress/host_rules.h"
#include "egress/name_map.h"
#include "egress/resolver.h"

namespace mcpcell {

struct ProxyContext {
  EgressRules rules;
  Resolver resolver;
  EgressAudit& audit;
  /// Cell mode: connections redirected by the cell's nft rule are recognised
  /// (SO_ORIGINAL_DST) and synthetic addresses map back to names here. Null in
  /// `mcpcell egress-proxy` mode, where nothing is redirected.
  NameMap* names = nullptr;
  std::chrono::seconds connect_timeout{10};
  /// A client must finish its request head (or SOCKS5 greeting) within this.
  std::chrono::seconds request_timeout{60};
  /// An upstream must start its HTTP response within this (plain HTTP only).
  std::chrono::seconds response_timeout{300};
};

}  // namespace mcpcell
