#pragma once
// One audit event per egress attempt (a proxied connection, a redirected
// connection, a SOCKS5 request, a DNS query), and the stderr sentence a user
// sees once per denied host. Schema: docs/AUDIT.md, event "egress".
//
// Thread-safe: AuditLog writes each line with one write(2), and the
// once-per-host set is guarded.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include <nlohmann/json_fwd.hpp>

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
  /// `log` may be null (no --audit-log): denials still reach stderr.
  EgressAudit(AuditLog* log, std::string server) : log_(log), server_(std::move(server)) {}

  /// Writes the event; for a denial also says on stderr, once per host:
  /// "mcpcell: egress denied: HOST:PORT (RULE); to allow it, HOW".
  void Record(const EgressAttempt& attempt);

  /// The sentence used on stderr and in a 403 body.
  static std::string DenialSentence(const EgressAttempt& attempt);

  /// {"event":"egress", "server", via, host, port, address, allowed, rule, ...}
  nlohmann::json ToJson(const EgressAttempt& attempt) const;

 private:
  AuditLog* log_;
  std::string server_;
  std::mutex mu_;
  std::set<std::string> told_;
};

}  // namespace mcpcell
