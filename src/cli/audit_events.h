#pragma once
// The events mcpcell run writes to the audit log, built from the LaunchPlan so
// every event names the same server the same way. Schema: docs/AUDIT.md.
// Secrets appear by name and host path only, never by value; the environment
// by variable name only.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/launch_plan.h"

namespace mcpcell {

/// {"event":"decision", server, source, trust_facts, rule, action, level,
///  reason, warnings, permissions}
nlohmann::json DecisionEvent(const LaunchPlan& plan);

/// {"event":"launch", server, backend, cell_id, pid, argv, limits, network}
nlohmann::json LaunchEvent(const LaunchPlan& plan, const std::string& cell_id, pid_t pid);

/// {"event":"exit", server, cell_id, status, signal, duration_ms, peak_memory_bytes}
/// `exit_status` is what mcpcell exits with (128+N for signal N); `signal` 0 if none.
nlohmann::json ExitEvent(const LaunchPlan& plan, const std::string& cell_id, int exit_status,
                         int signal, std::chrono::milliseconds duration,
                         std::optional<std::uint64_t> peak_memory_bytes);

}  // namespace mcpcell
