#pragma once
// Reaping containers a dead mcpcell left behind (kill -9, power loss): every
// mcpcell container is labelled with its supervisor's pid and start time; a
// container whose supervisor is gone is force-removed.

#include <string>
#include <vector>

#include "cell/docker/engine_client.h"
#include "util/error.h"

namespace mcpcell::docker {

/// Start time of process `pid` (field 22 of /proc/PID/stat, clock ticks since
/// boot), or "" when there is no such process.
std::string ProcessStartTime(long pid);

/// Whether the supervisor named by the labels is still the same live process.
bool SupervisorAlive(const std::string& pid_label, const std::string& start_label);

/// Force-removes every mcpcell container whose supervisor is dead. Returns
/// the names removed.
Result<std::vector<std::string>> ReapOrphans(const EngineClient& engine);

}  // namespace mcpcell::docker
