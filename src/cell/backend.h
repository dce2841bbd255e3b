#pragma once
// Backends: the one door every cell goes through. A Backend starts a
// CellSpec (native namespaces, or a container through an engine) and hands
// back a running Cell (cell/cell.h); RunCell picks the backend from the
// isolation level, asks it once whether it can run here, applies the
// fallback rule, puts the supervisor's stdio copy in front of the cell —
// the MCP-aware relay or the raw copy, the same for every backend — and
// waits for the cell's end.
//
// To add a backend: implement Backend, return it from BackendFor, and add
// its level to cell/isolation_level.h. Nothing else dispatches on a level.

#include <memory>
#include <optional>
#include <string>

#include "cell/cell.h"
#include "cell/cell_result.h"
#include "core/cell_spec.h"
#include "cell/isolation_level.h"
#include "cell/run_context.h"
#include "source/image_ref.h"
#include "util/error.h"

namespace mcpcell {

class StdioRelay;

/// What to do when the engine a level needs cannot be reached.
enum class Fallback {
  kNone,    ///< refuse (exit 122): the default — never silently weaker
  kNative,  ///< run in a native cell instead, saying so on stderr
};

/// Parses "none" | "native" (the --fallback flag).
Result<Fallback> ParseFallback(const std::string& text);

/// What a run asks to be run in.
struct CellTarget {
  IsolationLevel level = IsolationLevel::kAuto;
  /// A docker:// source: the image is the cell's filesystem and names what
  /// runs (CellSpec.argv are then the args after --). Only container
  /// backends run images; there is no native fallback for one.
  std::optional<ImageRef> image;
  bool user_given = false;  ///< --uid/--gid given: they win over the image's USER
};

/// One way to run a cell.
class Backend {
 public:
  virtual ~Backend() = default;
  /// "native", "docker", "podman" or "gvisor": CellResult.backend, the launch event, messages.
  virtual std::string name() const = 0;
  /// Whether it can run here now (the engine answers, its runtime is
  /// registered). RunCell asks once per run; Start does not ask again.
  virtual Status Check() const = 0;
  /// Starts `spec` and returns once the server runs (`on_launch` was
  /// called), or why it does not. The cell's stdin/stdout/stderr are
  /// `stdio`'s cell ends (the client's own fds where it has none), which
  /// the caller owns: the backend connects them to the cell and starts
  /// `stdio`'s copies once the cell holds them. `spec`, `ctx`, `stdio` and
  /// `on_launch` must outlive the Cell.
  virtual StartedCell Start(const CellSpec& spec, const RunContext& ctx, StdioRelay& stdio,
                            const LaunchCallback& on_launch) const = 0;
};

/// The backend `target` selects: auto/native → the native cell (auto with an
/// image → docker); docker/container → dockerd (DOCKER_HOST respected);
/// podman → Podman's API service; gvisor → dockerd with the runsc runtime.
/// An image at level native is refused (a native cell has no image to run).
Result<std::unique_ptr<Backend>> BackendFor(const CellTarget& target);

/// Runs `spec` as `target` asks. When the backend cannot run here (engine
/// unreachable, runsc not registered): with Fallback::kNative, and no image,
/// the native cell runs instead (a warning names what was missing); else the
/// result is exit 122 with the reason. Never runs the server without a cell.
/// An engine that answers but fails later (bad image, create refused) never
/// falls back. `ctx` names the server and the audit log for the cell's own
/// events (relay, egress).
CellResult RunCell(const CellTarget& target, const CellSpec& spec, const RunContext& ctx,
                   const LaunchCallback& on_launch, Fallback fallback = Fallback::kNone);

/// The name of the backend `target` selects (what RunCell uses when its engine is up).
std::string BackendName(const CellTarget& target);

}  // namespace mcpcell
