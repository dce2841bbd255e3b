#include "egress/egress_audit.h"

#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/audit_log.h"

namespace mcpcell {

std::string EgressAudit::DenialSentence(const EgressAttempt& a) {
  // An IPv6 literal is bracketed so its port stays readable: [::1]:80.
  bool v6 = a.host.find(':') != std::string::npos;
  std::string target = a.via == "dns" ? fmt::format("DNS name {} ({})", a.host, a.dns_type)
                       : v6           ? fmt::format("[{}]:{}", a.host, a.port)
                                      : fmt::format("{}:{}", a.host, a.port);
  std::string s = fmt::format("egress denied: {} ({})", target, a.rule);
  if (!a.how_to_allow.empty()) s += "; to allow it, " + a.how_to_allow;
  return s;
}

nlohmann::json EgressAudit::ToJson(const EgressAttempt& a) const {
  nlohmann::json j{{"event", "egress"},  {"server", server_},   {"via", a.via},
                   {"host", a.host},     {"port", a.port},     {"address", a.address},
                   {"allowed", a.allowed}, {"rule", a.rule},   {"bytes_out", a.bytes_out},
                   {"bytes_in", a.bytes_in}, {"duration_ms", a.duration.count()}};
  if (!a.how_to_allow.empty()) j["how_to_allow"] = a.how_to_allow;
  if (!a.error.empty()) j["error"] = a.error;
  if (!a.dns_type.empty()) j["dns_type"] = a.dns_type;
  return j;
}

namespace {

// DNS denials are told per parent domain (the last two labels): an
// exfiltration attempt asks for thousands of random names under one domain,
// and stderr should say so once, not once per name.
std::string StderrKey(const EgressAttempt& a) {
  if (a.via != "dns") return a.host;
  std::size_t last = a.host.rfind('.');
  if (last == std::string::npos || last == 0) return a.host;
  std::size_t prev = a.host.rfind('.', last - 1);
  return prev == std::string::npos ? a.host : "*" + a.host.substr(prev);
}

// After this many distinct denials stderr says it stops repeating them;
// the audit log still has every attempt.
constexpr std::size_t kMaxToldHosts = 20;

}  // namespace

void EgressAudit::Record(const EgressAttempt& a) {
  if (log_ != nullptr) {
    if (auto ok = log_->Write(ToJson(a)); !ok) {
      std::fprintf(stderr, "mcpcell: audit log: %s\n", ok.error().Message().c_str());
    }
  }
  if (a.allowed) return;
  {
    std::lock_guard lock(mu_);
    if (told_.size() > kMaxToldHosts) return;
    if (!told_.insert(StderrKey(a)).second) return;
    if (told_.size() > kMaxToldHosts) {
      std::fprintf(stderr, "mcpcell: more egress denials follow; only the audit log (--audit-log) lists them\n");
      return;
    }
  }
  std::fprintf(stderr, "mcpcell: %s\n", DenialSentence(a).c_str());
}

}  // namespace mcpcell
