#pragma once
// How one MCP client server entry ({"command", "args", "env", ...}) is
// rewritten to start through mcpcell, and back. Pure functions: no files.
//
// The rules (docs/CLIENTS.md):
//   npx [-y|--yes|-q|--quiet] PKG ARGS...      → mcpcell run [...] npx://PKG -- ARGS...
//   docker run [-i|--rm|-e NAME[=V]]... IMAGE ARGS → mcpcell run [...] docker://IMAGE -- ARGS...
//   any other COMMAND ARGS...                  → mcpcell run --isolate [...] -- COMMAND ARGS...
// where [...] is `--policy P` when given and `--env NAME` for each name of
// the entry's "env" block (and VS Code's "envFile"): the values stay in the
// client's file, the client puts them in mcpcell's environment, and
// `--env NAME` passes each by name — never in argv, which every user on the
// machine can read (/proc/PID/cmdline). A variable that would make mcpcell
// itself run other code (LD_PRELOAD, NODE_OPTIONS, ...) is the exception:
// client/wrap_env.h. An entry with a "command" is local whatever else it has
// (a stray "url" does not make it remote); one that already starts mcpcell is
// judged by client/rewrap.h.
// Arguments stay an array from end to end: no shell ever reads them.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace mcpcell {

struct WrapOptions {
  std::string mcpcell;                ///< absolute path of the mcpcell to run
  std::optional<std::string> policy;  ///< --policy for every wrapped entry
  /// A uv config file (uv.toml) that sets an index uvx reads and uvx:// does
  /// not, "" when none: `uvx` entries are then left as they are.
  std::string uv_index_config = {};
  /// Whether the entry's env values are its own (JSON); false where only the
  /// names were read (TOML, YAML): a value cannot be moved into args there.
  bool env_values = true;
  /// Reads the variable names of a VS Code "envFile" (an absolute path);
  /// unset: an entry with an envFile is left, saying so.
  std::function<Result<std::vector<std::string>>(const std::string& path)> env_file_names = {};
};

struct WrapOutcome {
  enum class Kind { kWrapped, kAlready, kRemote, kLeft };
  Kind kind = Kind::kLeft;
  nlohmann::ordered_json entry;  ///< the rewritten entry (kWrapped only)
  std::string note;              ///< what was done, or why not
};

/// Whether `entry` already starts mcpcell (its command's file name is "mcpcell").
bool IsWrapped(const nlohmann::ordered_json& entry);

/// What `mcpcell client list` shows for an entry WrapEntry judged `w`:
/// "remote", "wrapped", "stdio: COMMAND" or "other".
std::string ListedKind(const WrapOutcome& w, const nlohmann::ordered_json& entry);

/// The entry rewritten to run through mcpcell, or why it is left as it is.
/// Every key other than "command" and "args" is kept as it was, but for the
/// code-running variables moved out of "env" into args (client/wrap_env.h).
WrapOutcome WrapEntry(const nlohmann::ordered_json& entry, const WrapOptions& opts);

}  // namespace mcpcell
