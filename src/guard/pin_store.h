#pragma once
// The pins of one server on disk: one JSON file per server under the user's
// XDG state directory ($XDG_STATE_HOME/mcpcell/pins, else
// ~/.local/state/mcpcell/pins), named by the SHA-256 of the server's key (so
// no key can name a path) and holding the key itself (so a file copied or
// renamed onto another server's name is refused, not trusted). The directory
// is the caller's, mode 0700; a file or directory another user owns or can
// write is refused, since whoever writes a pin file decides what a server may
// change unseen. Writes are atomic (a temporary file, fsync, rename) under an
// flock(2) on a sibling lock file, so two runs of the same server at once
// merge their edits instead of losing one.

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "guard/poison_check.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

struct PinnedTool {
  std::string sha256;
  nlohmann::json contract;  ///< the canonical tool object, for diffs
  std::string pinned_at;    ///< UTC, ISO 8601
  std::string how;          ///< "first use" | "approved"
  std::vector<PoisonFinding> findings;
  std::set<std::string> clients;  ///< client capability sets it was listed to (PinGuard::SetClientCapabilities)
};

/// A tool the server lists (or stopped listing) that differs from its pin:
/// hidden and refused until `mcpcell pins approve`.
struct PendingTool {
  std::string change;       ///< "new" | "changed" | "removed" | "poisoned" (new, held back by poisoning: block)
  std::string sha256;       ///< of `contract`; "" for removed
  nlohmann::json contract;  ///< null for removed
  std::string seen_at;
  std::vector<PoisonFinding> findings;
};

struct PinFile {
  std::string server;
  std::map<std::string, PinnedTool> tools;
  std::map<std::string, PendingTool> pending;
  std::set<std::string> clients;  ///< client capability sets whose first complete list was pinned
  bool exists = false;  ///< false: this server was never pinned
};

/// $XDG_STATE_HOME/mcpcell/pins when XDG_STATE_HOME is absolute (the XDG
/// spec says to ignore a relative one), else ~/.local/state/mcpcell/pins;
/// "" when there is no home.
std::string DefaultPinsDir();

/// "2026-11-24T00:12:03Z".
std::string UtcNow();

class PinStore {
 public:
  /// Opens (creating with mode 0700 as needed) `dir` for the pins of `server`.
  static Result<PinStore> Open(const std::string& dir, const std::string& server);
  /// Opens an existing `dir` without creating anything (pins list/diff).
  static Result<PinStore> OpenExisting(const std::string& dir, const std::string& server);

  /// The current pins (a consistent snapshot: writers rename whole files).
  Result<PinFile> Load() const;
  /// Load, `edit`, write back atomically, all under the server's lock.
  Status Update(const std::function<void(PinFile*)>& edit);

  /// Every server key with a pin file in `dir`.
  static Result<std::vector<std::string>> Servers(const std::string& dir);

  const std::string& file() const { return file_; }
  const std::string& server() const { return server_; }

 private:
  PinStore(UniqueFd dir, std::string dir_path, std::string server);
  Result<PinFile> LoadAt(const std::string& name) const;

  UniqueFd dir_;
  std::string dir_path_;
  std::string server_;
  std::string name_;  ///< sha256(server).json
  std::string file_;  ///< dir_path_/name_
};

nlohmann::json ToJson(const PinFile& f);
Result<PinFile> PinFileFromJson(const nlohmann::json& j, const std::string& origin);

}  // namespace mcpcell
