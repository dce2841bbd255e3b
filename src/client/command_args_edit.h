#pragma once
// The edit TOML (Codex) and YAML (Goose) configs share: a server entry whose
// command key and args array are rewritten in place, value bytes only, with
// the original value text saved so unwrap can put it back. Each format reads
// its file into CommandArgsServers and says how it writes (CommandArgsSyntax);
// listing, wrapping, unwrapping and the after-edit check are done here once.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/config_edit.h"
#include "client/jsonc.h"

namespace mcpcell {

/// One server entry as its format read it.
struct CommandArgsServer {
  std::string name;
  nlohmann::ordered_json entry;        ///< command, args, env (names), url: what WrapEntry reads
  std::optional<WrapOutcome> verdict;  ///< decided by the format before WrapEntry (remote, anchors)
  std::optional<Span> command;         ///< the command value's bytes
  std::optional<Span> args;            ///< the args value's bytes
  /// What goes after the command value, before a new args array, when there
  /// is no args key; nullopt: none can be added, the entry is left with `no_args_note`.
  std::optional<std::string> args_prefix;
  std::string no_args_note;
};

/// How one format writes the edit.
struct CommandArgsSyntax {
  std::string command_key;  ///< "command" (TOML) or "cmd" (YAML); also the key of the saved original
  std::string assign;       ///< " = " or ": ", as the before/after display shows it
  std::string lost_entry;   ///< "a server" or "an extension", for the after-edit check's message
  std::function<std::string(const std::string&)> quote;  ///< a string value in the format's syntax
  /// Whether the text between the command value and the args value is what wrapping inserted.
  std::function<bool(const std::string& between)> added_args;
  /// The file's servers under `key` (the after-edit check reads the new text with it).
  std::function<Result<std::vector<CommandArgsServer>>(const std::string& text, const std::string& key)> locate;
};

/// The server names with a one-word kind each (as ListServers).
Result<std::vector<EntryChange>> ListCommandArgsServers(const CommandArgsSyntax& syntax, const std::string& text,
                                                        const std::string& key);
/// Each entry wrapped (WrapEntry) by rewriting its command and args values;
/// `originals` gains their original text.
Result<ConfigEdit> WrapCommandArgs(const CommandArgsSyntax& syntax, const std::string& text, const std::string& key,
                                   const WrapOptions& opts, std::map<std::string, std::string> originals);
/// Each wrapped entry with an original in `originals` put back; restored names leave `originals`.
Result<ConfigEdit> UnwrapCommandArgs(const CommandArgsSyntax& syntax, const std::string& text, const std::string& key,
                                     std::map<std::string, std::string> originals);

}  // namespace mcpcell
