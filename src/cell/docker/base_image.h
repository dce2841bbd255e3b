#pragma once
// The image a command runs in when the source is not an image: an empty root
// filesystem. Everything the server needs (/usr, /lib*, /bin, its own code)
// comes from the CellSpec's read-only binds, exactly as in a native cell, so
// no registry is needed and the host's runtime is the one that runs.

#include <string>

#include "cell/docker/engine_client.h"
#include "util/error.h"

namespace mcpcell::docker {

/// Name of the empty base image.
inline constexpr const char* kBaseImage = "mcpcell-base:1";

/// Imports the base image (POST /images/create?fromSrc=-, an empty tar) when
/// the engine does not have it yet. Idempotent.
Status EnsureBaseImage(const EngineClient& engine);

}  // namespace mcpcell::docker
