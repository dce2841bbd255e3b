#pragma once
// Which install scripts of an npx:// install run, for which package
// directory, in which cell and in which order: decided by mcpcell on the
// host, once, before any script cell runs, from npm's hidden lockfile
// (node_modules/.package-lock.json, written by the host's `npm install
// --ignore-scripts`) and the package.json files as they are then (lstat'ed
// regular files, each read once). Nothing a cell writes later changes the
// plan; no npm in a cell decides anything (adv4: the plan and `npm rebuild`
// in each cell disagreed on what is bundled, what runs and in which order).
//
// Whose code a directory is — mcpcell's own rule, the same for every
// question it answers:
//   - a package npm PLACED is a directory the hidden lockfile lists below
//     node_modules, not marked inBundle: npm fetched it on its own, from
//     its own tarball;
//   - every other package directory below node_modules (npm's inBundle
//     ones, and what a tarball carried that npm never named: a folder
//     without a version, a bundle the registry's manifest did not declare)
//     came out of the tarball of the nearest placed package above it, its
//     OWNER, and its scripts run in the owner's cell;
//   - a directory right below the install's node_modules (or its @scope/)
//     is always an owner: no other package's tarball writes there; with no
//     hidden lockfile at all, every directory is its own owner.
// The bundleDependencies of a package.json are not read: whether a
// directory is bundled follows from what npm placed, not from a manifest
// the tarball (or a script) wrote.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "source/lifecycle.h"

namespace mcpcell {

/// One package directory whose install would run code.
struct ScriptPackage {
  std::string name;  ///< "@scope/name" or "name", from its directory
  std::string dir;   ///< its directory (under some node_modules), as found
  /// What would run, in npm's order: "preinstall", "install", "postinstall";
  /// "install" = "node-gyp rebuild" when only a binding.gyp asks for it.
  std::vector<std::string> events;
  std::vector<std::string> scripts;  ///< the command of each event
  std::string id;                    ///< "name@version" from its manifest
  std::vector<std::pair<std::string, std::string>> env;  ///< PackageEnv of its manifest
};

/// The packages below `node_modules` (nested node_modules and @scope/
/// included; symlinks and dot-directories skipped) with install scripts, in
/// the order they must run: a package after the packages it depends on
/// (dependencies and optionalDependencies, resolved as node resolves them:
/// the nearest node_modules/<name> upwards; through packages without
/// scripts too), else by path.
std::vector<ScriptPackage> FindScriptPackages(const std::string& node_modules);

/// The names of FindScriptPackages, sorted and without repeats.
std::vector<std::string> PackagesWithInstallScripts(const std::string& node_modules);

/// What npm's hidden lockfile says, read once per install.
struct NpmLockfile {
  bool present = false;  ///< a regular file with a "packages" object
  struct Entry {
    std::string rel;       ///< "node_modules/x/node_modules/@s/y" (no "." or ".." step)
    bool in_bundle = false;
    bool optional = false;
    bool named = false;    ///< npm recorded a "name" (an alias's real name)
    std::string name;
    std::string resolved;  ///< where npm fetched it, "" when not recorded
    std::string integrity;  ///< "" when not recorded
    bool dev = false;
    bool peer = false;
    bool dev_optional = false;  ///< "devOptional"
  };
  std::vector<Entry> entries;
};

/// The hidden lockfile of the install at `install_dir`; not present when
/// it is missing, no regular file, or not npm's shape.
NpmLockfile ReadNpmLockfile(const std::string& install_dir);

/// One cell's worth of scripts.
struct ScriptCellPlan {
  /// The owner: the only package directory of the host the cell writes,
  /// with the bundled ones. Its events are empty when only bundled
  /// packages have scripts.
  ScriptPackage package;
  /// Packages its tarball carried (below its node_modules) with scripts,
  /// in the order they run, each directory writable in this cell.
  std::vector<ScriptPackage> bundled;
  /// Packages npm placed below one of `bundled` (another tarball's code):
  /// read-only in this cell.
  std::vector<std::string> placed_below;
  /// Every step of the cell, in order: a package's steps after those of
  /// the packages (of this cell) it depends on.
  std::vector<LifecycleStep> steps;
  /// The commands the cell sees (script_bins.h BinLinks): bin name -> file.
  std::map<std::string, std::string> bin_links = {};
};

/// The cells of the install at `install_dir`, in the order they run: a
/// cell after the cells of the packages its packages depend on (cycles cut
/// where they close), else by the owner's path.
std::vector<ScriptCellPlan> PlanScriptCells(const std::string& install_dir, const NpmLockfile& lockfile);

}  // namespace mcpcell
