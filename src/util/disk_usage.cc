#include "util/disk_usage.h"

#include <fts.h>
#include <sys/stat.h>

namespace mcpcell {

std::uint64_t DiskBytesBelow(const std::string& dir) {
  char* paths[] = {const_cast<char*>(dir.c_str()), nullptr};  // NOLINT: fts_open's signature
  FTS* fts = ::fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR | FTS_XDEV, nullptr);
  if (fts == nullptr) return 0;
  std::uint64_t total = 0;
  while (FTSENT* e = ::fts_read(fts)) {
    if (e->fts_info == FTS_F && e->fts_statp != nullptr) total += static_cast<std::uint64_t>(e->fts_statp->st_blocks) * 512;
  }
  ::fts_close(fts);
  return total;
}

}  // namespace mcpcell
