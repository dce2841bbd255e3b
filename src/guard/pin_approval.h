#pragma once
// `mcpcell pins approve` as an operation on a pin file (docs/PINNING.md).
// The file is edited under its lock (pin_store.h), so two approvals, or an
// approval and a running relay, never lose each other's edits. What the lock
// cannot tell is whether the version pending now is the one the user looked
// at: a server run between `pins diff` and `pins approve` may have recorded
// another. An approval given `expect` (the digest `pins diff` and the relay
// print next to the change) is a compare-and-swap: it changes nothing unless
// what is pending still has that digest.

#include <functional>
#include <string>
#include <vector>

#include "guard/pin_store.h"
#include "util/error.h"

namespace mcpcell {

/// The digest of the pending changes `names` of `f` (every pending change
/// when `names` is empty; names with nothing pending are left out): 32 hex
/// digits of a SHA-256 over each one's name, kind of change and contract hash.
std::string PendingDigest(const PinFile& f, const std::vector<std::string>& names);
/// PendingDigest of a file whose only pending change is `p` of `name`.
std::string PendingDigest(const std::string& name, const PendingTool& p);

struct Approval {
  std::vector<std::string> approved;  ///< tool names, in order
  std::vector<std::string> unknown;   ///< asked for by name, nothing pending
  /// `expect` was given and what is pending has another digest: nothing was
  /// written; `refusal` says so, with both digests and what to run.
  bool stale = false;
  std::string refusal;
};

/// Approves the pending changes `names` (all when empty) of the store's
/// server, under its lock. `show` is called for each before it is approved
/// (what the user is told). With `expect` set, changes nothing and returns
/// a stale Approval when PendingDigest of what is pending now differs. An
/// error only when the store cannot be read or written.
Result<Approval> ApprovePending(
    PinStore& store, const std::vector<std::string>& names, const std::string& expect,
    const std::function<void(const std::string& name, const PendingTool& p, const PinFile& f)>& show);

}  // namespace mcpcell
