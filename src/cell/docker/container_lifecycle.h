#pragma once
// One container's life through the engine, in the order it must happen:
//   create → (an image without /bin/sh: remove, create again for the attach
//   stream) → attach → check sources → start → serve → launched → pump →
//   wait → remove
// The container is removed on every path once it exists, quietly when the
// engine itself went away (the error then names `mcpcell gc`). Everything
// outside the engine (the watcher, the stdio pump, the egress proxy) comes
// in as steps, so the order and the cleanup are tested with a fake engine
// (tests/unit/docker_lifecycle_test.cc).

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cell/cell_result.h"
#include "cell/docker/engine_client.h"
#include "cell/docker/engine_endpoint.h"
#include "cell/docker/stdio_pump.h"
#include "util/error.h"

namespace mcpcell::docker {

/// Sends a signal to the container ("SIGTERM", "SIGKILL").
using KillContainer = std::function<Status(const char* signal)>;

struct ContainerLaunch {
  std::string name;           ///< mcpcell-<cell id>, unique per run
  Engine engine = Engine::kDocker;
  std::string socket;         ///< for messages
  std::chrono::milliseconds grace{2000};
  std::chrono::steady_clock::time_point started;  ///< when the run began (CellResult.duration)
  /// stdin/stdout through FIFOs (stdio_fifos.h) rather than the attach stream.
  bool fifo_stdio = false;
  /// A docker:// image, which may have no /bin/sh for the FIFO wiring.
  bool image_may_lack_shell = false;
  /// The limits the user asked for ("memory", "pids", "cpus"; not the
  /// defaults): one the engine says it discarded refuses the run, as a native
  /// cell refuses a requested limit it cannot set (adv8).
  std::vector<std::string> requested_limits;
  /// The create body for the FIFO (true) or attach (false) stdio path.
  std::function<Result<nlohmann::json>(bool fifo)> body;
  /// An image without /bin/sh keeps its stdio on the attach stream; an
  /// error here (an allow-list needs the FIFO gate) refuses the run (exit 122).
  std::function<Status()> attach_fallback_allowed;
  /// Right before start: the engine binds by path, so sources are checked again.
  std::function<Status()> before_start;
  /// After start: the egress proxy serves (the server waits at its gate).
  std::function<Status(const std::string& id)> after_start;
  /// The server runs: the launch event.
  std::function<void(const std::string& id, bool fifo)> launched;
  /// Carries stdio until the container's output ends (stdio_pump.h).
  std::function<Result<PumpOutcome>(HijackedStream stream, bool fifo, const KillContainer& kill)> pump;
};

/// A started container, its server launched: Wait pumps its stdio to the
/// end and collects its exit status; destroying it removes the container.
/// `engine` and the launch it came from must outlive it.
class RunningContainer {
 public:
  struct State;
  explicit RunningContainer(std::unique_ptr<State> state);
  RunningContainer(const RunningContainer&) = delete;
  RunningContainer& operator=(const RunningContainer&) = delete;
  ~RunningContainer();  ///< removes the container (DELETE ?force=1)

  const std::string& id() const;
  /// pump → wait: the result StartContainer was given, with the exit code or error. Once.
  CellResult Wait();

 private:
  std::unique_ptr<State> state_;
};

/// What StartContainer gives: the running container, or `failure` (nothing left in the engine).
struct ContainerStart {
  std::unique_ptr<RunningContainer> running;
  CellResult failure;
};

/// Creates, attaches and starts the container `launch` describes, up to
/// `launched`. `setup` makes the calls a signal may interrupt (before
/// start); `engine` the ones that must run anyway (kill, wait, remove).
/// `result` comes in with backend and cell id set.
ContainerStart StartContainer(const EngineApi& engine, const EngineApi& setup, const ContainerLaunch& launch,
                              CellResult result);

/// StartContainer, then Wait, then removal: the container's whole life.
CellResult RunContainer(const EngineApi& engine, const EngineApi& setup, const ContainerLaunch& launch,
                        CellResult result);

}  // namespace mcpcell::docker
