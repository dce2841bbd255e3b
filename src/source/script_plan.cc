#include "source/script_plan.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "source/script_bins.h"
#include "util/json_input.h"
#include "util/lstat_kind.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

constexpr const char* kEvents[] = {"preinstall", "install", "postinstall"};

struct Manifest {
  ScriptPackage package;
  std::vector<std::string> deps;
  std::map<std::string, std::string> bins;  ///< DeclaredBins (script_bins.h)
};

/// A JSON object read from a regular file (not a FIFO that would hang the
/// read, not a link a tarball or script left); {} for anything else.
nlohmann::json ReadJsonObject(const fs::path& file) {
  if (!IsRealFile(file)) return nlohmann::json::object();
  auto text = ReadTextFile(file.string(), "read package manifest");
  nlohmann::json j = text.ok() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  return j.is_object() ? j : nlohmann::json::object();
}

/// Whether npm runs scripts[event]: a string that is not empty.
bool HasScript(const nlohmann::json& scripts, const char* event) {
  return scripts.contains(event) && scripts[event].is_string() && !scripts[event].get_ref<const std::string&>().empty();
}

/// npm's rule for what an install runs (@npmcli/run-script, arborist's
/// rebuild; npm's docs "scripts": "If there is a binding.gyp file in the
/// root of your package and you haven't defined your own install or
/// preinstall scripts, npm will default the install command to compile
/// using node-gyp"; "gypfile": false turns that off).
Manifest ReadManifest(const fs::path& dir, const std::string& dir_name) {
  nlohmann::json j = ReadJsonObject(dir / "package.json");
  Manifest m;
  m.package.name = dir_name;
  m.package.dir = dir.string();
  const nlohmann::json scripts = j.contains("scripts") && j["scripts"].is_object() ? j["scripts"] : nlohmann::json::object();
  bool gyp = IsRealFile(dir / "binding.gyp") && !HasScript(scripts, "install") && !HasScript(scripts, "preinstall") &&
             !(j.contains("gypfile") && j["gypfile"] == false);
  for (const char* e : kEvents) {
    bool implicit = gyp && std::string_view(e) == "install";
    if (!HasScript(scripts, e) && !implicit) continue;
    m.package.events.push_back(e);
    m.package.scripts.push_back(implicit ? std::string("node-gyp rebuild") : scripts[e].get<std::string>());
  }
  for (const char* field : {"dependencies", "optionalDependencies"}) {
    if (!j.contains(field) || !j[field].is_object()) continue;
    for (const auto& [dep, range] : j[field].items()) m.deps.push_back(dep);
  }
  std::string name = j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : dir_name;
  m.package.id = name + "@" + (j.contains("version") && j["version"].is_string() ? j["version"].get<std::string>() : "");
  m.package.env = PackageEnv(j);
  m.bins = DeclaredBins(j);
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

/// Where `dep` resolves from the package at `from`: the nearest
/// node_modules/<dep> in `from`'s own node_modules or an ancestor's, not
/// above `top` (the install's node_modules), among the packages read.
/// Both the order of the cells and the commands each sees (script_bins.h)
/// follow it.
std::string Resolve(const fs::path& from, const std::string& dep, const fs::path& top,
                    const std::map<std::string, Manifest>& known) {
  // A name, never a path: "/x" would replace the path it is joined to, and
  // a ".." step climb out of node_modules ("b..x" is a name: adv4).
  if (!IsInstallPath("node_modules/" + dep)) return {};
  for (fs::path d = from;; d = d.parent_path()) {
    fs::path candidate = (d.filename() == "node_modules" ? d : d / "node_modules") / dep;
    if (known.count(candidate.string()) > 0) return candidate.string();
    if (d == top || !d.has_relative_path() || d.string().size() < top.string().size()) return {};
  }
}

using Edges = std::map<std::string, std::vector<std::string>>;

/// Depth-first post-order over the edges from `dir`: dependencies first;
/// a cycle is cut where it closes (npm runs such a cycle in some order too).
void Visit(const std::string& dir, const Edges& edges, std::set<std::string>* seen, std::vector<std::string>* order) {
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

/// `roots`, each after what it reaches through `edges`.
std::vector<std::string> DependenciesFirst(const std::vector<std::string>& roots, const Edges& edges) {
  std::set<std::string> seen;
  std::vector<std::string> order;
  for (const auto& r : roots) Visit(r, edges, &seen, &order);
  return order;
}

/// The packages of an install as read once: manifests and who depends on whom.
struct Tree {
  std::vector<std::string> dirs;  ///< in path order
  std::map<std::string, Manifest> manifests;
  Edges edges;  ///< a package -> the packages its dependencies resolve to
};

Tree ReadTree(const std::string& node_modules) {
  Tree t;
  std::vector<std::pair<fs::path, std::string>> all;
  CollectPackages(node_modules, &all);
  for (const auto& [dir, name] : all) {
    t.dirs.push_back(dir.string());
    t.manifests.emplace(dir.string(), ReadManifest(dir, name));
  }
  for (const auto& [dir, m] : t.manifests) {
    for (const auto& dep : m.deps) {
      std::string to = Resolve(fs::path(dir), dep, fs::path(node_modules), t.manifests);
      if (!to.empty() && to != dir) t.edges[dir].push_back(to);
    }
  }
  return t;
}

/// The package whose tarball `dir` came out of (script_plan.h): itself
/// when placed, else the nearest placed package above it (there is one:
/// every directory right below the install's node_modules is placed).
std::string OwnerOf(const std::string& dir, const std::set<std::string>& placed, const std::string& install_dir) {
  for (fs::path at(dir);;) {
    if (placed.count(at.string()) > 0) return at.string();
    fs::path up = at.parent_path();  // .../node_modules or .../node_modules/@scope
    if (!up.filename().empty() && up.filename().string()[0] == '@') up = up.parent_path();
    if (up.filename() != "node_modules" || up.parent_path().string().size() <= install_dir.size()) return dir;
    at = up.parent_path();
  }
}

/// The steps of `p`, in npm's order of events, with what its lockfile
/// entry says of it (`node`; defaults when it has none, as npm's tree then).
void AddSteps(const ScriptPackage& p, const PackageNode& node, std::vector<LifecycleStep>* steps) {
  auto env = p.env;
  for (auto& var : NodeEnv(node)) env.push_back(std::move(var));
  for (std::size_t i = 0; i < p.events.size(); ++i) steps->push_back({p.dir, p.id, p.events[i], p.scripts[i], env});
}

/// Package directory -> what the hidden lockfile says of it.
std::map<std::string, PackageNode> NodesOf(const std::string& install_dir, const NpmLockfile& lockfile) {
  std::map<std::string, PackageNode> out;
  for (const auto& e : lockfile.entries) {
    out[install_dir + "/" + e.rel] = {e.resolved, e.integrity, e.optional, e.dev, e.peer, e.dev_optional};
  }
  return out;
}

/// The directories in `placed` strictly below `dir`.
void PlacedBelow(const std::string& dir, const std::set<std::string>& placed, std::vector<std::string>* out) {
  const std::string prefix = dir + "/";
  for (auto it = placed.lower_bound(prefix); it != placed.end() && it->rfind(prefix, 0) == 0; ++it) out->push_back(*it);
}

/// The commands of `cell` (script_bins.h): the bins of what its owner and
/// its bundled packages declare as dependencies, resolved as node does, from
/// the manifests as the plan read them (no second read of a package.json).
std::map<std::string, std::string> CellBinLinks(const ScriptCellPlan& cell, const Tree& t, const fs::path& top) {
  std::vector<std::string> owners{cell.package.dir};
  for (const auto& b : cell.bundled) owners.push_back(b.dir);
  std::vector<DependencyBins> deps;
  for (const auto& owner : owners) {
    for (const auto& dep : t.manifests.at(owner).deps) {
      std::string dir = Resolve(fs::path(owner), dep, top, t.manifests);
      if (!dir.empty()) deps.push_back({dir, &t.manifests.at(dir).bins});
    }
  }
  return BinLinks(deps);
}

}  // namespace

std::vector<ScriptPackage> FindScriptPackages(const std::string& node_modules) {
  Tree t = ReadTree(node_modules);
  std::vector<ScriptPackage> out;
  for (const auto& dir : DependenciesFirst(t.dirs, t.edges)) {
    const Manifest& m = t.manifests.at(dir);
    if (!m.package.events.empty()) out.push_back(m.package);
  }
  return out;
}

std::vector<std::string> PackagesWithInstallScripts(const std::string& node_modules) {
  std::set<std::string> names;
  for (const auto& p : FindScriptPackages(node_modules)) names.insert(p.name);
  return {names.begin(), names.end()};
}

NpmLockfile ReadNpmLockfile(const std::string& install_dir) {
  NpmLockfile out;
  nlohmann::json j = ReadJsonObject(install_dir + "/node_modules/.package-lock.json");
  if (!j.contains("packages") || !j["packages"].is_object()) return out;
  out.present = true;
  auto text = [](const nlohmann::json& meta, const char* key) {
    return meta.contains(key) && meta[key].is_string() ? meta[key].get<std::string>() : std::string();
  };
  auto flag = [](const nlohmann::json& meta, const char* key) { return meta.contains(key) && meta[key] == true; };
  for (const auto& [rel, meta] : j["packages"].items()) {
    // Relative paths below the install ("node_modules/x"), nothing else.
    if (!IsInstallPath(rel) || !meta.is_object()) continue;
    out.entries.push_back({rel, flag(meta, "inBundle"), flag(meta, "optional"),
                           meta.contains("name") && meta["name"].is_string(), text(meta, "name"), text(meta, "resolved"),
                           text(meta, "integrity"), flag(meta, "dev"), flag(meta, "peer"), flag(meta, "devOptional")});
  }
  return out;
}

std::vector<ScriptCellPlan> PlanScriptCells(const std::string& install_dir, const NpmLockfile& lockfile) {
  Tree t = ReadTree(install_dir + "/node_modules");
  std::set<std::string> placed(t.dirs.begin(), t.dirs.end());  // on disk and placed by npm
  if (lockfile.present) {
    std::set<std::string> listed;
    for (const auto& e : lockfile.entries) {
      if (!e.in_bundle) listed.insert(install_dir + "/" + e.rel);
    }
    // A directory right below the install's node_modules is no other
    // package's content, listed or not.
    const fs::path top = fs::path(install_dir) / "node_modules";
    auto on_top = [&top](const fs::path& d) {
      fs::path up = d.parent_path();
      return up == top || (up.parent_path() == top && up.filename().string()[0] == '@');
    };
    std::erase_if(placed, [&](const std::string& d) { return listed.count(d) == 0 && !on_top(d); });
  }
  std::map<std::string, std::string> owner;
  std::vector<std::string> owners;  // in path order
  for (const auto& dir : t.dirs) {
    owner[dir] = OwnerOf(dir, placed, install_dir);
    if (owner[dir] == dir) owners.push_back(dir);
  }
  Edges cell_edges;  // owner -> owners of what its packages depend on
  for (const auto& [from, tos] : t.edges) {
    for (const auto& to : tos) {
      if (owner[from] != owner[to]) cell_edges[owner[from]].push_back(owner[to]);
    }
  }
  std::map<std::string, std::vector<std::string>> members;  // owner -> its packages with scripts, in run order
  for (const auto& dir : DependenciesFirst(t.dirs, t.edges)) {
    if (!t.manifests.at(dir).package.events.empty()) members[owner[dir]].push_back(dir);
  }
  const std::map<std::string, PackageNode> nodes = NodesOf(install_dir, lockfile);
  std::vector<ScriptCellPlan> out;
  for (const auto& o : DependenciesFirst(owners, cell_edges)) {
    auto it = members.find(o);
    if (it == members.end()) continue;
    ScriptCellPlan cell;
    cell.package = t.manifests.at(o).package;
    for (const auto& dir : it->second) {
      const ScriptPackage& p = t.manifests.at(dir).package;
      if (dir != o) {
        cell.bundled.push_back(p);
        PlacedBelow(dir, placed, &cell.placed_below);
      }
      auto node = nodes.find(dir);
      AddSteps(p, node == nodes.end() ? PackageNode{} : node->second, &cell.steps);
    }
    std::sort(cell.placed_below.begin(), cell.placed_below.end());
    cell.placed_below.erase(std::unique(cell.placed_below.begin(), cell.placed_below.end()), cell.placed_below.end());
    cell.bin_links = CellBinLinks(cell, t, fs::path(install_dir) / "node_modules");
    out.push_back(std::move(cell));
  }
  return out;
}

}  // namespace mcpcell
