#pragma once
// A grant's scan for credentials and unix sockets (credentials.h ScanGrant),
// remembered between runs. The walk reads every directory of the grant: with
// the 12,424 entries of a Node server's node_modules it was 15 ms of the
// launch's 17 ms of planning on a quiet machine (issue 15), paid again by
// every launch of the same server over the same, unchanged tree.
//
// What is kept, per grant (named by the device and inode of its root): the
// stamp of every directory the walk read or could not open (DirStamp: device,
// inode, ctime and mtime, to the nanosecond), and what the walk found, both
// relative to the root. A later scan of the same root first lstat(2)s each of
// those directories; when every one is still what it was, the tree holds the
// same entries (an entry added, removed or renamed anywhere changes its
// directory's ctime, which user space cannot set back; a directory replaced
// or mounted over changes the device or inode seen by path; a new directory
// is a new entry of a stamped one), so the walk's verdicts stand and it is
// not repeated. The root must also be reached by the same path (a location
// such as .config/gcloud is told by names above the root). Any difference, or any doubt — a missing, foreign, corrupt or
// truncated file, other rules (GrantScanRulesDigest), a stamp of the last two
// seconds (a coarse timestamp could hide a change made in the same tick) —
// means the walk runs as before. Locations outside the walk (the absolute
// ones, the homes) are found afresh every time.
//
// The cache lives in <cache base>/mcpcell/grant-scan (util/cache_dir.h: the
// caller's, writable by nobody else; a cell may never write there). A
// forged file could hide a socket from the mask, so it is held to the same
// rules as the pins and the compiled secret rules.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cell/credentials.h"

namespace mcpcell {

/// What the cache keeps of one scan; paths relative to the scanned root.
struct RememberedScan {
  std::string rules;                 ///< GrantScanRulesDigest of the scan
  /// The root as it was named: a credential location is matched by the
  /// path's last components (".config/gcloud"), some above the root, so a
  /// scan of the same directory under another path is not reused.
  std::string root;
  std::vector<DirStamp> walked;      ///< every directory read (the root first, rel "")
  std::vector<std::string> creds;    ///< the walk's own finds (not FixedCredentialsBelow's)
  std::vector<std::string> sockets;
  std::vector<std::string> unreadable;  ///< directories masked whole: they could not be listed
  bool operator==(const RememberedScan&) const = default;
};

/// The file's text: a header, one length-prefixed line per stamp and find
/// (names may hold any byte but NUL and '/'), and an end line.
std::string FormatRememberedScan(const RememberedScan& scan);

/// The scan a file's text holds, or nullopt when it is not exactly such a
/// text (wrong header, a bad number or length, a line cut short, no end).
std::optional<RememberedScan> ParseRememberedScan(std::string_view text);

/// What `stats` says about each directory: a hook for tests, lstat(2) by path.
struct StampSource {
  virtual ~StampSource() = default;
  /// The stamp of `path` if it is a directory, else nullopt.
  virtual std::optional<DirStamp> Stat(const std::string& path) const;
};

/// Whether every directory `scan` stamped under `root` is still what it was.
bool StillCurrent(const std::string& root, const RememberedScan& scan, const StampSource& stats = StampSource());

/// Directories changed this recently (ns) are not trusted to show the next
/// change in their stamps: ext4's timestamps are clock ticks, not nanoseconds.
inline constexpr std::int64_t kRacyStampNs = 2'000'000'000;

/// ScanGrant(dir, socket_budget), or the remembered result when the tree is
/// unchanged; `cache_base` as AccountCacheBase() gives ("" : no cache). A cache
/// that cannot be read or written is no error: the walk runs. `racy_ns`
/// (tests only) replaces kRacyStampNs.
GrantScan ScanGrantRemembered(const std::string& dir, std::size_t socket_budget, const std::string& cache_base,
                              std::int64_t racy_ns = kRacyStampNs);

}  // namespace mcpcell
