#pragma once
// What `mcpcell ps` and `mcpcell logs` know of one run, while it runs: the
// record in <state>/cells and the stderr copy in <state>/logs
// (cell/cell_record.h, cell/stderr_log.h, util/state_dir.h).

#include <memory>

#include "cell/cell_record.h"
#include "cell/stderr_log.h"
#include "cli/launch_plan.h"

namespace mcpcell {

class TrackedRun {
 public:
  /// Opens the stderr copy and writes the record of an isolated run; first
  /// removes stale records and the oldest logs. Neither is a condition of the
  /// run: when the state directory cannot be used safely (not ours, a
  /// symlink, group- or world-accessible), a warning says why and the run
  /// goes on untracked.
  static std::unique_ptr<TrackedRun> Start(const LaunchPlan& plan);

 private:
  // Members are destroyed in reverse: the record goes first, then the copy
  // ends, so mcpcell's last lines are in the log.
  StderrLog log_;
  LiveCellRecord record_;
};

}  // namespace mcpcell
