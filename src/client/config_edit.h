#pragma once
// Wrapping and unwrapping the server entries of one JSON/JSONC client config
// as a text edit: each changed entry's bytes are replaced, everything else
// (comments, formatting, other settings, other servers) stays as it was.

#include <map>
#include <string>
#include <vector>

#include "client/wrap_entry.h"
#include "util/error.h"

namespace mcpcell {

/// What happened to one server entry.
struct EntryChange {
  std::string name;
  WrapOutcome::Kind kind = WrapOutcome::Kind::kLeft;
  std::string note;
  int line = 0;          ///< where the entry starts in the original text
  std::string before;    ///< the entry's original text (changed entries)
  std::string after;     ///< its new text (changed entries)
  bool changed = false;
};

struct ConfigEdit {
  std::string text;                            ///< the whole new file
  std::vector<EntryChange> entries;            ///< in file order
  std::map<std::string, std::string> originals;  ///< server name → original entry text (after this edit)
};

/// The server entries under top-level `servers_key` of `text` (JSONC), each
/// wrapped (WrapEntry); `originals` (from an earlier wrap) gains the original
/// text of each entry wrapped now. A file without `servers_key` has no entries.
/// `project_scopes`: also projects.<dir>.<servers_key> (Claude Code), named "<dir>: NAME".
Result<ConfigEdit> WrapConfig(const std::string& text, const std::string& servers_key, const WrapOptions& opts,
                              std::map<std::string, std::string> originals, bool project_scopes = false);

/// Each wrapped entry whose original is in `originals` put back as it was;
/// the restored names leave `originals`. A wrapped entry without one is left
/// (and said so).
Result<ConfigEdit> UnwrapConfig(const std::string& text, const std::string& servers_key,
                                std::map<std::string, std::string> originals, bool project_scopes = false);

/// The server names under `servers_key` with a one-word kind each: "stdio:COMMAND", "remote", "wrapped".
Result<std::vector<EntryChange>> ListServers(const std::string& text, const std::string& servers_key,
                                             bool project_scopes = false);

}  // namespace mcpcell
