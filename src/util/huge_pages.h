#pragma once
// Transparent huge pages for large, short-lived buffers (a 24 MiB JSON-RPC
// line in the relay). Such a buffer is written once from start to end, so
// every 4 KiB page costs a fault and a zeroing: ~6,000 faults per 24 MiB
// buffer, about a third of the relay's CPU for such a line (bench/RESULTS.md,
// "Large lines and page faults"). With MADV_HUGEPAGE a fault maps 2 MiB. The
// machine's THP mode is usually "madvise", so the advice is what enables it;
// with "never" it is a no-op, and it never fails a caller.

#include <cstddef>

namespace mcpcell {

/// Buffers smaller than this are not advised: the rounding to 2 MiB would
/// cost more memory than the faults it saves.
inline constexpr std::size_t kHugePageWorthwhile = 4 * 1024 * 1024;

/// madvise(MADV_HUGEPAGE) on the whole pages inside [data, data + size)
/// when size >= kHugePageWorthwhile. Best effort: errors are ignored.
void AdviseHugePages(void* data, std::size_t size);

}  // namespace mcpcell
