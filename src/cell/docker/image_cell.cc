#include "cell/docker/image_cell.h"

#include "cell/docker/docker_cell.h"
#include "cell/docker/engine_client.h"
#include "core/exit_codes.h"

namespace mcpcell::docker {
namespace {

CellResult Refuse(const std::string& backend, int code, Error e) {
  CellResult r;
  r.backend = backend;
  r.exit_code = code;
  r.error = std::move(e);
  return r;
}

}  // namespace

CellResult RunImageCell(const std::string& level, const ImageRef& image, bool user_given, const CellSpec& spec,
                        const RunContext& ctx, const LaunchCallback& on_launch) {
  DockerCellOptions o;
  o.run = ctx;
  o.source_image = image;
  o.user_given = user_given;
  if (level == "auto" || level == "container" || level == "docker") {
    o.backend_name = "docker";
  } else if (level == "podman") {
    o.engine = Engine::kPodman;
    o.backend_name = "podman";
  } else if (level == "gvisor") {
    o.runtime = "runsc";
    o.backend_name = "gvisor";
    o.fifo_stdio = false;  // runsc's gofer refuses host FIFOs (see backend.cc)
  } else if (level == "native") {
    return Refuse("native", kExitIsolationUnavailable,
                  MakeError("isolation level", level,
                            "a docker:// image runs only in a container cell (docker, podman or gvisor): a native "
                            "cell has no image to run"));
  } else {
    return Refuse(level, kExitUsage,
                  MakeError("isolation level", level, "use auto, native, container, docker, podman or gvisor"));
  }
  if (auto ok = CheckEngine(o); !ok) {
    Error e = ok.error();
    e.detail += " (a docker:// image needs this engine: there is no native fallback for an image)";
    return Refuse(o.backend_name, kExitIsolationUnavailable, std::move(e));
  }
  return RunDockerCell(spec, o, on_launch);
}

}  // namespace mcpcell::docker
