#pragma once
// Where a container engine listens: the unix socket of dockerd or of Podman's
// Docker-compatible API service.

#include <string>

#include "util/error.h"

namespace mcpcell::docker {

enum class Engine { kDocker, kPodman };

/// The socket path for `engine`. Docker: DOCKER_HOST (unix:// only), else
/// /var/run/docker.sock. Podman: CONTAINER_HOST (unix:// only), else
/// /run/podman/podman.sock for root, $XDG_RUNTIME_DIR/podman/podman.sock
/// otherwise. A tcp:// or ssh:// host is refused: mcpcell hands the engine
/// host paths to bind, which only makes sense for a local engine.
Result<std::string> EngineSocket(Engine engine);

/// "docker" or "podman".
std::string ToString(Engine engine);

}  // namespace mcpcell::docker
