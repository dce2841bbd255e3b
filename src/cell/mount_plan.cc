#include "cell/mount_plan.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "util/path_prefix.h"

namespace mcpcell {
namespace {

std::size_t Depth(const std::string& p) {
  return p == "/" ? 0 : static_cast<std::size_t>(std::count(p.begin(), p.end(), '/'));
}

}  // namespace

Result<std::string> NormalizeCellPath(const std::string& path) {
  if (path.empty() || path.front() != '/') {
    return MakeError("cell path", path, "must be absolute");
  }
  std::vector<std::string> parts;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return MakeError("cell path", path, "must not contain '..'");
    parts.push_back(part);
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? std::string("/") : out;
}

bool IsReservedTarget(const std::string& target) {
  // /proc and /dev are built by the backend; /run/secrets holds secrets; the
  // root itself is the cell's own tmpfs.
  for (const char* r : {"/proc", "/dev", "/sys", "/run/secrets"}) {
    if (PathAtOrBelow(target, r)) return true;
  }
  return target == "/";
}

Result<std::vector<MountSpec>> PlanMounts(const std::vector<MountSpec>& mounts) {
  std::vector<MountSpec> out;
  std::map<std::string, std::string> seen;  // target → why
  for (const auto& m : mounts) {
    auto target = NormalizeCellPath(m.target);
    if (!target) return target.error();
    if (IsReservedTarget(*target)) {
      return MakeError("mount target", *target,
                       "is reserved for the cell itself (/, /proc, /dev, /sys, /run/secrets)");
    }
    if (m.kind == MountSpec::Kind::kBind) {
      if (m.source.empty() || m.source.front() != '/') {
        return MakeError("mount source", m.source, "must be an absolute host path");
      }
      struct stat st{};
      if (::stat(m.source.c_str(), &st) != 0) {
        if (m.optional) continue;
        return ErrnoError("mount source (" + m.why + ")", m.source);
      }
    }
    auto [it, inserted] = seen.emplace(*target, m.why);
    if (!inserted) {
      return MakeError("mount target", *target,
                       "named twice (" + it->second + " and " + m.why + "); keep one");
    }
    MountSpec planned = m;
    planned.target = *target;
    out.push_back(std::move(planned));
  }
  // Parents first; stable so equal depths keep the order the user gave.
  std::stable_sort(out.begin(), out.end(), [](const MountSpec& a, const MountSpec& b) {
    return Depth(a.target) < Depth(b.target);
  });
  return out;
}

}  // namespace mcpcell
