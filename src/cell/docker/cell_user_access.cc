#include "cell/docker/cell_user_access.h"

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>

namespace mcpcell::docker {
namespace {

// linux/posix_acl_xattr.h and linux/posix_acl.h (not installed as C++-ready
// headers on Debian without libacl1-dev, which mcpcell does not depend on).
constexpr std::uint32_t kAclVersion = 2;
constexpr std::uint16_t kUserObj = 0x01, kUser = 0x02, kGroupObj = 0x04, kMask = 0x10, kOther = 0x20;
constexpr std::uint32_t kUndefinedId = 0xffffffff;
constexpr const char* kAclName = "system.posix_acl_access";

void PutLe(std::string* out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void PutEntry(std::string* out, std::uint16_t tag, unsigned perms, std::uint32_t id) {
  PutLe(out, tag, 2);
  PutLe(out, perms & 7U, 2);
  PutLe(out, id, 4);
}

Error HandoverError(const std::string& what, const std::string& path, std::uint32_t uid, int err) {
  Error e{what, path, err, ""};
  if (err == EOPNOTSUPP) {
    e.detail = "the filesystem has no POSIX ACLs, and only root may chown to the container's uid " +
               std::to_string(uid) + ": run mcpcell as root, or run the cell as your own user (--uid " +
               std::to_string(::geteuid()) + " --gid " + std::to_string(::getegid()) + ")";
  }
  return e;
}

}  // namespace

Handover HandoverFor(std::uint32_t uid, bool acls_honoured) {
  if (::geteuid() == 0) return Handover::kChown;
  if (::geteuid() == uid) return Handover::kNone;
  return acls_honoured ? Handover::kAcl : Handover::kOther;
}

std::string AccessAclXattr(unsigned owner_perms, std::uint32_t uid, unsigned perms) {
  // Entries in the order the kernel requires (posix_acl_valid: by tag, then id).
  std::string v;
  PutLe(&v, kAclVersion, 4);
  PutEntry(&v, kUserObj, owner_perms, kUndefinedId);
  PutEntry(&v, kUser, perms, uid);
  PutEntry(&v, kGroupObj, 0, kUndefinedId);
  PutEntry(&v, kMask, perms, kUndefinedId);
  PutEntry(&v, kOther, 0, kUndefinedId);
  return v;
}

Status HandToCellUser(Handover how, int fd, const std::string& path, std::uint32_t uid, std::uint32_t gid,
                      unsigned perms, const std::string& what) {
  switch (how) {
    case Handover::kNone: return {};
    case Handover::kChown: {
      int r = fd >= 0 ? ::fchown(fd, uid, gid) : ::lchown(path.c_str(), uid, gid);
      if (r != 0) return HandoverError(what, path, uid, errno);
      return {};
    }
    case Handover::kAcl:
    case Handover::kOther: break;
  }
  struct stat st{};
  if ((fd >= 0 ? ::fstat(fd, &st) : ::lstat(path.c_str(), &st)) != 0) return ErrnoError(what, path);
  if (how == Handover::kOther) {
    // Never a symlink here (lstat above, our own fresh node): chmod would follow one.
    if (S_ISLNK(st.st_mode)) return MakeError(what, path, "is a symbolic link");
    mode_t mode = (st.st_mode & 07777) | (perms & 7U);
    if ((fd >= 0 ? ::fchmod(fd, mode) : ::chmod(path.c_str(), mode)) != 0) return ErrnoError(what, path);
    return {};
  }
  std::string acl = AccessAclXattr((st.st_mode >> 6) & 7U, uid, perms);
  // lsetxattr: never follow a link; the path is a node we just made in our own 0700 directory.
  int r = fd >= 0 ? ::fsetxattr(fd, kAclName, acl.data(), acl.size(), 0)
                  : ::lsetxattr(path.c_str(), kAclName, acl.data(), acl.size(), 0);
  if (r != 0) return HandoverError(what, path, uid, errno);
  return {};
}

}  // namespace mcpcell::docker
