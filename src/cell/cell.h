#pragma once
// A running cell, whatever the backend: what Backend::Start returns once the
// server runs. The caller owns the cell's stdio (cell/native/stdio_relay.h:
// the pipes it copies through, or the client's own fds handed over as they
// are) and decides when to wait and when to stop; the backend owns what it
// made for the cell (namespaces and cgroup, or the container) and undoes it
// when the Cell is destroyed.

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "cell/cell_result.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

class Cell {
 public:
  virtual ~Cell() = default;
  /// Who it is: "pid 4242" (a native cell's PID 1 as the host sees it) or
  /// the container's id.
  virtual std::string identity() const = 0;
  /// Blocks until the cell is gone and says how it ended. The cell's own
  /// stop order runs meanwhile: mcpcell's signals, --timeout, the client's
  /// stdin EOF (grace, SIGTERM, grace, SIGKILL). Call once.
  virtual CellResult Wait() = 0;
  /// Asks the cell to stop: SIGTERM to the server now, SIGKILL once `grace`
  /// has passed. Returns at once; safe from another thread while Wait blocks.
  virtual void Stop(std::chrono::milliseconds grace) = 0;
};

/// What Backend::Start gives: a running cell, or why none runs (`failure`:
/// the exit code of core/exit_codes.h and the error).
struct StartedCell {
  std::unique_ptr<Cell> cell;
  CellResult failure;
  bool ok() const { return cell != nullptr; }
};

/// The Cell of a backend's run object, which the backend writes once:
///   std::optional<CellResult> Start();  the failure of the first step that failed
///   CellResult Wait();  void Stop(std::chrono::milliseconds grace);
///   std::string Identity() const;
/// The handle forwards to it and owns what a Cell promises on its own: a
/// cell dropped unwaited is stopped at once and reaped (its exit collected
/// before the run's resources are undone), so none outlives its handle.
template <class Run>
class CellHandle final : public Cell {
 public:
  explicit CellHandle(std::unique_ptr<Run> run) : run_(std::move(run)) {}
  CellHandle(const CellHandle&) = delete;
  CellHandle& operator=(const CellHandle&) = delete;
  ~CellHandle() override {
    if (waited_) return;
    Stop(std::chrono::milliseconds(0));
    (void)Wait();
  }
  std::string identity() const override { return run_->Identity(); }
  CellResult Wait() override {
    waited_ = true;
    return run_->Wait();
  }
  void Stop(std::chrono::milliseconds grace) override { run_->Stop(grace); }

 private:
  std::unique_ptr<Run> run_;
  bool waited_ = false;
};

/// Starts `run` (see CellHandle): its running Cell, or the failure Start returned.
template <class Run>
StartedCell StartCellHandle(std::unique_ptr<Run> run) {
  if (std::optional<CellResult> failed = run->Start()) return StartedCell{nullptr, std::move(*failed)};
  return StartedCell{std::make_unique<CellHandle<Run>>(std::move(run)), {}};
}

/// The one-shot stop request a Cell's wait loop watches beside its own
/// events: Stop() sets the grace and makes fd() readable.
class StopRequest {
 public:
  /// Fails only when no eventfd can be made (EMFILE).
  static Result<StopRequest> Make();

  StopRequest() = default;
  StopRequest(StopRequest&&) = default;
  StopRequest& operator=(StopRequest&&) = default;

  void Request(std::chrono::milliseconds grace);
  /// Readable once Request was called; -1 in a default-made one.
  int fd() const { return fd_.get(); }
  /// The grace the last request asked for.
  std::chrono::milliseconds grace() const { return std::chrono::milliseconds(grace_ms_->load()); }

 private:
  UniqueFd fd_;
  std::unique_ptr<std::atomic<long long>> grace_ms_ = std::make_unique<std::atomic<long long>>(0);
};

}  // namespace mcpcell
