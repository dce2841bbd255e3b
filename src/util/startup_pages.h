#pragma once
// Start-up touches far more of the binary and its ~20 shared libraries than a
// long-running service uses afterwards (dynamic linking reads every
// library's symbol and relocation tables; the CLI, profiles and rules run
// once). Those file pages stay mapped, and counted in the process's RSS,
// although nothing will read them again. ReleaseStartupPages unmaps them
// from this process; the kernel keeps them in the page cache (shared with
// every other process that maps the files), and any page still needed
// faults back in from there (a minor fault, no I/O).

#include <cstddef>

namespace mcpcell {

/// madvise(MADV_DONTNEED) on every private, read-only, file-backed mapping
/// of this process that holds no private (copied-on-write) page, read from
/// /proc/self/smaps. Only such mappings: for them the call changes nothing
/// but residency (madvise(2): pages of a private file mapping are re-read
/// from the file), while a mapping with a private page (relocated data, a
/// RELRO segment) would lose it. Returns the kB of resident pages released;
/// 0 if smaps cannot be read. Best effort, never fails.
std::size_t ReleaseStartupPages();

}  // namespace mcpcell
