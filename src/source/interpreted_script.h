#pragma once
// What an interpreter command runs. For `-- node server.mjs` the program is
// node, but the server is server.mjs: a policy that judged "node" would trust
// every script once it trusted one (`command://node`) and never see the
// script's name in a `{"name": ...}` rule (adv8). So the policy judges the
// command line up to and including what the interpreter runs: the script,
// a module (`python -m pkg`) or inline code (`node -e CODE`), and every
// interpreter option before it — `node -r ./hook.js server.mjs` runs hook.js
// first, so it is a different source from `node server.mjs`. Words after the
// script are the script's own arguments and are not part of the source.
//
// Options are read by a small table per interpreter. An option the table
// does not know might take the next word as its value, so the script cannot
// be told apart: then the whole command line is the source (exact, never
// broader) and no script name is offered to the policy.

#include <optional>
#include <string>
#include <vector>

namespace mcpcell {

struct InterpretedScript {
  /// "command://" plus argv up to and including what runs, space-joined,
  /// with the script's path made absolute against the working directory.
  std::string source;
  /// The script as given and its absolute path ("" for inline code, a
  /// module, or a command line the table could not read).
  std::string script;
  std::string script_path;
  /// `python -m pkg`: "pkg".
  std::string module;
};

/// nullopt unless argv[0]'s basename is a known interpreter or launcher
/// (node, python3, bash, npx, env, ...). `cwd` makes a relative script
/// absolute ("" leaves it as given).
std::optional<InterpretedScript> InterpretedScriptOf(const std::vector<std::string>& argv, const std::string& cwd);

/// The process's working directory, "" when it cannot be read.
std::string CurrentDirectory();

}  // namespace mcpcell
