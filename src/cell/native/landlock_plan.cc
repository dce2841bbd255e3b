#include "cell/native/landlock_plan.h"

#include "cell/native/rootfs.h"

namespace mcpcell {

std::vector<LandlockPath> LandlockPathsFor(const CellSpec& spec, const std::vector<MountSpec>& planned) {
  // "/" may be listed, nothing more: file access needs a rule of its own.
  std::vector<LandlockPath> out{LandlockPath{"/", false, false, false, true}};
  for (const char* f : {"/etc/passwd", "/etc/group", "/etc/hosts", "/etc/hostname"}) {
    out.push_back(LandlockPath{f, false, false, false});
  }
  // Written by the cell for an allow-list or no network (the DNS stub's address).
  if (spec.network.mode == NetworkSpec::Mode::kAllowList || spec.network.mode == NetworkSpec::Mode::kNone) out.push_back(LandlockPath{"/etc/resolv.conf", false, false, false});
  for (const auto& m : planned) {
    if (IsMask(m)) continue;
    out.push_back(LandlockPath{m.target, m.writable, m.kind == MountSpec::Kind::kBind, false});
  }
  for (const char* name : kDeviceNodes) {
    out.push_back(LandlockPath{std::string("/dev/") + name, true, false, std::string(name) == "tty"});
  }
  out.push_back(LandlockPath{"/dev/pts", true, false, true});
  out.push_back(LandlockPath{"/dev/ptmx", true, false, true});
  out.push_back(LandlockPath{"/dev/shm", true, false, false});
  out.push_back(LandlockPath{"/proc", false, false, false});
  if (!spec.secrets.empty()) out.push_back(LandlockPath{"/run/secrets", false, false, false});
  return out;
}

}  // namespace mcpcell
