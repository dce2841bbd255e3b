#pragma once
// Backend selection: which cell runs a CellSpec for a given isolation level,
// and what happens when that backend's engine is missing or down.

#include <string>

#include "cell/cell_result.h"
#include "core/cell_spec.h"
#include "cell/run_context.h"
#include "util/error.h"

namespace mcpcell {

/// What to do when the engine a level needs cannot be reached.
enum class Fallback {
  kNone,    ///< refuse (exit 122): the default — never silently weaker
  kNative,  ///< run in a native cell instead, saying so on stderr
};

/// Parses "none" | "native" (the --fallback flag).
Result<Fallback> ParseFallback(const std::string& text);

/// Runs `spec` at `level`:
///   auto, native   → the native cell
///   docker, container → a container through dockerd (DOCKER_HOST respected)
///   podman         → a container through Podman's API service
///   gvisor         → a container through dockerd with the runsc runtime
/// When the engine is unreachable (no socket, refused, permission denied) or
/// gvisor's runsc is not registered: with Fallback::kNative the native cell
/// runs instead (a warning names what was missing); with kNone the result is
/// exit 122 with the reason. Never runs the server without a cell. An engine
/// that answers but fails later (bad image, create refused) never falls back.
/// `ctx` names the server and the audit log for the cell's own events (egress).
CellResult RunCell(const std::string& level, const CellSpec& spec, const RunContext& ctx,
                   const LaunchCallback& on_launch, Fallback fallback = Fallback::kNone);

/// The backend a level selects: "native" for auto/native, else the engine's
/// name (docker, podman, gvisor); what RunCell would use when the engine is up.
std::string BackendForLevel(const std::string& level);

}  // namespace mcpcell
