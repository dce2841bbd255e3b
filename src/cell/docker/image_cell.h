#pragma once
// Running a docker:// source: the image at a container level. Unlike a
// command, an image has no native fallback (a native cell has no image to
// unpack), so an engine that is down is always a refusal.

#include <string>

#include "cell/cell_result.h"
#include "core/cell_spec.h"
#include "cell/run_context.h"
#include "source/image_ref.h"

namespace mcpcell::docker {

/// Runs `image` with `spec` (argv = the args after --, see DockerCellOptions)
/// at `level`: auto, container, docker → dockerd; podman; gvisor (runsc).
/// `native` is refused (exit 122), as is an unreachable engine.
/// `user_given`: --uid/--gid were on the command line. `ctx` names the
/// server and the audit log for the cell's own events (egress).
CellResult RunImageCell(const std::string& level, const ImageRef& image, bool user_given, const CellSpec& spec,
                        const RunContext& ctx, const LaunchCallback& on_launch);

}  // namespace mcpcell::docker
