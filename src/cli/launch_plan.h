#pragma once
// The decision for one `mcpcell run`: isolate (with the CellSpec to enforce),
// allow (run plainly, only because a policy rule said so), or deny.

#include <string>

#include <nlohmann/json.hpp>

#include "core/cell_spec.h"
#include "core/run_request.h"
#include "util/error.h"

namespace mcpcell {

struct LaunchPlan {
  enum class Action { kIsolate, kAllow, kDeny };
  Action action = Action::kIsolate;
  std::string level = "auto";  ///< auto | native | container | docker | podman | gvisor
  std::string rule;            ///< which rule decided ("--isolate", "policy rule 0", "built-in default")
  std::string reason;          ///< one sentence for a human
  CellSpec spec;               ///< what will be enforced (also filled for kAllow: argv/env)
  nlohmann::json explain;      ///< decision details for --dry-run and the audit log
};

/// Checks and completes what CLI11 cannot: `--isolate SERVER` (the optional
/// level swallowed the server) becomes SERVER with level auto; an unknown
/// level or nothing to run is an error. Shared by run and policy explain.
Status NormalizeRequest(RunRequest* req);

/// Error::what of an npx package that could not be installed (exit 125).
inline constexpr const char* kInstallServer = "install the server";

/// The exit code for an error of PlanLaunch: 127 for a server command or
/// script not in the cell, 125 for an install that failed, else 2 (bad input).
int ExitCodeFor(const Error& plan_error);

/// Resolves the server, evaluates the policy and lowers everything into a plan.
/// Errors are bad input (malformed policy/profile, bad flag values).
Result<LaunchPlan> PlanLaunch(const RunRequest& req);

std::string ToString(LaunchPlan::Action action);

}  // namespace mcpcell
