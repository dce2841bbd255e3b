#include "client/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "util/unique_fd.h"

namespace mcpcell {
namespace {

Status WriteAll(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("write", path);
    done += static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace

Result<ConfigFile> ReadConfigFile(const std::string& path) {
  // O_NOFOLLOW: a symlinked config would make mcpcell rewrite whatever it
  // points to (open(2): ELOOP when the last component is a symlink).
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    if (errno == ELOOP) {
      return MakeError("open client config", path,
                       "is a symlink; mcpcell does not write through symlinks — wrap the file it points to "
                       "with --file, or replace the link with the file");
    }
    return ErrnoError("open client config", path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("stat client config", path);
  if (!S_ISREG(st.st_mode)) return MakeError("open client config", path, "is not a regular file");
  if (st.st_uid != ::geteuid()) {
    return MakeError("open client config", path,
                     "is owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " +
                         std::to_string(::geteuid()) + "): run mcpcell client as the file's owner");
  }
  ConfigFile f{path, {}, static_cast<mode_t>(st.st_mode & 07777), st.st_gid, st.st_dev, st.st_ino};
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("read client config", path);
    if (n == 0) break;
    f.text.append(buf, static_cast<std::size_t>(n));
    if (f.text.size() > (64u << 20)) return MakeError("read client config", path, "larger than 64 MiB");
  }
  return f;
}

Status ReplaceConfigFile(const ConfigFile& file, const std::string& text) {
  std::string dir = file.path.substr(0, file.path.rfind('/') + 1);
  std::string base = file.path.substr(file.path.rfind('/') + 1);
  std::string tmp = dir + "." + base + ".mcpcell-XXXXXX";
  UniqueFd fd(::mkostemp(tmp.data(), O_CLOEXEC));  // mode 0600 until fchmod below
  if (!fd) return ErrnoError("create temporary file", tmp);
  auto fail = [&](Error e) {
    ::unlink(tmp.c_str());
    return e;
  };
  if (auto st = WriteAll(fd.get(), text, tmp); !st) return fail(st.error());
  // The file's group too: a 0640 file shared with one group must not become
  // readable by another. When it cannot be kept, the group loses access.
  mode_t mode = file.mode;
  if (::fchown(fd.get(), static_cast<uid_t>(-1), file.gid) != 0) mode &= ~static_cast<mode_t>(070);
  if (::fchmod(fd.get(), mode) != 0) return fail(ErrnoError("chmod", tmp));
  if (::fsync(fd.get()) != 0) return fail(ErrnoError("fsync", tmp));
  struct stat now {};
  if (::lstat(file.path.c_str(), &now) != 0 || now.st_dev != file.dev || now.st_ino != file.ino) {
    return fail(MakeError("replace client config", file.path,
                          "changed while mcpcell was editing it (or was replaced by a link): nothing written; run again"));
  }
  if (::rename(tmp.c_str(), file.path.c_str()) != 0) return fail(ErrnoError("rename over", file.path));
  return {};
}

Status WriteNewPrivateFile(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return ErrnoError("create", path);
  if (auto st = WriteAll(fd.get(), text, path); !st) {
    ::unlink(path.c_str());
    return st;
  }
  if (::fsync(fd.get()) != 0) return ErrnoError("fsync", path);
  return {};
}

}  // namespace mcpcell
