#pragma once
// Work a native launch needs that depends on nothing the plan decides, done
// on a thread of its own while the main thread parses and plans (issue 15:
// on a 2-core machine the two overlap). Each result is what the launch would
// have computed itself at that point; nothing is decided earlier than before:
//  - the seccomp program: the deny list is static (SeccompDenyRules); built
//    in when this run's key matches (seccomp_prebuilt.h), else a 0.6-0.8 ms
//    compile;
//  - for root, the facts a host uid claim avoids (/etc/subuid and subgid,
//    every process's ids, NSS loaded): 2.4-3.3 ms, most of it NSS's first
//    lookup and the /proc walk. A process started after the walk is not in
//    it, as a process started right after a claim never was: the claim's
//    flock'd file is what keeps two cells apart (cell_ids.h).
// Without Start() (dry runs, other subcommands) each getter computes in place.

#include "cell/cell_ids.h"
#include "cell/native/seccomp.h"
#include "util/error.h"

namespace mcpcell {

/// Starts the thread, once; later calls do nothing. Call it before planning.
void StartLaunchPrefetch();

/// SeccompProgramFor(SeccompVariant::kDeny): the prefetched result, or made now.
Result<SeccompProgram> PrefetchedSeccomp();

/// HostIdFacts(): the prefetched facts, or read now. Does not wait for the
/// seccomp program, which the thread compiles after them.
IdFacts PrefetchedHostIdFacts();

/// Waits for the thread to end (PrefetchedSeccomp does too). A native cell's
/// PID 1 is a clone of this process without exec: no thread of ours may be
/// alive then (cell/stderr_log.h says why), whether or not the cell takes
/// the seccomp program.
void AwaitLaunchPrefetch();

}  // namespace mcpcell
