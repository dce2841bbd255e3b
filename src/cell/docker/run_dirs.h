#pragma once
// Per-run directories on /dev/shm (FIFOs, secrets) are named
// <prefix><supervisor pid>-XXXXXX; a supervisor killed with -9 cannot remove
// its own, so later runs and `mcpcell gc` reap those of dead supervisors.

#include <string>
#include <utility>

#include "util/error.h"

namespace mcpcell::docker {

/// Owns one per-run directory <parent>/<prefix><our pid>-XXXXXX and removes
/// the whole tree when destroyed. Move-only.
class RunDir {
 public:
  RunDir() = default;
  RunDir(RunDir&& o) noexcept : path_(std::exchange(o.path_, {})) {}
  RunDir& operator=(RunDir&& o) noexcept {
    if (this != &o) {
      Remove();
      path_ = std::exchange(o.path_, {});
    }
    return *this;
  }
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;
  ~RunDir() { Remove(); }

  /// mkdtemp (mode 0700) under `parent`; `what` names it in errors.
  static Result<RunDir> Create(const std::string& parent, const std::string& prefix, const std::string& what);

  const std::string& path() const { return path_; }

 private:
  void Remove();
  std::string path_;
};

/// Removes directories (and files) in `parent` named `prefix`<pid>-* that we
/// own and whose pid no longer runs. Returns how many were removed.
int ReapDeadRunDirs(const std::string& parent, const std::string& prefix);

/// The seccomp profile files (/dev/shm/mcpcell-seccomp-<pid>-*) of dead runs:
/// a supervisor killed before its ProfileFile destructor leaves one.
inline int ReapSeccompFiles() { return ReapDeadRunDirs("/dev/shm", "mcpcell-seccomp-"); }

}  // namespace mcpcell::docker
