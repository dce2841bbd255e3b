#include "util/sealed_memfd.h"

#include <fcntl.h>
#include <sys/mman.h>

#include "util/write_all.h"

namespace mcpcell {

Result<UniqueFd> SealedMemfd(const char* name, std::string_view text) {
  UniqueFd fd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return ErrnoError("create a memfd for", name);
  MCPCELL_TRY(WriteAll(fd.get(), text, "fill the memfd for", name));
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    return ErrnoError("seal the memfd for", name);
  }
  return fd;
}

std::string OwnFdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace mcpcell
