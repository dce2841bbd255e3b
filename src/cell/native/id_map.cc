#include "cell/native/id_map.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "util/unique_fd.h"

namespace mcpcell {
namespace {

Status WriteProcFile(pid_t pid, const char* name, const std::string& content) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return ErrnoError("open", path);
  if (::write(fd.get(), content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
    return ErrnoError("write " + std::string(name) + " '" + content.substr(0, content.size() - 1) + "' to", path);
  }
  return {};
}

}  // namespace

HostIds CellHostIds(std::uint32_t root_cell_id) {
  if (::geteuid() == 0) return HostIds{root_cell_id, root_cell_id, true};
  return HostIds{static_cast<std::uint32_t>(::geteuid()), static_cast<std::uint32_t>(::getegid()), false};
}

Status WriteIdMaps(pid_t pid, std::uint32_t cell_uid, std::uint32_t cell_gid, const HostIds& host) {
  // user_namespaces(7): an unprivileged writer of gid_map must first deny
  // setgroups, or it could drop a group that was denying it access.
  if (!host.privileged) MCPCELL_TRY(WriteProcFile(pid, "setgroups", "deny"));
  MCPCELL_TRY(WriteProcFile(pid, "uid_map", std::to_string(cell_uid) + " " + std::to_string(host.uid) + " 1\n"));
  MCPCELL_TRY(WriteProcFile(pid, "gid_map", std::to_string(cell_gid) + " " + std::to_string(host.gid) + " 1\n"));
  return {};
}

Status CheckCellCanWrite(const std::string& path, const HostIds& host) {
  if (!host.privileged) return {};  // the cell user is the caller: the kernel decides, as for the caller
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return ErrnoError("--write", path);
  bool ok = st.st_uid == host.uid   ? (st.st_mode & S_IWUSR) != 0
            : st.st_gid == host.gid ? (st.st_mode & S_IWGRP) != 0
                                    : (st.st_mode & S_IWOTH) != 0;
  if (ok) return {};
  return MakeError("--write", path,
                   "when mcpcell runs as root the cell's user is a host uid of its own, claimed for this run (now " +
                       std::to_string(host.uid) + "), which cannot write here; run 'chmod o+w " + path +
                       "' (with the sticky bit, chmod 1777, if others share it), or run mcpcell as the user who "
                       "owns it");
}

}  // namespace mcpcell
