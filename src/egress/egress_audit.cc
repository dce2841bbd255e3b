#include "egress/egress_audit.h"

#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/audit_log.h"

namespace mcpcell {

std::string EgressAudit::DenialSentence(const EgressAttempt& a) {
  std::string target = a.via == "dns" ? fmt::format("DNS name {} ({})", a.host, a.dns_type)
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

void EgressAudit::Record(const EgressAttempt& a) {
  if (log_ != nullptr) {
    if (auto ok = log_->Write(ToJson(a)); !ok) {
      std::fprintf(stderr, "mcpcell: audit log: %s\n", ok.error().Message().c_str());
    }
  }
  if (a.allowed) return;
  {
    std::lock_guard lock(mu_);
    if (!told_.insert(a.host).second) return;
  }
  std::fprintf(stderr, "mcpcell: %s\n", DenialSentence(a).c_str());
}

}  // namespace mcpcell
