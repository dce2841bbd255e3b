#pragma once
// What every connection handler of the egress proxy shares: the rules, the
// resolver, the audit, and (in a cell) the name map the DNS stub fills. One
// per proxy; handlers hold a reference, the owner keeps it alive until the
// io_context has stopped.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <utility>

#include "egress/egress_audit.h"
#include "egress/host_rules.h"
#include "egress/name_map.h"
#include "egress/resolver.h"
#include "egress/tunnel_loop.h"

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
  /// Connections of this cell the proxy serves at once (being decided,
  /// forwarding, or tunnelled); one more is reset and audited. Each costs
  /// the supervisor at most a request head (64 KiB) and one body chunk
  /// (16 KiB) or a tunnel's pending bytes, so this bounds its memory per cell
  /// (issue 10 item 7): about 80 MiB at worst, whatever the bodies' sizes.
  /// 1024 because issue 9 asks for 1,000 concurrent tunnels through one cell
  /// (tests/e2e/load.test.mjs); clients keep tens pooled.
  std::size_t max_connections = 1024;
  /// How many are open now: counted by the io thread, and by the tunnel
  /// loop's thread when a tunnel ends.
  std::atomic<std::size_t> open_connections{0};
  /// Established tunnels (tunnel_loop.h): started with the first one, by the
  /// io thread. Last, so it is destroyed first: its destructor records the
  /// tunnels still open on `audit`.
  std::unique_ptr<TunnelLoop> tunnels = nullptr;
};

/// One open connection counted against ProxyContext::max_connections for as
/// long as it lives. Move-only.
class ConnectionSlot {
 public:
  explicit ConnectionSlot(ProxyContext& ctx) : count_(&ctx.open_connections) { ++*count_; }
  ConnectionSlot(ConnectionSlot&& o) noexcept : count_(std::exchange(o.count_, nullptr)) {}
  ConnectionSlot& operator=(ConnectionSlot&&) = delete;
  ConnectionSlot(const ConnectionSlot&) = delete;
  ~ConnectionSlot() {
    if (count_ != nullptr) --*count_;
  }

 private:
  std::atomic<std::size_t>* count_;
};

}  // namespace mcpcell
