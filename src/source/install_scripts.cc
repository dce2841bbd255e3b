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
#include "source/script_bins.h"
#include "util/diag.h"
#include "util/json_input.h"
#include "util/lstat_kind.h"
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

struct Manifest {
  std::string name;
  std::vector<std::string> events;
  std::vector<std::string> deps;
};

/// npm's rule for what an install runs (@npmcli/run-script, npm's docs
/// "scripts": "If there is a binding.gyp file in the root of your package
/// and you haven't defined your own install or preinstall scripts, npm will
/// default the install command to compile using node-gyp").
Manifest ReadManifest(const fs::path& dir, const std::string& dir_name) {
  Manifest m{dir_name, {}, {}};
  // Regular files only: not a FIFO that would hang the read.
  auto text = IsRealFile(dir / "package.json") ? ReadTextFile((dir / "package.json").string(), "read package manifest")
                                               : Result<std::string>(MakeError("read package manifest"));
  nlohmann::json j = text.ok() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (!j.is_object()) j = nlohmann::json::object();
  const nlohmann::json scripts = j.contains("scripts") && j["scripts"].is_object() ? j["scripts"] : nlohmann::json::object();
  bool gyp = IsRealFile(dir / "binding.gyp") && !scripts.contains("install") && !scripts.contains("preinstall");
  for (const char* e : {"preinstall", "install", "postinstall"}) {
    if ((scripts.contains(e) && scripts[e].is_string()) || (gyp && std::string(e) == "install")) m.events.push_back(e);
  }
  for (const char* field : {"dependencies", "optionalDependencies"}) {
    if (!j.contains(field) || !j[field].is_object()) continue;
    for (const auto& [dep, range] : j[field].items()) m.deps.push_back(dep);
  }
  return m;
}

/// Every package directory below `node_modules`, depth first (a package's
/// own node_modules included), skipping symlinks (npm links, a planted link
/// out of the tree) and dot-directories (.bin, .cache).
void CollectPackages(const fs::path& node_modules, std::vector<std::pair<fs::path, std::string>>* out) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(node_modules, ec)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  for (const auto& p : entries) {
    std::string name = p.filename().string();
    if (name.empty() || name[0] == '.' || !IsRealDir(p)) continue;
    if (name[0] == '@') {
      std::vector<fs::path> scoped;
      for (const auto& s : fs::directory_iterator(p, ec)) scoped.push_back(s.path());
      std::sort(scoped.begin(), scoped.end());
      for (const auto& s : scoped) {
        if (s.filename().string()[0] == '.' || !IsRealDir(s)) continue;
        out->emplace_back(s, name + "/" + s.filename().string());
        if (IsRealDir(s / "node_modules")) CollectPackages(s / "node_modules", out);
      }
      continue;
    }
    out->emplace_back(p, name);
    if (IsRealDir(p / "node_modules")) CollectPackages(p / "node_modules", out);
  }
}

/// Where `dep` resolves from the package at `from`: the nearest
/// node_modules/<dep> in `from`'s own node_modules or an ancestor's, not
/// above `top` (the install's node_modules).
std::string Resolve(const fs::path& from, const std::string& dep, const fs::path& top,
                    const std::set<std::string>& known) {
  for (fs::path d = from;; d = d.parent_path()) {
    fs::path candidate = (d.filename() == "node_modules" ? d : d / "node_modules") / dep;
    if (known.count(candidate.string()) > 0) return candidate.string();
    if (d == top || !d.has_relative_path() || d.string().size() < top.string().size()) return {};
  }
}

/// Depth-first post-order over the dependency edges: dependencies first;
/// a cycle is cut where it closes (npm runs such a cycle in some order too).
void Visit(const std::string& dir, const std::map<std::string, std::vector<std::string>>& edges,
           std::set<std::string>* seen, std::vector<std::string>* order) {
  // An explicit stack, not recursion: a tarball can ship a chain of
  // 150,000 nested packages, which overflowed the call stack (adv4).
  struct Frame {
    const std::string* dir;
    std::size_t next = 0;
  };
  static const std::vector<std::string> kNone;
  if (!seen->insert(dir).second) return;
  std::vector<Frame> stack{{&dir}};
  while (!stack.empty()) {
    Frame& top = stack.back();
    auto it = edges.find(*top.dir);
    const std::vector<std::string>& deps = it != edges.end() ? it->second : kNone;
    if (top.next < deps.size()) {
      const std::string& d = deps[top.next++];
      if (seen->insert(d).second) stack.push_back({&d});
      continue;
    }
    order->push_back(*top.dir);
    stack.pop_back();
  }
}

/// Whether a lockfile key is a path below the install: "node_modules/..."
/// with no "." or ".." step ("b..x" is a name, adv4).
bool IsInstallPath(const std::string& rel) {
  if (rel.rfind("node_modules/", 0) != 0) return false;
  for (std::size_t at = 0; at <= rel.size();) {
    std::size_t slash = rel.find('/', at);
    std::string_view step = std::string_view(rel).substr(at, (slash == std::string::npos ? rel.size() : slash) - at);
    if (step.empty() || step == "." || step == "..") return false;
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  return true;
}

/// What npm's hidden lockfile says of the packages (their directories).
struct LockfileMarks {
  std::set<std::string> optional;   ///< reached only through optionalDependencies
  std::set<std::string> in_bundle;  ///< carried inside another package's tarball
};
LockfileMarks ReadLockfileMarks(const std::string& install_dir);

/// A cell's worth: a package and the bundled packages whose scripts its
/// `npm rebuild` runs (npm selects no bundled package on its own).
struct PlannedRun {
  ScriptPackage package;
  std::vector<ScriptPackage> bundled;
};
std::vector<PlannedRun> GroupBundled(const std::vector<ScriptPackage>& packages, const std::set<std::string>& in_bundle,
                                     const std::string& install_dir);

}  // namespace

Result<InstallScriptsMode> ParseInstallScriptsMode(const std::string& text) {
  if (text == "cell") return InstallScriptsMode::kCell;
  if (text == "skip") return InstallScriptsMode::kSkip;
  return MakeError("--install-scripts", text,
                   "expected cell (run npm install scripts in a native cell of their own) or skip (do not run them)");
}

std::string ToString(InstallScriptsMode mode) { return mode == InstallScriptsMode::kCell ? "cell" : "skip"; }

std::vector<ScriptPackage> FindScriptPackages(const std::string& node_modules) {
  std::vector<std::pair<fs::path, std::string>> all;
  CollectPackages(node_modules, &all);
  std::map<std::string, Manifest> manifests;
  std::set<std::string> known;
  for (const auto& [dir, name] : all) {
    manifests.emplace(dir.string(), ReadManifest(dir, name));
    known.insert(dir.string());
  }
  // Edges between packages with scripts only: the rest have nothing to wait for.
  std::map<std::string, std::vector<std::string>> edges;
  std::vector<std::string> with_scripts;
  for (const auto& [dir, m] : manifests) {
    if (m.events.empty()) continue;
    with_scripts.push_back(dir);
    for (const auto& dep : m.deps) {
      std::string to = Resolve(fs::path(dir), dep, fs::path(node_modules), known);
      if (!to.empty() && to != dir && !manifests[to].events.empty()) edges[dir].push_back(to);
    }
  }
  std::set<std::string> seen;
  std::vector<std::string> order;
  for (const auto& dir : with_scripts) Visit(dir, edges, &seen, &order);
  std::vector<ScriptPackage> out;
  for (const auto& dir : order) {
    const Manifest& m = manifests[dir];
    out.push_back({m.name, dir, m.events});
  }
  return out;
}

std::vector<std::string> PackagesWithInstallScripts(const std::string& node_modules) {
  std::set<std::string> names;
  for (const auto& p : FindScriptPackages(node_modules)) names.insert(p.name);
  return {names.begin(), names.end()};
}

std::vector<std::string> NpmRebuildArgv(const std::string& package_dir) {
  // --ignore-scripts=false: a user's npmrc saying ignore-scripts=true is
  // about the host; the cell is the reason they may run.
  return {"npm", "rebuild", "--foreground-scripts", "--no-bin-links", "--ignore-scripts=false", "--no-audit",
          "--no-fund", package_dir};
}

bool InstallScriptsRan(const std::string& cache_dir) {
  auto text = ReadTextFile(cache_dir + "/" + kScriptsRecord, "read install-scripts record");
  if (!text.ok()) return false;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  return j.is_object() && j.value("install_scripts", "") == "ran";
}

namespace {

/// The "packages" of npm's hidden lockfile, keyed by their path below the
/// install ("node_modules/x/node_modules/@s/y"); empty when there is none.
std::vector<std::pair<std::string, nlohmann::json>> LockfilePackages(const std::string& install_dir) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  std::string lock = install_dir + "/node_modules/.package-lock.json";
  if (!IsRealFile(lock)) return out;
  auto text = ReadTextFile(lock, "read npm's hidden lockfile");
  nlohmann::json j = text.ok() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (!j.is_object() || !j.contains("packages") || !j["packages"].is_object()) return out;
  for (const auto& [rel, meta] : j["packages"].items()) {
    // Relative paths below the install ("node_modules/x"), nothing else.
    if (!IsInstallPath(rel) || !meta.is_object()) continue;
    out.emplace_back(rel, meta);
  }
  return out;
}

LockfileMarks ReadLockfileMarks(const std::string& install_dir) {
  LockfileMarks out;
  for (const auto& [rel, meta] : LockfilePackages(install_dir)) {
    if (meta.value("optional", false)) out.optional.insert(install_dir + "/" + rel);
    if (meta.value("inBundle", false)) out.in_bundle.insert(install_dir + "/" + rel);
  }
  return out;
}

/// The package whose tarball carries `dir`: the nearest package above it
/// that is no bundled one itself. "" when there is none below the install.
std::string BundlerOf(const std::string& dir, const std::set<std::string>& in_bundle, const std::string& install_dir) {
  fs::path at(dir);
  for (;;) {
    fs::path up = at.parent_path();  // .../node_modules or .../node_modules/@scope
    if (!up.filename().empty() && up.filename().string()[0] == '@') up = up.parent_path();
    if (up.filename() != "node_modules") return {};
    fs::path owner = up.parent_path();
    if (owner.string().size() <= install_dir.size()) return {};  // the install itself bundles nothing
    if (in_bundle.count(owner.string()) == 0) return owner.string();
    at = owner;
  }
}

/// "name" or "@scope/name" from a directory below some node_modules.
std::string PackageNameOf(const fs::path& dir) {
  std::string scope = dir.parent_path().filename().string();
  return !scope.empty() && scope[0] == '@' ? scope + "/" + dir.filename().string() : dir.filename().string();
}

std::vector<PlannedRun> GroupBundled(const std::vector<ScriptPackage>& packages, const std::set<std::string>& in_bundle,
                                     const std::string& install_dir) {
  std::set<std::string> with_scripts;
  for (const auto& p : packages) with_scripts.insert(p.dir);
  std::vector<PlannedRun> out;
  std::map<std::string, std::size_t> index;                  // bundler dir -> out
  std::map<std::string, std::vector<ScriptPackage>> waiting;  // for a bundler with scripts of its own, later
  for (const auto& p : packages) {
    std::string bundler = in_bundle.count(p.dir) > 0 ? BundlerOf(p.dir, in_bundle, install_dir) : std::string();
    if (bundler.empty()) {
      out.push_back({p, std::move(waiting[p.dir])});
      index[p.dir] = out.size() - 1;
      continue;
    }
    if (auto it = index.find(bundler); it != index.end()) {
      out[it->second].bundled.push_back(p);
    } else if (with_scripts.count(bundler) > 0) {
      waiting[bundler].push_back(p);
    } else {
      // A bundler without scripts of its own still runs its bundled ones.
      out.push_back({{PackageNameOf(bundler), bundler, {}}, {p}});
      index[bundler] = out.size() - 1;
    }
  }
  return out;
}

std::string EventList(const std::vector<std::string>& events) {
  std::string out;
  for (const auto& e : events) out += (out.empty() ? "" : ", ") + e;
  return out;
}

/// "x (install)", or "x (install) and the packages it bundles: y (postinstall)".
std::string DescribeRun(const PlannedRun& run) {
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
                                   const std::set<std::string>& scopes, RemoveOnExit* npmrc) {
  ScriptNpmPlan plan = PlanScriptNpm(config, scopes, NpmProxyEnvironment(environ));
  for (const auto& w : plan.warnings) Warn(w);
  if (!plan.npm.unreached.empty()) {
    Warn("the install scripts do not reach " + VisibleOnTerminal(plan.npm.unreached) +
         ": mcpcell's egress proxy connects directly and cannot go through another proxy. A script that needs it "
         "fails; --install-scripts=skip installs without running them");
  }
  auto path = WriteScriptNpmrc(install_dir, plan.npmrc_text);
  if (!path.ok()) return path.error();
  npmrc->path = plan.npm.npmrc = *path;
  if (!plan.npm.cafile.empty()) {
    auto cafile = WriteScriptCafile(install_dir, plan.npm.cafile);
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

std::map<std::string, std::vector<std::string>> InstalledScopes(const std::string& install_dir) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [rel, meta] : LockfilePackages(install_dir)) {
    // A bundled package is the tarball's own directory, named by it: its
    // scope must not open that scope's registry to the scripts.
    if (meta.value("inBundle", false)) continue;
    // The path's name is the dependent's choice (an alias, "@corp/x":
    // "npm:pkg", is fetched as pkg); npm records the package's own name
    // when it differs. Both must name the scope.
    std::string path_scope = ScopeOf(rel.substr(rel.rfind("node_modules/") + std::string_view("node_modules/").size()));
    bool renamed = meta.contains("name") && meta["name"].is_string();
    if (path_scope.empty() || (renamed && ScopeOf(meta["name"].get<std::string>()) != path_scope)) continue;
    out[path_scope].push_back(meta.contains("resolved") && meta["resolved"].is_string() ? meta["resolved"].get<std::string>()
                                                                                       : std::string());
  }
  return out;
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

Status RunPackageScripts(const std::string& install_dir, ScriptCell& cell, std::chrono::milliseconds limit,
                         const std::function<NpmConfig()>& npm_config) {
  // Which packages npm itself counts as optional (reached only through
  // optionalDependencies): as in npm, a failed build of one is no failure
  // of the install; the package is removed instead.
  LockfileMarks marks = ReadLockfileMarks(install_dir);
  // The scopes whose registries the scripts may need, read before the lockfile goes.
  const auto installed_scopes = InstalledScopes(install_dir);
  // npm's hidden lockfile knows a package has scripts only when the
  // registry said so (hasInstallScript); without it, `npm rebuild` reads
  // every package.json from disk, as FindScriptPackages does, and runs
  // what is there rather than skipping it silently.
  std::error_code ec;
  fs::remove(install_dir + "/node_modules/.package-lock.json", ec);
  auto found = FindScriptPackages(install_dir + "/node_modules");
  RemoveOnExit npmrc;
  ScriptNpm npm;
  if (!found.empty()) {
    NpmConfig config = npm_config();
    auto prepared =
        PrepareScriptNpm(install_dir, config, ScopesFetchedFromTheirRegistry(installed_scopes, config), &npmrc);
    if (!prepared.ok()) return prepared.error();
    npm = std::move(*prepared);
  }
  const std::string reached = RegistriesReached(npm);
  const std::string network = reached.empty() ? std::string("no network") : "network only to " + reached;
  // A bundled package's scripts run in its bundler's cell (adv2: `npm
  // rebuild <its dir>` selects nothing, and its bundler's rebuild ran them
  // where their own directories were read-only).
  std::vector<PlannedRun> planned = GroupBundled(found, marks.in_bundle, install_dir);
  nlohmann::json ran = nlohmann::json::array();
  nlohmann::json removed = nlohmann::json::array();
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const ScriptPackage& p = planned[i].package;
    // Names and paths as shown: a directory a tarball bundles is named by
    // the tarball, not the registry, and may hold escapes (adv2).
    const std::string name = VisibleOnTerminal(p.name);
    std::vector<std::string> bundled_dirs;
    for (const auto& b : planned[i].bundled) bundled_dirs.push_back(b.dir);
    Say("running the install scripts of " + DescribeRun(planned[i]) + " in a native cell of their own (" +
        std::to_string(i + 1) + " of " + std::to_string(planned.size()) + "; it can write " + VisibleOnTerminal(p.dir) +
        (bundled_dirs.empty() ? " only; " : " and the bundled packages' directories only; ") + network +
        "; --install-scripts=skip turns this off)");
    // Only the bins of what it depends on are on its PATH (script_bins.h).
    ScriptBins bins = BinsFor(install_dir, p.dir, bundled_dirs);
    auto view = BinView::Make(install_dir, bins.links);
    if (!view.ok()) return view.error();
    Status st = cell.Run({install_dir, name, p.dir, NpmRebuildArgv(p.dir), limit, npm, bundled_dirs,
                          std::move(bins.bin_dirs), view->dir()});
    if (!st.ok() && marks.optional.count(p.dir) == 0) return st;
    if (!st.ok()) {
      // The cell's message shows the name and path visibly already, and its
      // last lines each through the filter, on lines of their own.
      Warn(st.error().Message() + "\n  " + name +
           " is an optional dependency: removed, as npm does, and the install goes on");
      fs::remove_all(p.dir, ec);
      removed.push_back(p.dir.substr(install_dir.size()));
      continue;
    }
    nlohmann::json entry{{"package", p.name}, {"dir", p.dir.substr(install_dir.size())}, {"events", p.events}};
    for (const auto& b : planned[i].bundled) {
      entry["bundled"].push_back({{"package", b.name}, {"dir", b.dir.substr(install_dir.size())}, {"events", b.events}});
    }
    ran.push_back(std::move(entry));
  }
  nlohmann::json record{{"install_scripts", "ran"}, {"packages", ran}, {"optional_removed", removed}};
  std::string path = install_dir + "/" + kScriptsRecord;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) return ErrnoError("record that the install scripts ran in", path);
  return WriteAll(fd.get(), record.dump(2) + "\n", "write", path);
}

}  // namespace mcpcell
