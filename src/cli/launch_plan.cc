// The first plan: explicit isolation of a plain command. The policy work
// (issue 3) replaces this file with sources, policy evaluation and profiles.
#include "cli/launch_plan.h"

#include <cstdio>

#include "cell/spec_builder.h"

namespace mcpcell {

std::string ToString(LaunchPlan::Action action) {
  switch (action) {
    case LaunchPlan::Action::kIsolate: return "isolate";
    case LaunchPlan::Action::kAllow: return "allow";
    case LaunchPlan::Action::kDeny: return "deny";
  }
  return "?";
}

Result<LaunchPlan> PlanLaunch(const RunRequest& req) {
  if (req.server) {
    return MakeError("SERVER", *req.server, "server sources (npx://, uvx://, docker://, registry names) are not supported yet; give the command after --");
  }
  if (req.policy_file || req.profile) {
    return MakeError("--policy/--permission-profile", "", "not supported yet");
  }
  LaunchPlan plan;
  plan.level = req.isolate && !req.isolate->empty() ? *req.isolate : "auto";
  plan.rule = req.isolate ? "--isolate" : "built-in default";
  plan.reason = req.isolate ? "isolation requested on the command line" : "with no policy every server is isolated";
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(req, req.command, &notes);
  if (!spec) return spec.error();
  if (req.verbose) {
    for (const auto& n : notes) std::fprintf(stderr, "mcpcell: %s\n", n.c_str());
  }
  plan.spec = std::move(*spec);
  plan.explain = {{"action", ToString(plan.action)}, {"level", plan.level}, {"rule", plan.rule},
                  {"reason", plan.reason}, {"notes", notes}};
  return plan;
}

}  // namespace mcpcell
