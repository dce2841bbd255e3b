#include "cell/native/landlock.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "util/unique_fd.h"

// Debian 12's linux/landlock.h stops at ABI 2 (REFER). The values below are the
// kernel's UAPI (include/uapi/linux/landlock.h); they never change once released.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)  // ABI 3, Linux 6.2
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)  // ABI 5, Linux 6.10
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  // ABI 6, Linux 6.12
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)  // ABI 6, Linux 6.12
#endif

namespace mcpcell {
namespace {

using Access = std::uint64_t;

/// struct landlock_ruleset_attr as of ABI 6. The installed header only has the
/// first field; the kernel accepts any prefix size it knows (copy_struct_from_user).
struct RulesetAttr {
  Access handled_access_fs = 0;
  // ABI 4; deliberately not used. The cell's network namespace decides, and
  // an allow-list cell's nft rule redirects every TCP connect to the egress
  // proxy AFTER Landlock's connect hook has seen the ORIGINAL port: handling
  // LANDLOCK_ACCESS_NET_CONNECT_TCP would refuse connects to 443 that the
  // proxy is there to judge (see src/egress/cell_net.h).
  Access handled_access_net = 0;
  Access scoped = 0;              // ABI 6
};

constexpr Access kAbi1Fs =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
    LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
    LANDLOCK_ACCESS_FS_MAKE_SYM;

constexpr Access kRead = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;

constexpr Access kWrite =
    LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
    LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE;

/// The rights that mean something on a non-directory (ACCESS_FILE in
/// security/landlock/fs.c); landlock_add_rule(2) returns EINVAL for any other
/// right on a file or device.
constexpr Access kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                               LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                               LANDLOCK_ACCESS_FS_IOCTL_DEV;

Access HandledFs(int abi) {
  Access handled = kAbi1Fs;
  if (abi >= 2) handled |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5) handled |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return handled;
}

/// Size of the ruleset attr prefix this ABI knows, so older kernels see only
/// fields they understand.
std::size_t AttrSize(int abi) {
  if (abi >= 6) return sizeof(RulesetAttr);
  if (abi >= 4) return offsetof(RulesetAttr, scoped);
  return offsetof(RulesetAttr, handled_access_net);
}

Access AllowedFor(const LandlockPath& p, Access handled, bool is_dir) {
  if (p.list_only) return is_dir ? (LANDLOCK_ACCESS_FS_READ_DIR & handled) : 0;
  Access allowed = kRead;
  if (p.execute) allowed |= LANDLOCK_ACCESS_FS_EXECUTE;
  if (p.write) allowed |= kWrite;
  if (p.device) allowed |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  allowed &= handled;
  if (!is_dir) allowed &= kFileRights;
  return allowed;
}

void AddNote(std::string& note, const std::string& line) {
  if (!note.empty()) note += "; ";
  note += line;
}

/// Adds one path-beneath rule. A missing path is skipped and noted: it cannot
/// be reached anyway, and the mount plan may list optional paths.
Status AddPathRule(int ruleset, const LandlockPath& p, Access handled, std::string& note) {
  // O_PATH: the rule needs only an anchor; it must not require read permission
  // on the path itself (landlock_add_rule(2)).
  UniqueFd fd(open(p.path.c_str(), O_PATH | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) {
      AddNote(note, "skipped missing " + p.path);
      return {};
    }
    Error e = ErrnoError("landlock: open O_PATH", p.path);
    e.detail = "cannot anchor a Landlock rule on this path";
    return e;
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoError("landlock: fstat", p.path);
  landlock_path_beneath_attr rule{};
  rule.allowed_access = AllowedFor(p, handled, S_ISDIR(st.st_mode));
  rule.parent_fd = fd.get();
  if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
    return ErrnoError("landlock_add_rule", p.path);
  }
  return {};
}

std::string AbiNote(int abi) {
  std::string note;
  if (abi < 2) note = "ABI 1: renaming or linking into another directory is always denied";
  if (abi < 3) AddNote(note, "ABI < 3: truncate() is not controlled");
  if (abi < 5) AddNote(note, "ABI < 5: device ioctls are not controlled");
  if (abi < 6) AddNote(note, "ABI < 6: signals and abstract unix sockets are not scoped");
  return note;
}

}  // namespace

int LandlockAbi() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  // ENOSYS: kernel built without it; EOPNOTSUPP: built in but not enabled (lsm=).
  return abi > 0 ? static_cast<int>(abi) : 0;
}

Result<PreparedLandlock> PrepareLandlock(const std::vector<LandlockPath>& paths) {
  PreparedLandlock out;
  LandlockReport& report = out.report;
  report.abi = LandlockAbi();
  if (report.abi == 0) {
    report.note = "Landlock unavailable: kernel without CONFIG_SECURITY_LANDLOCK or not in lsm=";
    return out;
  }
  RulesetAttr attr;
  attr.handled_access_fs = HandledFs(report.abi);
  if (report.abi >= 6) {
    // Signals and abstract unix sockets reach only processes in the same (or a
    // nested) Landlock domain: no kill() of the supervisor, no connecting to the
    // host's abstract sockets (e.g. @/tmp/.X11-unix) even in a shared netns.
    attr.scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
  }
  out.ruleset.reset(static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, AttrSize(report.abi), 0)));
  if (!out.ruleset) return ErrnoError("landlock_create_ruleset");
  report.note = AbiNote(report.abi);
  for (const auto& p : paths) {
    MCPCELL_TRY(AddPathRule(out.ruleset.get(), p, attr.handled_access_fs, report.note));
  }
  report.enforced = true;
  report.scoped_signals = (attr.scoped & LANDLOCK_SCOPE_SIGNAL) != 0;
  report.scoped_abstract_unix = (attr.scoped & LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET) != 0;
  return out;
}

Status RestrictLandlock(const PreparedLandlock& prepared) {
  if (!prepared.ruleset) return {};
  if (syscall(SYS_landlock_restrict_self, prepared.ruleset.get(), 0) != 0) {
    Error e = ErrnoError("landlock_restrict_self");
    e.detail = "needs no_new_privs (SetNoNewPrivs) or CAP_SYS_ADMIN";
    return e;
  }
  return {};
}

Result<LandlockReport> ApplyLandlock(const std::vector<LandlockPath>& paths) {
  auto prepared = PrepareLandlock(paths);
  if (!prepared.ok()) return prepared.error();
  MCPCELL_TRY(RestrictLandlock(*prepared));
  return prepared->report;
}

}  // namespace mcpcell
