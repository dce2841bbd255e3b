#pragma once
// The audit log's bounds against a flooding cell. Admit (the token bucket)
// is applied by EgressAudit to every egress event of a cell, whatever its
// source; FreshName by the DNS stub to allowed lookups.
//
// Which DNS queries the stub writes to the audit log. Every query for a name
// that is not allowed is an event (DNS exfiltration is an attack and must be
// visible name by name). Allowed lookups repeat all the time (every connect
// re-resolves after the 5 s TTL), so each allowed name is logged at most once
// per window. And a cell that floods the stub (random names under a denied
// domain, or under an allowed ".domain" rule) must not be able to fill the
// host's disk through mcpcell: every event then passes one token bucket, and
// the ones held back are counted so the next event that passes can say how
// many were not logged one by one. Nothing disappears without a trace.
//
// Time is a parameter so tests need no clock. Not thread-safe: EgressAudit
// guards its own with a mutex; the stub uses its own from its io thread only.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace mcpcell {

class DnsAuditGate {
 public:
  using Clock = std::chrono::steady_clock;

  struct Limits {
    double burst = 1000;      ///< events that may be logged at once
    double per_second = 200;  ///< refill rate after the burst
    std::chrono::milliseconds allowed_window{5000};  ///< one allowed event per name per window
  };

  DnsAuditGate() : DnsAuditGate(Limits{}) {}
  explicit DnsAuditGate(Limits limits) : limits_(limits), tokens_(limits.burst) {}

  /// An event about to be logged at `now`. True: log it, and `*held_back` is
  /// how many events were held back since the last one admitted (the count
  /// resets). False: it was counted instead.
  bool Admit(Clock::time_point now, std::uint64_t* held_back);

  /// How many events were held back since the last one admitted; resets the count.
  std::uint64_t TakeHeldBack() { return std::exchange(held_back_, 0); }

  /// An allowed lookup of `name` (normalised) at `now`: true when the name
  /// was not seen within the window (then it counts as seen from `now`).
  bool FreshName(const std::string& name, Clock::time_point now);

 private:
  Limits limits_;
  double tokens_;
  std::optional<Clock::time_point> last_refill_;
  std::uint64_t held_back_ = 0;
  std::unordered_map<std::string, Clock::time_point> allowed_seen_;
};

}  // namespace mcpcell
