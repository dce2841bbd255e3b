#pragma once
// The launch and exit events of a cell run and the stderr line of a failed
// one, shared by every way `mcpcell run` starts a cell (a command or npx://
// source, a docker:// image), so all of them record runs the same way.

#include <functional>

#include <nlohmann/json.hpp>

#include "cell/cell_result.h"
#include "cli/launch_plan.h"

namespace mcpcell {

using EventSink = std::function<void(const nlohmann::json&)>;

/// A LaunchCallback that records the launch event of `plan`, completed with
/// what the cell reported (its "backend", "pid", container id... win over
/// what the plan alone knows: a docker cell is not "native").
LaunchCallback RecordLaunch(const LaunchPlan& plan, const EventSink& record);

/// Records the exit event for `r`, says on stderr why a failed run failed,
/// and returns the exit status mcpcell should end with.
int FinishRun(const LaunchPlan& plan, const CellResult& r, const EventSink& record);

}  // namespace mcpcell
