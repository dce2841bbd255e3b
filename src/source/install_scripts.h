#pragma once
// npm install scripts of an npx:// package, run in cells of their own
// (issue 14 item 2). The host's `npm install --ignore-scripts` never runs a
// script; afterwards mcpcell plans, once and before any cell runs, which
// lifecycle scripts run for which package directory, in which cell and in
// which order (source/script_plan.h), and runs each cell's steps itself
// (`sh -c '<script>'` as npm's run-script does: source/lifecycle.h) — no
// npm in a cell decides anything. Each cell is native, writes that
// package's directory (and what its tarball bundles) and nothing else of
// the host, reaches the network only at the npm registries the install used
// (through mcpcell's egress proxy; source/script_npm.h), and has a private
// HOME and /tmp. One cell per package, dependencies first, so a script
// cannot change another package's code either. docs/THREAT_MODEL.md says
// what such a cell can reach.
//
// This file drives the runs; the cell itself is cell/script_cell.h (a
// higher layer), behind the ScriptCell interface.

#include <chrono>
#include <map>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "source/npm_config.h"
#include "source/script_plan.h"
#include "source/script_npm.h"
#include "util/error.h"

namespace mcpcell {

/// --install-scripts: what happens to the install scripts of an npx:// package.
enum class InstallScriptsMode {
  kCell,  ///< run them in a native cell of their own (the default)
  kSkip,  ///< do not run them (native modules will not load); said on stderr
};

/// "cell" | "skip".
Result<InstallScriptsMode> ParseInstallScriptsMode(const std::string& text);
std::string ToString(InstallScriptsMode mode);

/// One package's scripts to run in a cell.
struct ScriptRun {
  std::string install_dir;  ///< npm's prefix: read-only in the cell, the working directory
  std::string package;      ///< its name, for messages
  std::string package_dir;  ///< the only host directory the cell may write
  std::vector<std::string> argv;  ///< what runs: /bin/sh and the cell's LifecycleProgram
  std::chrono::milliseconds limit{0};  ///< --install-timeout
  /// What the cell gets of npm's config: the registries it reaches (through
  /// mcpcell's egress proxy, npm pointed at them), the npmrc, the cafile.
  ScriptNpm npm;
  /// Packages the package's tarball carries, below its node_modules
  /// (script_plan.h): their scripts run in its cell and may write their own
  /// directories too. The rest of its node_modules (packages npm placed
  /// there) stays read-only.
  std::vector<std::string> bundled;
  /// Every node_modules/.bin of the install, hidden in the cell, and the
  /// host directory (script_bins.h's BinView) that shows instead: its bin/
  /// over the nearest one, its empty/ over the rest. No view: nothing hidden.
  std::vector<std::string> bin_dirs = {};
  std::string bin_view = {};
  /// Packages npm placed below a bundled directory: read-only again.
  std::vector<std::string> read_only = {};
};

/// Runs one ScriptRun in a cell; errors name the package, the last lines it
/// printed, and (when no cell can be made here) what is missing and
/// --install-scripts=skip.
class ScriptCell {
 public:
  virtual ~ScriptCell() = default;
  virtual Status Run(const ScriptRun& run) = 0;
};

/// Whether the install scripts of the install at `cache_dir` ran (the
/// record RunPackageScripts leaves; a second launch does not rerun them).
bool InstallScriptsRan(const std::string& cache_dir);

/// Runs the install scripts of every package below install_dir/node_modules
/// in `cell`, one cell per PlanScriptCells entry, in its order; stops at
/// the first failure, except of a package npm's hidden lockfile marks
/// optional: that one is removed (npm's rule) with a warning. Then records
/// in install_dir that they ran. `npm_config` (npm run for its config) is
/// asked only when some package has scripts; what the cells get of it is
/// PlanScriptNpm's, with the scopes of the installed packages and
/// `holds_secret` for its registry URLs, and the npmrc it writes in
/// install_dir is removed again.
Status RunPackageScripts(const std::string& install_dir, ScriptCell& cell, std::chrono::milliseconds limit,
                         const std::function<NpmConfig()>& npm_config, const SecretCheck& holds_secret);

/// The scopes ("@scope") of the packages npm installed into install_dir, as
/// its hidden lockfile (node_modules/.package-lock.json, written by the
/// host's npm before any script ran) names them, each with the "resolved"
/// URLs of its packages ("" where npm recorded none): a bundled package
/// (inBundle) is a directory its tarball named, and counts for nothing; an
/// alias counts only when the name npm fetched (its "name") has the scope of
/// its path too ("@corp/x": "npm:lodash" opens no @corp registry).
std::map<std::string, std::vector<std::string>> InstalledScopes(const NpmLockfile& lockfile);
std::map<std::string, std::vector<std::string>> InstalledScopes(const std::string& install_dir);

/// Of `installed`, the scopes whose configured registry some package of
/// theirs was fetched from ("resolved" below it): the registries the
/// scripts may reach besides the default one. A package whose manifest
/// only claims a scope (an alias, a tarball URL) opens nothing (adv5).
std::set<std::string> ScopesFetchedFromTheirRegistry(const std::map<std::string, std::vector<std::string>>& installed,
                                                     const NpmConfig& config);

}  // namespace mcpcell
