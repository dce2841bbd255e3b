#pragma once
// The container backend: runs a CellSpec as a hardened container through the
// Docker Engine API (dockerd, or Podman's compatible service), gVisor being
// the same with the runsc runtime. The supervisor (this process) carries the
// stdio over the attach stream, forwards stop requests as API kills, and
// removes the container when the run ends.

#include <optional>
#include <string>

#include "cell/cell.h"
#include "cell/cell_result.h"
#include "core/cell_spec.h"
#include "cell/docker/engine_endpoint.h"
#include "cell/run_context.h"
#include "source/image_ref.h"
#include "util/error.h"

namespace mcpcell {
class StdioRelay;
}

namespace mcpcell::docker {

struct DockerCellOptions {
  Engine engine = Engine::kDocker;
  std::string runtime;  ///< "" = engine default; "runsc" = gVisor
  /// A docker:// source: the image is the cell's root filesystem and names
  /// what runs (spec.argv are then the args after --, as for `docker run IMAGE
  /// ARGS`); the host's system directories are not mounted. Unset: mcpcell's
  /// empty base image with the host's runtime bound read-only.
  std::optional<ImageRef> source_image;
  /// --uid/--gid were given: they win over the image's USER.
  bool user_given = false;
  std::string backend_name = "docker";  ///< for CellResult.backend and messages
  /// stdin/stdout through FIFOs (stdio_fifos.h) instead of the attach stream.
  /// Needs a /bin/sh in the cell: the host's with the base image; an image's
  /// own when it has one (else the run falls back to attach).
  bool fifo_stdio = true;
  /// Who the run is for: the egress proxy of an allow-list cell
  /// (container_net.h) writes its audit events with these.
  RunContext run;
};

/// Answers whether the engine is reachable (GET /_ping) and, when `runtime`
/// is set, whether it knows that runtime (GET /info). The Error of an
/// unreachable engine satisfies IsEngineUnreachable(); an unknown runtime is
/// reported with what "container runtime".
Status CheckEngine(const DockerCellOptions& opts);

/// Starts the server in a container and returns once it runs (or why it
/// does not): the host side is prepared (host ids claimed, image, secrets,
/// FIFOs, watcher), then the container's life runs through
/// container_lifecycle.h (create → attach → start; the Cell's Wait: stdio
/// pump → wait; its destruction: remove). The engine must have been checked
/// (CheckEngine: the Backend does it once). The client's side of the stdio
/// is `stdio`'s cell ends (the relay, terminals), else mcpcell's own fds.
/// `spec`, `stdio` and `on_launch` must outlive the Cell (`opts` is copied).
StartedCell StartDockerCell(const CellSpec& spec, const DockerCellOptions& opts, StdioRelay& stdio,
                            const LaunchCallback& on_launch);

}  // namespace mcpcell::docker
