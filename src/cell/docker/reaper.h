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

/// Our pid namespace, as readlink(/proc/self/ns/pid) names it ("pid:[N]"), or "".
std::string OwnPidNamespace();

/// Whether the supervisor named by the labels is still the same live process.
bool SupervisorAlive(const std::string& pid_label, const std::string& start_label);

/// Whether a container with these labels may be reaped by us: its supervisor
/// ran in our pid namespace (else its pid is not ours to judge) and is dead.
bool Reapable(const std::string& pid_label, const std::string& start_label, const std::string& pidns_label,
              const std::string& own_pidns);

/// Force-removes every mcpcell container whose supervisor is dead. Returns
/// the names removed.
Result<std::vector<std::string>> ReapOrphans(const EngineClient& engine);

}  // namespace mcpcell::docker
