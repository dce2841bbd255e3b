#pragma once
// The program an install-script cell runs (source/install_scripts.h): the
// lifecycle scripts mcpcell planned for it, one after the other, each the
// way npm's @npmcli/run-script runs one — `sh -c '<script>'` in the
// package's directory, with npm's lifecycle variables (npm_lifecycle_event,
// npm_lifecycle_script, npm_package_json, the npm_package_* of its
// manifest: name, version, config, engines, bin, and those npm's rebuild
// takes from its lockfile entry: resolved, integrity, optional, dev, peer,
// dev_optional). What holds for every step
// of a cell (PATH with npm's node-gyp wrapper, npm_config_*) is the cell's
// environment (cell/script_cell.h).
//
// No npm runs in the cell: npm would re-read the package.json files on disk
// (which an earlier script could have rewritten) and decide for itself what
// runs, where and in which order (adv4). The program is written to a file
// the cell reads (no argument-length limit) and runs as `/bin/sh <file>`.

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace mcpcell {

/// One lifecycle script to run.
struct LifecycleStep {
  std::string dir;     ///< the package's directory: its working directory
  std::string id;      ///< "name@version", for the banner before it
  std::string event;   ///< "preinstall", "install" or "postinstall"
  std::string script;  ///< what `sh -c` runs
  /// npm_package_* (PackageEnv, NodeEnv), set for this step only.
  std::vector<std::pair<std::string, std::string>> env;
};

/// The npm_package_* variables npm's run-script sets from a manifest
/// (package-envs.js: name, version, config, engines, bin; objects and
/// arrays flattened with "_"; null and false as ""). A key no environment
/// can hold (with "=" or NUL) is left out.
std::vector<std::pair<std::string, std::string>> PackageEnv(const nlohmann::json& manifest);

/// What npm's tree says of a package (arborist's node, which npm reads from
/// its hidden lockfile), for the variables of its scripts.
struct PackageNode {
  std::string resolved;   ///< where npm fetched it; "" = not recorded
  std::string integrity;  ///< its tarball's integrity; "" = not recorded
  bool optional = false;
  bool dev = false;
  bool peer = false;
  bool dev_optional = false;  ///< the lockfile's "devOptional"
};

/// The variables npm's rebuild sets for an install script from its node
/// (@npmcli/arborist lib/arborist/rebuild.js): npm_package_resolved and
/// npm_package_integrity when recorded (npm leaves an undefined one out),
/// npm_package_optional, _dev, _peer as "1" or "", and
/// npm_package_dev_optional "1" only when neither dev nor optional.
std::vector<std::pair<std::string, std::string>> NodeEnv(const PackageNode& node);

/// The sh program that runs `steps` in order and stops at the first that
/// fails, with its status. Before each it prints npm's banner ("> id
/// event", "> script") and checks that the directory is still the one
/// planned, resolved (no symlink an earlier script left on the way): if
/// not, it refuses with status 1. A NUL in a script, directory or value
/// (which no argument can carry) is an error here.
Result<std::string> LifecycleProgram(const std::vector<LifecycleStep>& steps);

}  // namespace mcpcell
