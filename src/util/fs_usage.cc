#include "util/fs_usage.h"

#include <sys/statvfs.h>

namespace mcpcell {

Result<FsUsage> FsUsageOf(const std::string& path) {
  struct statvfs st{};
  if (::statvfs(path.c_str(), &st) != 0) return ErrnoError("measure the disk use of", path);
  FsUsage use;
  use.bytes = static_cast<std::uint64_t>(st.f_blocks - st.f_bfree) * st.f_frsize;
  use.inodes = st.f_files >= st.f_ffree ? static_cast<std::uint64_t>(st.f_files - st.f_ffree) : 0;
  return use;
}

}  // namespace mcpcell
