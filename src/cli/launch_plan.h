#pragma once
// The decision for one `mcpcell run`: isolate (with the CellSpec to enforce),
// allow (run plainly, only because a policy rule said so), or deny.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cell_spec.h"
#include "core/run_request.h"
#include "cell/backend.h"
#include "cell/isolation_level.h"
#include "policy/evaluate.h"
#include "source/server_ref.h"
#include "util/error.h"

namespace mcpcell {

/// What `mcpcell run` will do, as values the executor reads. `explain` is
/// the same decision rendered for people (--dry-run, policy explain, the
/// audit log) and is never read back to decide anything.
struct LaunchPlan {
  enum class Action { kIsolate, kAllow, kDeny };
  Action action = Action::kIsolate;
  IsolationLevel level = IsolationLevel::kAuto;
  std::string rule;            ///< which rule decided ("--isolate", "policy rule 0", "built-in default")
  std::string reason;          ///< one sentence for a human
  std::string server;          ///< the server as the audit log names it
  ServerRef source;            ///< the source as resolved (registry entry applied)
  Decision decision;           ///< the policy's own decision (before --isolate)
  std::string profile;         ///< the permission profile's name
  /// A docker:// source: the image the container cell runs (no native fallback).
  std::optional<ImageRef> image;
  bool ids_given = false;      ///< --uid/--gid given: they win over an image's USER
  CellSpec spec;               ///< what will be enforced (also filled for kAllow: argv/env)
  /// kAllow: the file started, by the real path the policy judged (adv15),
  /// with spec.argv as written: argv[0] chooses some programs' mode (adv16:
  /// rbash started by its real path, bash, ran unrestricted). "": look up
  /// spec.argv[0] as written.
  std::string plain_exe;
  nlohmann::json explain;      ///< rendered for --dry-run and the audit log; never parsed back

  /// What the backend selection needs (cell/backend.h).
  CellTarget Target() const { return CellTarget{level, image, ids_given}; }
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

/// A `run` option only a cell or the relay enforces: refused when a policy
/// `allow` runs the server with neither (adv8), never accepted and ignored.
/// tests/unit/run_options_test.cc holds every run option to be in this
/// table or in its list of options that hold without a cell, so a new
/// option cannot slip past the refusal.
struct CellOnlyFlag {
  std::string_view flag;
  bool (*given)(const RunRequest& req);
};
const std::vector<CellOnlyFlag>& CellOnlyFlags();

}  // namespace mcpcell
