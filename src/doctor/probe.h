#pragma once
// `mcpcell doctor`: what this machine supports for isolation. Each probe tries
// the real thing where it can (unshare in a child, connect to the engine
// socket) instead of guessing from version numbers.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace mcpcell::doctor {

/// The outcome of one check.
struct Probe {
  enum class Status { kOk, kWarn, kMissing };
  std::string name;    ///< stable, short: "user namespaces", "cgroup v1", "docker socket"
  Status status = Status::kMissing;
  std::string value;   ///< what was found: "6.18.44", "ABI 7", "/run/docker.sock: reachable"
  std::string detail;  ///< why the status is what it is (mostly for warn/missing)
  std::string fix;     ///< what to do about it; empty when nothing is needed
};

/// "ok", "warn" or "missing".
const char* StatusName(Probe::Status s);

/// Whether one backend can run cells on this machine, and why (not).
struct BackendVerdict {
  bool usable = false;
  std::string why;
};

/// Every check, plus the per-backend summary derived from them.
struct MachineReport {
  std::vector<Probe> checks;
  /// "native", "docker", "podman", "gvisor".
  std::map<std::string, BackendVerdict> backends;
};

/// Runs every probe against this machine as the calling user. Forks short-lived
/// children (user namespace tests) and connects to engine sockets with a short
/// timeout; changes nothing on the machine.
MachineReport ProbeMachine();

/// {"checks":[{name,status,value,detail,fix}...],"backends":{name:{usable,why}}}.
nlohmann::json ReportToJson(const MachineReport& report);

/// A human table: check, status, value; "why:" and "fix:" lines under
/// checks that are not ok; then one line per backend.
std::string FormatReportTable(const MachineReport& report);

}  // namespace mcpcell::doctor
