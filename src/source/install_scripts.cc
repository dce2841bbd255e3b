#include "source/install_scripts.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "source/npm_config.h"
#include "source/registry_url.h"
#include "source/lifecycle.h"
#include "source/script_bins.h"
#include "source/script_plan.h"
#include "source/url_credential.h"
#include "util/diag.h"
#include "util/json_input.h"
#include "util/lstat_kind.h"
#include "util/remove_tree.h"
#include "util/terminal_text.h"
#include "util/unique_fd.h"
#include "util/write_all.h"

extern char** environ;

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

/// The record that the scripts ran, in the install directory (which no
/// script cell can write: only package directories below it are).
constexpr const char* kScriptsRecord = ".mcpcell-install-scripts.json";

}  // namespace

Result<InstallScriptsMode> ParseInstallScriptsMode(const std::string& text) {
  if (text == "cell") return InstallScriptsMode::kCell;
  if (text == "skip") return InstallScriptsMode::kSkip;
  return MakeError("--install-scripts", text,
                   "expected cell (run npm install scripts in a native cell of their own) or skip (do not run them)");
}

std::string ToString(InstallScriptsMode mode) { return mode == InstallScriptsMode::kCell ? "cell" : "skip"; }

bool InstallScriptsRan(const std::string& cache_dir) {
  auto text = ReadTextFile(cache_dir + "/" + kScriptsRecord, "read install-scripts record");
  if (!text.ok()) return false;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  return j.is_object() && j.value("install_scripts", "") == "ran";
}

namespace {

std::string EventList(const std::vector<std::string>& events) {
  std::string out;
  for (const auto& e : events) out += (out.empty() ? "" : ", ") + e;
  return out;
}

/// "x (install)", or "x (install) and the packages it bundles: y (postinstall)".
std::string DescribeRun(const ScriptCellPlan& run) {
  std::string out = run.package.events.empty() ? "" : VisibleOnTerminal(run.package.name) + " (" + EventList(run.package.events) + ")";
  if (run.bundled.empty()) return out;
  out += out.empty() ? "the packages " + VisibleOnTerminal(run.package.name) + " bundles: " : " and of the packages it bundles: ";
  for (std::size_t i = 0; i < run.bundled.size(); ++i) {
    out += (i > 0 ? ", " : "") + VisibleOnTerminal(run.bundled[i].name) + " (" + EventList(run.bundled[i].events) + ")";
  }
  return out;
}

/// Removes the npmrc (and the CA copy) written for the cells when the runs are over.
struct RemoveOnExit {
  std::string path;
  std::string also;
  ~RemoveOnExit() {
    if (!path.empty()) ::unlink(path.c_str());
    if (!also.empty()) ::unlink(also.c_str());
  }
};

/// What the cells of this install get of npm's config (script_npm.h).
Result<ScriptNpm> PrepareScriptNpm(const std::string& install_dir, const NpmConfig& config,
                                   const std::set<std::string>& scopes, const SecretCheck& holds_secret,
                                   RemoveOnExit* npmrc) {
  ScriptNpmPlan plan = PlanScriptNpm(config, scopes, NpmProxyEnvironment(environ), holds_secret);
  for (const auto& w : plan.warnings) Warn(w);
  if (!plan.npm.unreached.empty()) {
    Warn("the install scripts do not reach " + VisibleOnTerminal(plan.npm.unreached) +
         ": mcpcell's egress proxy connects directly and cannot go through another proxy. A script that needs it "
         "fails; --install-scripts=skip installs without running them");
  }
  auto path = WriteScriptNpmrc(install_dir, plan.npmrc_text);
  if (!path.ok()) return path.error();
  npmrc->path = plan.npm.npmrc = *path;
  if (!plan.npm.cafile.empty() || !plan.npm.ca.empty()) {
    auto cafile = WriteScriptCafile(install_dir, plan.npm.cafile, plan.npm.ca);
    if (!cafile.ok()) return cafile.error();
    if (*cafile != plan.npm.cafile) npmrc->also = plan.npm.cafile = *cafile;
  }
  return plan.npm;
}

/// "@s" of "@s/name", "" for an unscoped name.
std::string ScopeOf(const std::string& name) {
  std::size_t slash = name.find('/');
  return name.size() > 1 && name[0] == '@' && slash != std::string::npos && slash > 1 ? name.substr(0, slash) : "";
}

}  // namespace

std::map<std::string, std::vector<std::string>> InstalledScopes(const NpmLockfile& lockfile) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& e : lockfile.entries) {
    // A bundled package is the tarball's own directory, named by it: its
    // scope must not open that scope's registry to the scripts.
    if (e.in_bundle) continue;
    // The path's name is the dependent's choice (an alias, "@corp/x":
    // "npm:pkg", is fetched as pkg); npm records the package's own name
    // when it differs. Both must name the scope.
    std::string path_scope = ScopeOf(e.rel.substr(e.rel.rfind("node_modules/") + std::string_view("node_modules/").size()));
    if (path_scope.empty() || (e.named && ScopeOf(e.name) != path_scope)) continue;
    out[path_scope].push_back(e.resolved);
  }
  return out;
}

std::map<std::string, std::vector<std::string>> InstalledScopes(const std::string& install_dir) {
  return InstalledScopes(ReadNpmLockfile(install_dir));
}

std::set<std::string> ScopesFetchedFromTheirRegistry(const std::map<std::string, std::vector<std::string>>& installed,
                                                     const NpmConfig& config) {
  std::set<std::string> out;
  for (const auto& [scope, resolved] : installed) {
    auto it = config.scopes.find(scope);
    if (it == config.scopes.end()) continue;  // fetched from the default registry, which is open anyway
    auto registry = NormalizeRegistryUrl(it->second);
    if (!registry.ok()) {
      out.insert(scope);  // the plan names it, and points it nowhere
      continue;
    }
    // Only a package npm fetched from the scope's own registry opens it: an
    // alias or a tarball URL whose manifest merely claims the scope has
    // another "resolved", or none (adv5).
    for (const auto& r : resolved) {
      if (!r.empty() && r.rfind(*registry, 0) == 0) {
        out.insert(scope);
        break;
      }
    }
  }
  return out;
}

namespace {

/// The program file of one cell, in its command view (which the cell sees
/// read-only, as it does the install directory around it).
constexpr const char* kProgramName = "lifecycle.sh";

/// The cell of `plan`, its program written into `view`.
Result<ScriptRun> MakeRun(const std::string& install_dir, const ScriptCellPlan& plan, const BinView& view,
                          std::chrono::milliseconds limit, const ScriptNpm& npm,
                          const std::vector<std::string>& bin_dirs) {
  auto program = LifecycleProgram(plan.steps);
  if (!program.ok()) return program.error();
  auto path = WriteFileForCells(view.dir() + "/" + kProgramName, *program, "write the install scripts' program");
  if (!path.ok()) return path.error();
  std::vector<std::string> bundled_dirs;
  for (const auto& b : plan.bundled) bundled_dirs.push_back(b.dir);
  // Names and paths as shown: a directory a tarball bundles is named by
  // the tarball, not the registry, and may hold escapes (adv2).
  return ScriptRun{install_dir, VisibleOnTerminal(plan.package.name), plan.package.dir, {"/bin/sh", *path}, limit, npm,
                   std::move(bundled_dirs), bin_dirs, view.dir(), plan.placed_below};
}

/// npm_package_resolved is where npm fetched the package: one with a user,
/// password or token in it (url_credential.h) is left out of the steps,
/// where npm would set it (a cell never gets a credential; a git URL with
/// its commit reads as one too: failing closed).
void DropCredentialUrls(ScriptCellPlan* plan, const SecretCheck& holds_secret) {
  for (auto& step : plan->steps) {
    std::erase_if(step.env, [&](const std::pair<std::string, std::string>& var) {
      return var.first == "npm_package_resolved" &&
             (HasUserinfo(var.second) || RegistryUrlHoldsToken(var.second, holds_secret));
    });
  }
}

/// What the record says ran in one cell.
nlohmann::json RecordOf(const std::string& install_dir, const ScriptCellPlan& plan) {
  const ScriptPackage& p = plan.package;
  nlohmann::json entry{{"package", p.name}, {"dir", p.dir.substr(install_dir.size())}, {"events", p.events}};
  for (const auto& b : plan.bundled) {
    entry["bundled"].push_back({{"package", b.name}, {"dir", b.dir.substr(install_dir.size())}, {"events", b.events}});
  }
  return entry;
}

Status WriteRecord(const std::string& install_dir, const nlohmann::json& ran, const nlohmann::json& removed) {
  nlohmann::json record{{"install_scripts", "ran"}, {"packages", ran}, {"optional_removed", removed}};
  std::string path = install_dir + "/" + kScriptsRecord;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) return ErrnoError("record that the install scripts ran in", path);
  return WriteAll(fd.get(), record.dump(2) + "\n", "write", path);
}

}  // namespace

Status RunPackageScripts(const std::string& install_dir, ScriptCell& cell, std::chrono::milliseconds limit,
                         const std::function<NpmConfig()>& npm_config, const SecretCheck& holds_secret) {
  // Everything is decided now, before any cell runs (script_plan.h): what
  // npm placed and marked optional (as in npm, a failed build of an
  // optional package is no failure of the install; it is removed instead),
  // the scopes whose registries the scripts may need, the cells and their
  // steps, the commands each cell sees (script_bins.h).
  const NpmLockfile lockfile = ReadNpmLockfile(install_dir);
  std::vector<ScriptCellPlan> planned = PlanScriptCells(install_dir, lockfile);
  for (auto& plan : planned) DropCredentialUrls(&plan, holds_secret);
  std::set<std::string> optional;
  for (const auto& e : lockfile.entries) {
    if (e.optional) optional.insert(install_dir + "/" + e.rel);
  }
  const std::vector<std::string> bin_dirs = planned.empty() ? std::vector<std::string>{} : BinDirs(install_dir);
  RemoveOnExit npmrc;
  ScriptNpm npm;
  if (!planned.empty()) {
    NpmConfig config = npm_config();
    auto prepared = PrepareScriptNpm(install_dir, config,
                                     ScopesFetchedFromTheirRegistry(InstalledScopes(lockfile), config), holds_secret, &npmrc);
    if (!prepared.ok()) return prepared.error();
    npm = std::move(*prepared);
  }
  const std::string reached = RegistriesReached(npm);
  const std::string network = reached.empty() ? std::string("no network") : "network only to " + reached;
  nlohmann::json ran = nlohmann::json::array();
  nlohmann::json removed = nlohmann::json::array();
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const ScriptPackage& p = planned[i].package;
    Say("running the install scripts of " + DescribeRun(planned[i]) + " in a native cell of their own (" +
        std::to_string(i + 1) + " of " + std::to_string(planned.size()) + "; it can write " + VisibleOnTerminal(p.dir) +
        (planned[i].bundled.empty() ? " only; " : " and the bundled packages' directories only; ") + network +
        "; --install-scripts=skip turns this off)");
    auto view = BinView::Make(install_dir, planned[i].bin_links);
    if (!view.ok()) return view.error();
    auto run = MakeRun(install_dir, planned[i], *view, limit, npm, bin_dirs);
    Status st = run.ok() ? cell.Run(*run) : Status(run.error());
    if (!st.ok() && optional.count(p.dir) == 0) return st;
    if (!st.ok()) {
      // The cell's message shows the name and path visibly already, and its
      // last lines each through the filter, on lines of their own.
      Warn(st.error().Message() + "\n  " + VisibleOnTerminal(p.name) +
           " is an optional dependency: removed, as npm does, and the install goes on");
      (void)RemoveTree(p.dir);
      removed.push_back(p.dir.substr(install_dir.size()));
      continue;
    }
    ran.push_back(RecordOf(install_dir, planned[i]));
  }
  return WriteRecord(install_dir, ran, removed);
}

}  // namespace mcpcell
