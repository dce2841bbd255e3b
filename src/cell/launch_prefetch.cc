#include "cell/launch_prefetch.h"

#include <unistd.h>

#include <future>
#include <mutex>
#include <optional>

namespace mcpcell {
namespace {

struct Prefetched {
  Result<SeccompProgram> seccomp = SeccompProgram();
  std::optional<IdFacts> facts;  ///< root only
};

// Set once by StartLaunchPrefetch, taken once by the first getter that needs it.
std::mutex mu;
std::optional<std::future<Prefetched>> pending;
std::optional<Prefetched> ready;

Prefetched Compute(bool root) {
  Prefetched p;
  p.seccomp = CompileSeccomp(SeccompDenyRules());
  if (root) {
    p.facts = HostIdFacts();
    (void)p.facts->known(kCellIdFirst);  // NSS's modules load at the first lookup, not during the claim
  }
  return p;
}

Prefetched* Take() {
  std::lock_guard lock(mu);
  if (!ready && pending) {
    ready = pending->get();
    pending.reset();
  }
  return ready ? &*ready : nullptr;
}

}  // namespace

void StartLaunchPrefetch() {
  std::lock_guard lock(mu);
  if (pending || ready) return;
  bool root = ::geteuid() == 0;
  pending = std::async(std::launch::async, [root] { return Compute(root); });
}

Result<SeccompProgram> PrefetchedSeccomp() {
  if (Prefetched* p = Take()) return p->seccomp;
  return CompileSeccomp(SeccompDenyRules());
}

IdFacts PrefetchedHostIdFacts() {
  if (Prefetched* p = Take(); p != nullptr && p->facts) return *p->facts;
  return HostIdFacts();
}

}  // namespace mcpcell
