#pragma once
// npx sources are installed OUTSIDE the cell, before launch, into a
// per-package, per-version cache:
//   $XDG_CACHE_HOME/mcpcell/npx/<@scope+name>@<version>/node_modules/<pkg>/...
// (~/.cache when XDG_CACHE_HOME is unset). The cell gets that directory
// read-only, so the server needs no network to install itself and its
// install cannot touch the user's files. npm runs with --ignore-scripts:
// install scripts would otherwise run on the host, unsandboxed, as the user.
// They run afterwards, each package's in a native cell of its own
// (source/install_scripts.h), unless --install-scripts=skip.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "source/install_scripts.h"
#include "source/server_ref.h"
#include "source/npm_config.h"
#include "util/error.h"

namespace mcpcell {

/// The side effects of package installation, behind an interface so tests
/// can use a fake.
class PackageTool {
 public:
  virtual ~PackageTool() = default;
  /// The exact version `spec` ("" = latest, a range, a tag) resolves to.
  virtual Result<std::string> ResolveVersion(const std::string& package, const std::string& spec) = 0;
  /// Installs package@version under `prefix` (prefix/node_modules/<package>).
  virtual Status Install(const std::string& package, const std::string& version,
                         const std::string& prefix) = 0;
  /// npm's effective config as Install used it (npm_config.h: registries,
  /// certificate authorities, proxies; never a token), for the install
  /// scripts' cells. An empty config = none known (the scripts then get no
  /// network).
  virtual Result<NpmConfig> Config() { return NpmConfig{}; }
};

/// How long one npm command may take by default (--install-timeout): a
/// registry that accepts and never answers would otherwise hang the launch
/// for as long as npm's own retries last, while the client shows nothing.
inline constexpr std::chrono::milliseconds kDefaultInstallTimeout = std::chrono::minutes(5);

/// The real npm: `npm view` and `npm install --prefix ... --ignore-scripts`,
/// stdin from /dev/null and stdout sent to stderr (stdout is the client's).
/// `cell_writable`: resolved host directories the cell may write; npm (and
/// what it runs through PATH) is never taken from them (source/host_tool.h).
/// Each command is killed (its whole process group) after `limit`, with an
/// error naming the limit and the flag; every 30 s a "still installing" line
/// goes to stderr.
/// `npm_scopes` (--npm-scope): scopes whose registry, as the user's npm
/// config names it, may serve a dependency of a package from another
/// registry (source/install_scopes.h; by default none may).
std::unique_ptr<PackageTool> MakeNpmTool(std::vector<std::string> cell_writable,
                                         std::chrono::milliseconds limit = kDefaultInstallTimeout,
                                         std::vector<std::string> npm_scopes = {});

/// $XDG_CACHE_HOME/mcpcell/npx, else $HOME/.cache/mcpcell/npx.
Result<std::string> NpxCacheRoot();

struct InstalledPackage {
  std::string version;      ///< exact version installed
  std::string cache_dir;    ///< the per-package per-version directory (mount read-only)
  std::string package_dir;  ///< cache_dir/node_modules/<package>
  std::string bin_path;     ///< absolute path of the bin script node runs (uvx: the console script)
  std::string interpreter;  ///< uvx: the venv's python that runs bin_path ("" for npx: node)
  bool installed_now = false;
  bool present = false;     ///< false only for a dry run of a package not yet in the cache
};

/// Finds the bin entry npx would run: "bin" as a string, the only entry, or
/// the entry named like the unscoped package. Reads package_dir/package.json.
Result<std::string> PackageBin(const std::string& package_dir, const std::string& package);

/// Removes half-finished install directories (cache_root/.install-<pid>-*,
/// and npm's config snapshots .npmrc-<pid>-*) that no live mcpcell holds
/// (util/work_dir_lock.h), wherever it runs: once their owner is gone, is
/// this process, or ten minutes after their last change. Returns how many it removed; adds
/// the number it looked at to *checked (for `mcpcell gc`).
int RemoveAbandonedInstalls(const std::string& cache_root, int* checked = nullptr);

/// Runs `install` on a fresh ".install-<pid>-XXXXXX" directory (0755) under
/// `cache_root` and renames it to `final_dir` when it succeeds (removed when
/// it fails): a half-finished install is never seen under the final name.
/// When another mcpcell published `final_dir` first, theirs is kept.
Status InstallIntoCache(const std::string& cache_root, const std::string& final_dir,
                        const std::function<Status(const std::string&)>& install);

/// What happens to the install scripts of a package being installed.
struct NpxScripts {
  InstallScriptsMode mode = InstallScriptsMode::kSkip;
  ScriptCell* cell = nullptr;  ///< kCell: where they run (cell/script_cell.h)
  std::chrono::milliseconds limit = kDefaultInstallTimeout;  ///< per package's cell
  /// kCell: the relay's secret rules, asked of the registry URLs the cells
  /// would get (guard/secret_check.h's HoldsBuiltinSecret; url_credential.h).
  SecretCheck holds_secret = {};
  /// Whether a running cell's server runs from this install directory (its
  /// record, cell/cell_record.h): such an install is never removed under it
  /// (adv22: a failed in-place run removed a live server's install).
  std::function<bool(const std::string&)> in_use = {};
};

/// Resolves the version, and installs into the cache unless already there
/// (when `may_install` is false a missing package is reported with present=false).
/// With `scripts.mode` kCell the install scripts run before the install is
/// published, and a package installed earlier without running them (an
/// older mcpcell, --install-scripts=skip) has them run now, in place; the
/// install directory records that they ran. With kSkip, the packages whose
/// scripts did not run are named on stderr. Progress lines go to stderr.
Result<InstalledPackage> EnsureNpxPackage(const ServerRef& ref, PackageTool& tool, const std::string& cache_root,
                                          bool may_install, const NpxScripts& scripts = {});

}  // namespace mcpcell
