#include "egress/dns_audit_gate.h"

#include <algorithm>

namespace mcpcell {
namespace {

// Past this many remembered names, forget those outside the window (a domain
// rule lets a cell ask for endlessly many names; the map must not grow forever).
constexpr std::size_t kPruneAbove = 4096;

}  // namespace

bool DnsAuditGate::Admit(Clock::time_point now, std::uint64_t* held_back) {
  if (last_refill_ && now > *last_refill_) {
    std::chrono::duration<double> elapsed = now - *last_refill_;
    tokens_ = std::min(limits_.burst, tokens_ + elapsed.count() * limits_.per_second);
  }
  if (!last_refill_ || now > *last_refill_) last_refill_ = now;
  if (tokens_ < 1) {
    ++held_back_;
    return false;
  }
  tokens_ -= 1;
  *held_back = TakeHeldBack();
  return true;
}

bool DnsAuditGate::FreshName(const std::string& name, Clock::time_point now) {
  if (allowed_seen_.size() > kPruneAbove) {
    std::erase_if(allowed_seen_, [&](const auto& kv) { return now - kv.second >= limits_.allowed_window; });
  }
  auto [it, fresh] = allowed_seen_.try_emplace(name, now);
  if (fresh) return true;
  if (now - it->second < limits_.allowed_window) return false;
  it->second = now;
  return true;
}

}  // namespace mcpcell
