#include "cell/hidden_dirs.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>

#include "util/path_prefix.h"
#include "util/resolved_path.h"
#include "util/state_dir.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

// The directory and the missing ones on its way, 0700 (XDG's mode for
// state); an existing one is left as it is (OpenStateDir checks its mode).
Status MakePrivateDirs(const std::string& dir) {
  fs::path made;
  for (const auto& part : fs::path(dir)) {
    made /= part;
    if (::mkdir(made.c_str(), 0700) != 0 && errno != EEXIST) return ErrnoError("create mcpcell's state directory", made.string());
  }
  return {};
}

bool Exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

bool Masked(const CellSpec& spec, const std::string& inside) {
  for (const auto& k : spec.mounts) {
    if (IsMask(k) && PathAtOrBelow(inside, k.target)) return true;
  }
  return false;
}

}  // namespace

Status MaskHiddenDirsBeneath(CellSpec* spec, const std::string& real, const std::string& target,
                             const std::string& label, std::vector<std::string>* notes) {
  // McpcellOwnDirs' paths are resolved as far as they exist (where the
  // directory is, or would be made); so is this one.
  const std::string own_run = ResolvedAsFarAsExists(StateDirForThisUser());
  for (const auto& own : McpcellOwnDirs()) {
    if (!own.hidden) continue;
    const std::string& dir = own.path;
    if (!PathAtOrBelow(dir, real)) continue;  // not in this grant, as written or through a link
    if (dir == real) return MakeError(label, real, "is " + own.what + "; no cell may see it. Grant a directory outside it");
    if (!Exists(dir)) {
      // This run makes its own state directory (its record) while the cell
      // lives: made now, so it is masked. Another one (a default this run
      // does not use) is not made in a home that may not be ours (adv22:
      // root with HOME=/home/alice): nothing is there to hide.
      if (dir != own_run) continue;
      MCPCELL_TRY(MakePrivateDirs(dir));  // made where the resolved path said: the same path after
    }
    std::string inside = target + dir.substr(real == "/" ? 0 : real.size());
    if (Masked(*spec, inside)) continue;  // the credential scan found it by name (any account's)
    spec->mounts.push_back(WithOrigin(MountSpec{MountSpec::Kind::kTmpfs, "", inside, false, false, 4096, "masked"},
                                      MountSpec::Origin::kMasked));
    notes->push_back("masked " + own.what + " " + dir + " inside " + label);
  }
  return {};
}

Status CheckHiddenDirsOutOfReach(const CellSpec& spec) {
  for (const auto& h : McpcellOwnDirs()) {
    if (!h.hidden) continue;
    for (const auto& m : spec.mounts) {
      if (m.kind != MountSpec::Kind::kBind || IsMask(m)) continue;
      if (PathAtOrBelow(m.source, h.path)) {
        return MakeError(m.why, m.source,
                         "lies inside " + h.what + " " + h.path +
                             ": no cell may read other cells' records, stderr copies or pins. Grant a directory "
                             "outside it");
      }
      if (!PathAtOrBelow(h.path, m.source)) continue;
      std::string inside = m.target + h.path.substr(m.source == "/" ? 0 : m.source.size());
      if (!Masked(spec, inside) && Exists(h.path)) {
        return MakeError(m.why, m.source,
                         "would show " + h.what + " " + h.path + " at " + inside +
                             " unmasked; grant a directory that does not contain it");
      }
    }
  }
  return {};
}

}  // namespace mcpcell
