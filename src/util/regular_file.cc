#include "util/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "util/unique_fd.h"

namespace mcpcell {
namespace {

Error TooLarge(const std::string& what, const std::string& path, std::uint64_t max_bytes) {
  return MakeError(what, path, "larger than " + std::to_string(max_bytes >> 20) + " MiB");
}

}  // namespace

Result<std::optional<std::string>> ReadRegularFile(const std::string& path, const std::string& what,
                                                   std::uint64_t max_bytes, int extra_flags) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | extra_flags));
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
    return ErrnoError(what, path);
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError(what, path);
  if (!S_ISREG(st.st_mode)) return MakeError(what, path, kNotRegularFile);
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return TooLarge(what, path, max_bytes);
  std::string text;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(what, path);
    if (n == 0) return std::optional<std::string>(std::move(text));
    text.append(buf, static_cast<std::size_t>(n));
    // Checked as it is read: the file may grow after fstat.
    if (text.size() > max_bytes) return TooLarge(what, path, max_bytes);
  }
}

}  // namespace mcpcell
