#pragma once
// A host uid/gid of the cell's own, claimed for one run.
//
// A cell's processes are reachable by any host process with the same uid:
// kill(2) compares uids, ptrace(2)'s access check (kernel/ptrace.c,
// __ptrace_may_access) lets a caller whose uid and gid match the target's
// in, and /proc/PID/root, /proc/PID/mem and /proc/PID/environ follow that
// check. A cell that ran as host uid 1000 (a real user here) or 65534 (nobody,
// shared by daemons) handed its secret, FIFOs and signals to that user. So
// each run gets a number nobody else has: from a reserved block, absent from
// the passwd and group databases, outside every /etc/subuid and /etc/subgid
// range, not the uid or gid of any running process, and locked for the run.
//
// The block: [kCellIdFirst, kCellIdFirst + kCellIdCount) = 0x70000000 ..
// 0x70FFFFFF. Above systemd's container ranges (0x80000..0x6FFFFFFF, which
// also covers what useradd hands out as subordinate ids) and below 2^31
// (some tools treat ids as signed). Same number for uid and gid.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.h"

namespace mcpcell {

inline constexpr std::uint32_t kCellIdFirst = 0x70000000U;
inline constexpr std::uint32_t kCellIdCount = 1U << 24;
/// Where root's claims live (one lock file per claimed id).
inline constexpr const char* kRootCellIdDir = "/run/mcpcell/cell-ids";

struct IdRange {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
};

/// The ranges in /etc/subuid-format text ("name:first:count" lines). Pure.
std::vector<IdRange> ParseSubIdRanges(std::string_view text);

/// What a claim must avoid; the real one reads the machine (HostIdFacts).
struct IdFacts {
  std::vector<IdRange> subordinate;     ///< /etc/subuid and /etc/subgid
  std::set<std::uint32_t> process_ids;  ///< every uid and gid of every running process
  std::function<bool(std::uint32_t)> known;  ///< getpwuid or getgrgid knows it
  /// Where a claim starts in the block; unset: the claim draws it at random.
  std::optional<std::uint32_t> first_offset;
};

/// True when `id` is in the block and none of `facts` uses it. Pure but for `known`.
bool IdIsFree(std::uint32_t id, const IdFacts& facts);

/// The machine's facts: /etc/subuid, /etc/subgid, /proc/[0-9]*/status
/// (Uid:/Gid: lines, all four ids) and NSS.
IdFacts HostIdFacts();

/// `facts` with a claim's random start drawn now and that id's NSS answer
/// asked now and kept. For the launch's prefetch thread (launch_prefetch.h):
/// NSS's first lookup of an unknown id loads nss_systemd (~0.4 ms here) and
/// the lookup pair is ~0.3 ms after it, which the claim, on the launch's
/// critical path, would otherwise pay for the id it tries first. The answer
/// is a snapshot as the process walk is: an account added after it is one
/// added right after the claim.
IdFacts WithFirstCandidateLookedUp(IdFacts facts);

/// One claimed id; the lock file is removed and the lock dropped when it is
/// destroyed. Move-only. A claimer killed with -9 drops the lock with its
/// last fd (flock(2)); the file left behind is free for the next claim.
class CellIdClaim {
 public:
  CellIdClaim() = default;
  CellIdClaim(CellIdClaim&& o) noexcept
      : fd_(std::exchange(o.fd_, -1)), id_(o.id_), path_(std::exchange(o.path_, {})) {}
  CellIdClaim& operator=(CellIdClaim&& o) noexcept {
    if (this != &o) {
      Release();
      fd_ = std::exchange(o.fd_, -1);
      id_ = o.id_;
      path_ = std::exchange(o.path_, {});
    }
    return *this;
  }
  CellIdClaim(const CellIdClaim&) = delete;
  CellIdClaim& operator=(const CellIdClaim&) = delete;
  ~CellIdClaim() { Release(); }

  /// Claims a free id in `dir` (created 0700 when missing; it must be ours
  /// and not a symlink), starting at a random place in the block and trying
  /// up to `attempts` ids. The lock file is dir/<id>.
  static Result<CellIdClaim> Claim(const std::string& dir, const IdFacts& facts, int attempts = 256);

  /// Root's claims go to kRootCellIdDir; anyone else's to a 0700 directory
  /// of its own on /dev/shm (see THREAT_MODEL.md for what that shares).
  static Result<CellIdClaim> ClaimForThisUser();

  std::uint32_t id() const { return id_; }
  bool held() const { return fd_ >= 0; }
  /// The locked file: a forked process that keeps `fd` open holds the claim
  /// too (flock(2) locks belong to the open file description).
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  void Release();
  int fd_ = -1;
  std::uint32_t id_ = 0;
  std::string path_;
};

/// Where this user's claims live: kRootCellIdDir for root, else
/// $XDG_RUNTIME_DIR/mcpcell-ids (when it is the caller's own 0700 dir) or
/// ~/.local/state/mcpcell/cell-ids: never a name another user can take first.
std::string CellIdDirForThisUser();

/// Removes lock files in `dir` that no live claim holds (what a claimer
/// killed with -9 left); returns how many. Safe against a concurrent claim:
/// a claimer re-checks after locking that its path still names its file.
/// Adds the number of claims it looked at to *checked (for `mcpcell gc`).
int ReapCellIdClaims(const std::string& dir, int* checked = nullptr);

}  // namespace mcpcell
