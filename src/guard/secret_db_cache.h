#pragma once
// A cache of the compiled secret rules (docs/SECRETS.md). Vectorscan's
// compile of the ~100 built-in rules costs 0.1-1.1 s, paid by every relay
// start; its serialized database (hs_serialize_database) is kept under the
// user's XDG cache directory, one file per key, where the key is a SHA-256
// of everything the compile depends on: this file format, the library's
// version, the CPU it runs on and every rule (the profile's included).
//
// The file is input, not trusted code: hs_deserialize_database checks little,
// and a crafted database could misbehave in hs_scan. So the directories
// below the user's cache base ("mcpcell", "secret-db") are opened one at a
// time without following symlinks and must be the caller's and writable by
// nobody else, the file likewise; its header names its key and the SHA-256
// of the payload, so a truncated, corrupt or renamed file is refused. Every
// refusal means a compile (what a start without the cache does), never a
// failure. Writes are atomic: a 0600 temporary file renamed into place.

#include <memory>
#include <string>
#include <vector>

#include "guard/secret_rules.h"
#include "util/cache_dir.h"
#include "util/error.h"
#include "util/unique_fd.h"

struct hs_database;

namespace mcpcell {

struct HsDatabaseFree {
  void operator()(hs_database* db) const;
};
using HsDatabase = std::unique_ptr<hs_database, HsDatabaseFree>;

class SecretDbCache {
 public:
  /// The account's own cache base (util/cache_dir.h AccountCacheBase): a
  /// database read from a directory a cell could once write would be bytes
  /// of the cell's choosing deserialized in the supervisor.
  static std::string DefaultBase();
  /// The cache in <base>/mcpcell/secret-db.
  explicit SecretDbCache(std::string base) : base_(std::move(base)) {}

  /// The key of `rules` for this library and CPU (64 hex digits).
  static std::string Key(const std::vector<SecretRule>& rules);

  /// The database stored under `key`; an error says why there is none
  /// (missing, not the caller's, corrupt, another key, refused by Vectorscan).
  Result<HsDatabase> Load(const std::string& key) const;
  /// Stores `db` under `key` and keeps the newest kKeep files.
  Status Store(const std::string& key, const hs_database* db) const;

  std::string dir() const { return CacheDirPath(base_, "secret-db"); }
  static constexpr std::size_t kKeep = 8;                ///< one per profile's rule set, roughly
  static constexpr std::size_t kMaxBytes = 64u << 20;   ///< larger than any database of ours

 private:
  Result<UniqueFd> OpenDir(bool create) const;
  void Prune(int dir) const;
  std::string base_;
};

}  // namespace mcpcell
