#include "cli/audit_events.h"

#include "audit/audit_log.h"
#include "guard/secret_check.h"

namespace mcpcell {
namespace {

nlohmann::json Base(const LaunchPlan& plan, const char* event) {
  return nlohmann::json{{"ts", AuditTimestamp()},
                        {"event", event},
                        {"server", plan.server}};
}

}  // namespace

nlohmann::json DecisionEvent(const LaunchPlan& plan) {
  nlohmann::json e = Base(plan, "decision");
  e["action"] = ToString(plan.action);
  e["rule"] = plan.rule;
  e["reason"] = plan.reason;
  e["level"] = ToString(plan.level);
  for (const char* key : {"source", "trust_facts", "policy", "permissions"}) {
    e[key] = plan.explain.contains(key) ? plan.explain[key] : nlohmann::json(nullptr);
  }
  e["warnings"] = plan.decision.warnings;
  return e;
}

nlohmann::json LaunchEvent(const LaunchPlan& plan, const std::string& cell_id, pid_t pid) {
  nlohmann::json e = Base(plan, "launch");
  const CellSpec& s = plan.spec;
  e["backend"] = plan.action == LaunchPlan::Action::kAllow ? std::string("none") : s.backend;
  e["cell_id"] = cell_id;
  e["pid"] = pid;
  // A token passed on the server's command line (`--github-token ghp_...`)
  // is not written into the log (adv12): such a word is replaced whole.
  nlohmann::json argv = nlohmann::json::array();
  for (const auto& word : s.argv) argv.push_back(HoldsBuiltinSecret(word) ? "[masked: a secret by the built-in rules]" : word);
  e["argv"] = argv;
  nlohmann::json env_names = nlohmann::json::array();
  for (const auto& [k, v] : s.env) env_names.push_back(k);
  e["env_names"] = env_names;
  e["limits"] = {
      {"memory_bytes", s.limits.memory_bytes.value ? nlohmann::json(*s.limits.memory_bytes.value) : nlohmann::json(nullptr)},
      {"pids", s.limits.pids.value ? nlohmann::json(*s.limits.pids.value) : nlohmann::json(nullptr)},
      {"cpus", s.limits.cpus.value ? nlohmann::json(*s.limits.cpus.value) : nlohmann::json(nullptr)},
      {"timeout_ms", s.limits.timeout ? nlohmann::json(s.limits.timeout->count()) : nlohmann::json(nullptr)}};
  e["network"] = ToString(s.network.mode);
  return e;
}

nlohmann::json ExitEvent(const LaunchPlan& plan, const std::string& cell_id, int exit_status,
                         int signal, std::chrono::milliseconds duration,
                         std::optional<std::uint64_t> peak_memory_bytes) {
  nlohmann::json e = Base(plan, "exit");
  e["cell_id"] = cell_id;
  e["status"] = exit_status;
  e["signal"] = signal;
  e["duration_ms"] = duration.count();
  e["peak_memory_bytes"] = peak_memory_bytes ? nlohmann::json(*peak_memory_bytes) : nlohmann::json(nullptr);
  return e;
}

}  // namespace mcpcell
