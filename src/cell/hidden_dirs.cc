#include "cell/hidden_dirs.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>

#include "util/path_prefix.h"
#include "util/state_dir.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

// `dir` resolved through symlinks when it exists, else as written.
std::string Resolved(const std::string& dir) {
  char buf[PATH_MAX];
  return ::realpath(dir.c_str(), buf) != nullptr ? std::string(buf) : dir;
}

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

struct Hidden {
  std::string path;  ///< resolved
  std::string what;
};

std::vector<Hidden> HiddenDirs() {
  std::vector<Hidden> out;
  for (const auto& own : McpcellOwnDirs()) {
    if (own.hidden) out.push_back({Resolved(own.path), own.what});
  }
  return out;
}

}  // namespace

Status MaskHiddenDirsBeneath(CellSpec* spec, const std::string& real, const std::string& target,
                             const std::string& label, std::vector<std::string>* notes) {
  for (const auto& own : McpcellOwnDirs()) {
    if (!own.hidden) continue;
    // As written, or through a symlink on its way (~/.local/state -> /data/state, /data granted).
    if (!PathAtOrBelow(own.path, real) && !PathAtOrBelow(Resolved(own.path), real)) continue;
    MCPCELL_TRY(MakePrivateDirs(own.path));
    std::string dir = Resolved(own.path);
    if (!PathAtOrBelow(dir, real)) continue;  // a link out of the grant: nothing of it shows here
    if (dir == real) return MakeError(label, real, "is " + own.what + "; no cell may see it. Grant a directory outside it");
    std::string inside = target + dir.substr(real == "/" ? 0 : real.size());
    spec->mounts.push_back(WithOrigin(MountSpec{MountSpec::Kind::kTmpfs, "", inside, false, false, 4096, "masked"},
                                      MountSpec::Origin::kMasked));
    notes->push_back("masked " + own.what + " " + dir + " inside " + label);
  }
  return {};
}

Status CheckHiddenDirsOutOfReach(const CellSpec& spec) {
  for (const Hidden& h : HiddenDirs()) {
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
      bool masked = false;
      for (const auto& k : spec.mounts) masked = masked || (IsMask(k) && PathAtOrBelow(inside, k.target));
      if (!masked) {
        return MakeError(m.why, m.source,
                         "would show " + h.what + " " + h.path + " at " + inside +
                             " unmasked; grant a directory that does not contain it");
      }
    }
  }
  return {};
}

}  // namespace mcpcell
