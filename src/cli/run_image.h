#pragma once
// The last step of `mcpcell run` for a docker:// source: the image in a
// container cell, with the same launch/exit audit events as any other run.

#include <functional>

#include <nlohmann/json.hpp>

#include "cell/run_context.h"
#include "cli/launch_plan.h"

namespace mcpcell {

/// Runs the image a docker:// plan names (plan.explain["image"], set by
/// PlanLaunch) at plan.level; returns the exit code for `mcpcell run`.
/// `record` receives the launch and exit audit events; `ctx` goes to the
/// cell (its egress proxy audits with it).
int RunImagePlan(const LaunchPlan& plan, const RunContext& ctx,
                 const std::function<void(const nlohmann::json&)>& record);

}  // namespace mcpcell
