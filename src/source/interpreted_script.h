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
// broader) and no script name is offered to the policy. A launcher (npx,
// env, poetry, ...) says nothing of what it starts, so its whole command
// line is the source too.
//
// What depends on the working directory is made absolute (the script, an
// argv[0] or an option value with a '/'); what resolves against it and
// cannot be made absolute (`python3 -m pkg`, which puts the cwd first on
// sys.path; `node -r hook`, found from the cwd's node_modules) makes the
// source start with `cd CWD &&` (adv10: one source, another program in
// every directory).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpcell {

struct InterpretedScript {
  /// "command://" plus argv up to and including what runs, shell-quoted
  /// words, paths made absolute, "cd CWD && " first when it needs the cwd.
  std::string source;
  /// The script as given and its absolute path ("" for inline code, a
  /// module, or a command line the table could not read).
  std::string script;
  std::string script_path;
  /// `python -m pkg`: "pkg".
  std::string module;
  /// A command line the table could not read (or a launcher's): every word
  /// after argv[0] that is no option, as given and its basename. A policy
  /// rule that can only make a run stricter (deny) matches names among
  /// these too, since any of them may be what runs.
  std::vector<std::string> maybe_names;
};

/// nullopt unless argv[0]'s basename is a known interpreter or launcher
/// (node, python3, bash, npx, env, ...). `cwd` makes relative paths
/// absolute ("" leaves them as given).
std::optional<InterpretedScript> InterpretedScriptOf(const std::vector<std::string>& argv, const std::string& cwd);

/// The source of a command no interpreter runs: "command://" and argv[0],
/// made absolute against `cwd` when it is a relative path (`./server` is
/// another program in every directory); a bare name is the file PATH finds
/// (util/path_search.h), as given when none. An interpreter's source names
/// its program the same way.
std::string PlainCommandSource(const std::string& argv0, const std::string& cwd);

/// The path a `file:` URL names (file:///x, file://localhost/x, file:/x;
/// %XX decoded), or nullopt when `v` is no such URL: an interpreter
/// option's value (`node --import file:///tmp/x`) is that path (adv13).
std::optional<std::string> FileUrlPath(std::string_view v);

/// Whether `v` starts with a URL scheme ("data:", "https:", "node:"): a
/// module specifier, not a path under the cwd.
bool HasUrlScheme(std::string_view v);

/// The process's working directory, "" when it cannot be read.
std::string CurrentDirectory();

}  // namespace mcpcell
