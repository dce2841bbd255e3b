#include "cell/docker/caller_rights.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace mcpcell::docker {
namespace {

Status CheckIds(const CellSpec& spec, uid_t caller_uid, const std::vector<gid_t>& caller_gids) {
  if (!spec.ids_given) return {};
  if (spec.uid != caller_uid) {
    return MakeError("--uid", std::to_string(spec.uid),
                     "a container cell of a caller that is not root runs as the caller's own uid (" +
                         std::to_string(caller_uid) +
                         ") or mcpcell's claimed one: the engine would run the server as another account with "
                         "that account's file rights. Drop --uid, or run mcpcell as root");
  }
  if (std::find(caller_gids.begin(), caller_gids.end(), static_cast<gid_t>(spec.gid)) == caller_gids.end()) {
    return MakeError("--gid", std::to_string(spec.gid),
                     "is not a group this caller holds (id -G): the engine would give the server that group's "
                     "file rights. Name one of your groups, drop --gid, or run mcpcell as root");
  }
  return {};
}

Status CheckGrant(const MountSpec& m) {
  struct stat st{};
  if (::stat(m.source.c_str(), &st) != 0) return {};  // gone: the bind-source checks refuse it
  int want = R_OK | (S_ISDIR(st.st_mode) ? X_OK : 0) | (m.writable ? W_OK : 0);
  if (::faccessat(AT_FDCWD, m.source.c_str(), want, AT_EACCESS) == 0) return {};
  std::string can = m.writable ? "write" : "read";
  return MakeError(m.why.empty() ? (m.writable ? "--write" : "--read") : m.why, m.source,
                   "you cannot " + can + " it yourself (" + std::string(::strerror(errno)) +
                       "), and a container cell gets no more than its caller: the engine, as root, would hand it "
                       "to the server. Grant what you can " + can + (m.writable ? ", or use --read" : "") +
                       ", or run mcpcell as root");
}

}  // namespace

std::vector<gid_t> CallerGroups() {
  std::vector<gid_t> out{::getegid()};
  int n = ::getgroups(0, nullptr);
  if (n > 0) {
    std::vector<gid_t> more(static_cast<std::size_t>(n));
    n = ::getgroups(n, more.data());
    if (n > 0) out.insert(out.end(), more.begin(), more.begin() + n);
  }
  return out;
}

Status CheckWithinCallerRights(const CellSpec& spec, uid_t caller_uid, const std::vector<gid_t>& caller_gids) {
  if (caller_uid == 0) return {};
  MCPCELL_TRY(CheckIds(spec, caller_uid, caller_gids));
  for (const auto& m : spec.mounts) {
    if (m.kind == MountSpec::Kind::kBind && m.origin == MountSpec::Origin::kGrant) MCPCELL_TRY(CheckGrant(m));
  }
  return {};
}

}  // namespace mcpcell::docker
