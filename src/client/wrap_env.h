#pragma once
// The environment of a wrapped entry: which variables reach the server in
// the cell, and how (client wrap, docs/CLIENTS.md "Environment").
//
// A client sets an entry's "env" block (and VS Code its "envFile") on the
// process it starts, which once wrapped is mcpcell itself: a plain variable
// is then passed on by name (--env=NAME), its value never in argv. A
// variable that makes a program run other code, or picks where it reads code
// and config from (HOME, PATH, the XDG bases: util/code_injecting_env.h),
// must not be set on mcpcell: its value is moved into args as
// --env=NAME=VALUE (set in the cell only), or the entry is left as it is
// when that cannot be done.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/wrap_entry.h"

namespace mcpcell {

/// Whether `n` is a plain NAME ([A-Za-z_][A-Za-z0-9_]*): one that cannot
/// carry a value ("=") or pose as an option into mcpcell's argv.
bool IsEnvName(const std::string& n);

struct WrapEnv {
  std::vector<std::string> options;  ///< "--env=NAME[=VALUE]" for mcpcell's args, each once
  std::vector<std::string> moved;    ///< in-cell-only names (code-injecting, HOME, PATH, ...) moved from "env" into options
  std::vector<std::string> from_file;  ///< the names read from "envFile"
  std::string left;                  ///< non-empty: why the entry is left as it is
};

/// The --env options of `entry`: `docker_names` (docker run -e NAME[=V])
/// first, then the "env" block, then the names of its "envFile".
WrapEnv PlanWrapEnv(const nlohmann::ordered_json& entry, const std::vector<std::string>& docker_names,
                    const WrapOptions& opts);

/// The env keys of an npx entry that tell npm where or what to fetch
/// (npm reads every npm_config_* name, in any case, as its config).
std::vector<std::string> NpmConfigSettings(const nlohmann::ordered_json& entry);

/// What a wrapped entry's note adds about its environment ("" when nothing).
std::string WrapEnvNote(const WrapEnv& env, const nlohmann::ordered_json& entry);

}  // namespace mcpcell
