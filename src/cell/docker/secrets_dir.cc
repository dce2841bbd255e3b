#include "cell/docker/secrets_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <utility>

#include "cell/docker/cell_user_access.h"
#include "cell/docker/run_dirs.h"
#include "util/unique_fd.h"
#include "util/write_all.h"

namespace mcpcell::docker {
namespace {

constexpr const char* kSecretsParent = "/dev/shm";
constexpr const char* kSecretsPrefix = "mcpcell-secrets-";

Result<std::string> ReadSecret(const std::string& path) {
  // O_NOFOLLOW: the user named this file; a symlink swapped in later is not it.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return ErrnoError("open secret file", path);
  std::string data;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("read secret file", path);
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  return data;
}

Status WriteSecret(const std::string& path, const std::string& data, std::uint32_t uid, std::uint32_t gid,
                   Handover how) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0400));
  if (!fd) return ErrnoError("create secret copy", path);
  // Handed over before writing: the value never sits in a file the cell's user cannot read.
  MCPCELL_TRY(HandToCellUser(how, fd.get(), path, uid, gid, 4, "hand secret to the cell's user"));
  return WriteAll(fd.get(), data, "write secret copy", path);
}

}  // namespace

Result<SecretsDir> SecretsDir::Create(const std::vector<SecretSpec>& secrets, std::uint32_t uid,
                                      std::uint32_t gid, bool acls_honoured) {
  SecretsDir dir;
  Handover how = HandoverFor(uid, acls_honoured);
  if (secrets.empty()) return dir;
  // /dev/shm is a tmpfs: the copies never reach a disk.
  auto outer = RunDir::Create(kSecretsParent, kSecretsPrefix, "secrets directory");
  if (!outer) return outer.error();
  dir.outer_ = std::move(*outer);  // from here on the destructor cleans up
  std::string inner = dir.outer_.path() + "/s";
  if (::mkdir(inner.c_str(), 0700) != 0) return ErrnoError("create secrets directory", inner);
  for (const auto& s : secrets) {
    if (s.name.empty() || s.name.find('/') != std::string::npos || s.name == "." || s.name == "..") {
      return MakeError("secret name", s.name, "must be a plain file name");
    }
    auto data = ReadSecret(s.host_file);
    if (!data) return data.error();
    MCPCELL_TRY(WriteSecret(inner + "/" + s.name, *data, uid, gid, how));
  }
  // chmod first: a chmod after an ACL entry would rewrite its mask.
  if (::chmod(inner.c_str(), 0500) != 0) return ErrnoError("chmod secrets directory", inner);
  MCPCELL_TRY(HandToCellUser(how, -1, inner, uid, gid, 5, "hand secrets directory to the cell's user"));
  dir.inner_ = inner;
  return dir;
}

int ReapSecretDirs() { return ReapDeadRunDirs(kSecretsParent, kSecretsPrefix); }

}  // namespace mcpcell::docker
