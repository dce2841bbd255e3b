#include "cli/cell_events.h"

#include <string>

#include "cli/audit_events.h"
#include "core/exit_codes.h"
#include "util/diag.h"

namespace mcpcell {

LaunchCallback RecordLaunch(const LaunchPlan& plan, const EventSink& record) {
  return [&plan, record](const nlohmann::json& launch) {
    nlohmann::json event = LaunchEvent(plan, launch.value("cell_id", ""), launch.value("pid", 0));
    for (const auto& [k, v] : launch.items()) event[k] = v;
    record(event);
  };
}

int FinishRun(const LaunchPlan& plan, const CellResult& r, const EventSink& record) {
  int signal = r.exit_code > 128 && r.exit_code < 128 + 65 && !r.error && !r.timed_out ? r.exit_code - 128 : 0;
  nlohmann::json exit_event = ExitEvent(plan, r.cell_id, r.exit_code, signal, r.duration, r.peak_memory_bytes);
  if (r.error) exit_event["error"] = r.error->Message();
  if (r.timed_out) exit_event["timed_out"] = true;
  record(exit_event);
  if (r.error) {
    std::string kind = r.exit_code == kExitIsolationUnavailable ? "isolation unavailable"
                       : r.exit_code == kExitNotFound           ? "server not found"
                       : r.exit_code == kExitCannotExec         ? "server not executable"
                       : r.exit_code == kExitUsage              ? "cannot run as asked"
                                                                : "cell setup failed";
    Say(kind + ": " + r.error->Message());
  }
  return r.exit_code;
}

}  // namespace mcpcell
