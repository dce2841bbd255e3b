#pragma once
// One audit event per egress attempt (a proxied connection, a redirected
// connection, a SOCKS5 request, a DNS query), and the stderr sentence a user
// sees once per denied host. Schema: docs/AUDIT.md, event "egress".
//
// A cell decides how many attempts it makes, so the log it can cause is
// bounded here, for every source at once (issue 10 item 8):
//   - free text is capped (host 253 bytes, the other fields kMaxText), the
//     cut marked "...(N more bytes)";
//   - a denial that repeats one already logged — same via, host, port, DNS
//     type and rule — within Limits::repeat_window is counted, not written;
//     the next line for it carries "repeats": N (distinct names, as DNS
//     exfiltration uses, are never coalesced: each is a line of its own);
//   - every line passes one token bucket (DnsAuditGate: burst, then a rate);
//     the next line that passes carries "held_back": N;
//   - when the audit ends, one "egress_summary" event gives what is still
//     pending and the run's totals, so lines + held_back + repeats = attempts.
//
// Fails closed, as the relay does (docs/AUDIT.md, "Why refused until
// restart"): from the first write that fails (disk full, I/O error, the log
// removed, renamed or replaced) every new connection and DNS lookup of the
// cell is refused (RefuseIfBroken) until mcpcell starts again, even once the
// log could be written again: a cell that fills the log's filesystem and
// frees it must not choose which of its connections go unrecorded.
//
// Thread-safe: AuditLog writes each line with one write(2); the gate, the
// counts, the once-per-host set and the failure are guarded by one mutex.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "egress/dns_audit_gate.h"

namespace mcpcell {

class AuditLog;

struct EgressAttempt {
  /// How the attempt arrived: "connect" (HTTP CONNECT), "http" (plain HTTP
  /// forwarding), "socks5", "redirect" (a program that ignored the proxy
  /// variables; caught by the cell's redirect rule), "dns" (a query to the stub).
  std::string via;
  std::string host;            ///< the name asked for (or the IP literal)
  std::uint16_t port = 0;      ///< 0 for dns
  std::string address;         ///< resolved address connected to; empty if none
  bool allowed = false;
  std::string rule;            ///< RuleVerdict::rule, or the address check that refused
  std::string how_to_allow;    ///< for denials: what would allow it
  std::string error;           ///< allowed but failed: "connection refused", "name not found", ...
  std::string dns_type;        ///< dns only: "A", "AAAA", ...
  std::uint64_t bytes_out = 0; ///< cell → upstream
  std::uint64_t bytes_in = 0;  ///< upstream → cell
  std::chrono::milliseconds duration{0};
};

class EgressAudit {
 public:
  using Clock = DnsAuditGate::Clock;

  struct Limits {
    DnsAuditGate::Limits bucket;                     ///< lines per burst and per second
    std::chrono::milliseconds repeat_window{5000};  ///< identical denials coalesce within this
  };

  /// At most this many bytes of a free-text field (rule, how_to_allow, error).
  static constexpr std::size_t kMaxText = 1024;

  /// `log` may be null (no --audit-log): denials still reach stderr.
  EgressAudit(AuditLog* log, std::string server) : EgressAudit(log, std::move(server), Limits{}) {}
  EgressAudit(AuditLog* log, std::string server, Limits limits)
      : log_(log), server_(std::move(server)), limits_(limits), gate_(limits.bucket) {}

  /// Writes the egress_summary event if anything was held back or coalesced.
  ~EgressAudit();
  EgressAudit(const EgressAudit&) = delete;
  EgressAudit& operator=(const EgressAudit&) = delete;

  /// Writes the event (unless coalesced or held back: then counted); for a
  /// denial also says on stderr, once per host:
  /// "mcpcell: egress denied: HOST:PORT (RULE); to allow it, HOW".
  void Record(const EgressAttempt& attempt) { Record(attempt, Clock::now()); }
  /// The same at a given time (tests need no clock).
  void Record(const EgressAttempt& attempt, Clock::time_point now);

  /// After a failed audit write: marks `attempt` denied, its rule naming the
  /// log's problem and how_to_allow what to do, and returns true (the caller
  /// refuses it and records it like any denial: written only if the log has
  /// recovered, told on stderr once per host). False while the log works.
  bool RefuseIfBroken(EgressAttempt& attempt);
  /// Whether a write has failed (RefuseIfBroken would refuse).
  bool Broken() const { return failed_.load(std::memory_order_acquire); }

  /// Whether Record does anything with an allowed attempt (an audit log is
  /// open). A tunnel that nobody will read need not keep its attempt.
  bool WritesAllowed() const { return log_ != nullptr; }

  /// The sentence used on stderr and in a 403 body.
  static std::string DenialSentence(const EgressAttempt& attempt);

  /// {"event":"egress", "server", via, host, port, address, allowed, rule, ...}
  nlohmann::json ToJson(const EgressAttempt& attempt) const;

  /// `attempt` with every free-text field capped (see above).
  static EgressAttempt Capped(EgressAttempt attempt);

 private:
  /// A denial already logged in this window: count it. Caller holds mu_.
  bool CoalesceRepeat(const EgressAttempt& a, Clock::time_point now, std::uint64_t* repeats_before);
  /// Forgets denials outside the window (their pending counts go to
  /// repeats_unlisted_). Caller holds mu_.
  void PruneRepeats(Clock::time_point now);
  void Write(const nlohmann::json& event);
  void TellOnStderr(const EgressAttempt& a);

  struct Repeat {
    Clock::time_point logged_at;
    std::uint64_t pending = 0;  ///< identical denials since the line logged at logged_at
    EgressAttempt attempt;      ///< for the summary
  };

  AuditLog* log_;
  std::string server_;
  Limits limits_;
  std::mutex mu_;
  DnsAuditGate gate_;
  std::map<std::string, Repeat> repeats_;
  std::uint64_t lines_ = 0, held_back_total_ = 0, repeats_total_ = 0, repeats_unlisted_ = 0;
  std::set<std::string> told_;
  std::string failure_;               ///< the first failed write's error; refusals from then on
  std::atomic<bool> failed_ = false;  ///< failure_ is set (read without the mutex per attempt)
};

}  // namespace mcpcell
