#include "util/fs_usage.h"

#include <sys/statvfs.h>

#include <algorithm>

namespace mcpcell {

Result<FsUsage> FsUsageOf(const std::string& path) {
  struct statvfs st{};
  if (::statvfs(path.c_str(), &st) != 0) return ErrnoError("measure the disk use of", path);
  FsUsage use;
  use.bytes = static_cast<std::uint64_t>(st.f_blocks - st.f_bfree) * st.f_frsize;
  use.inodes = st.f_files >= st.f_ffree ? static_cast<std::uint64_t>(st.f_files - st.f_ffree) : 0;
  return use;
}

Result<DiskBudget> DiskBudget::Start(const std::string& dir, std::uint64_t bytes, std::uint64_t inodes) {
  auto use = FsUsageOf(dir);
  if (!use.ok()) return use.error();
  DiskBudget b;
  b.bytes_ = bytes;
  b.inodes_ = inodes;
  b.low_ = *use;
  return b;
}

bool DiskBudget::Over(const std::string& dir) {
  auto now = FsUsageOf(dir);
  if (!now.ok()) return true;
  low_.bytes = std::min(low_.bytes, now->bytes);
  low_.inodes = std::min(low_.inodes, now->inodes);
  return now->bytes > low_.bytes + bytes_ || now->inodes > low_.inodes + inodes_;
}

}  // namespace mcpcell
