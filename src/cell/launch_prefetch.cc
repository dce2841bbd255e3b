#include "cell/launch_prefetch.h"

#include <unistd.h>

#include "cell/native/seccomp_prebuilt.h"

#include <future>
#include <mutex>
#include <optional>
#include <thread>

namespace mcpcell {
namespace {

// The thread and its two results. Root's facts come first: the claim needs
// them before the cgroup is made, the seccomp program only after it, so the
// compile overlaps the cgroup's making instead of delaying the claim.
struct Prefetch {
  std::mutex mu;
  std::thread worker;
  std::optional<std::future<IdFacts>> facts;  ///< root only
  std::optional<std::future<Result<SeccompProgram>>> seccomp;
  std::optional<IdFacts> facts_ready;  ///< kept: a script cell's launch takes them first
  std::optional<Result<SeccompProgram>> seccomp_ready;

  // A run that never clones a native cell (a container's) ends with the thread.
  ~Prefetch() {
    if (worker.joinable()) worker.join();
  }
};

Prefetch& State() {
  static Prefetch p;
  return p;
}

void Compute(bool root, std::promise<IdFacts> facts, std::promise<Result<SeccompProgram>> seccomp) {
  if (root) {
    // NSS's modules load at the first lookup, here rather than in the claim,
    // and the id the claim tries first is asked about here too.
    facts.set_value(WithFirstCandidateLookedUp(HostIdFacts()));
  }
  seccomp.set_value(SeccompProgramFor(SeccompVariant::kDeny));
}

}  // namespace

void StartLaunchPrefetch() {
  Prefetch& p = State();
  std::lock_guard lock(p.mu);
  if (p.seccomp || p.seccomp_ready) return;
  bool root = ::geteuid() == 0;
  std::promise<IdFacts> facts;
  std::promise<Result<SeccompProgram>> seccomp;
  if (root) p.facts = facts.get_future();
  p.seccomp = seccomp.get_future();
  p.worker = std::thread(Compute, root, std::move(facts), std::move(seccomp));
}

Result<SeccompProgram> PrefetchedSeccomp() {
  Prefetch& p = State();
  std::unique_lock lock(p.mu);
  if (p.seccomp) {
    p.seccomp_ready = p.seccomp->get();
    p.seccomp.reset();
    // Its last result: the thread ends before any clone. Joined already when
    // an earlier cell of this run cloned without taking the program (an
    // install-script cell compiles its own: a second join aborted the launch).
    if (p.worker.joinable()) p.worker.join();
  }
  if (p.seccomp_ready) return *p.seccomp_ready;
  lock.unlock();
  return SeccompProgramFor(SeccompVariant::kDeny);
}

IdFacts PrefetchedHostIdFacts() {
  Prefetch& p = State();
  std::unique_lock lock(p.mu);
  if (p.facts) {
    p.facts_ready = p.facts->get();
    p.facts.reset();
  }
  if (p.facts_ready) {
    IdFacts out = *p.facts_ready;
    // The drawn start serves one claim: a later cell of this run (the
    // server's, after an install script's) draws its own.
    p.facts_ready->first_offset.reset();
    return out;
  }
  lock.unlock();
  return HostIdFacts();
}

void AwaitLaunchPrefetch() {
  Prefetch& p = State();
  std::lock_guard lock(p.mu);
  if (p.worker.joinable()) p.worker.join();
}

}  // namespace mcpcell
