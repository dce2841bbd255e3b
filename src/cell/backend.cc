#include "cell/backend.h"

#include <cstdio>

#include "cell/docker/docker_cell.h"
#include "cell/docker/engine_client.h"
#include "cell/docker/podman_init.h"
#include "cell/native/native_cell.h"
#include "core/exit_codes.h"

namespace mcpcell {
namespace {

Result<docker::DockerCellOptions> ContainerOptionsFor(const std::string& level) {
  docker::DockerCellOptions o;
  if (level == "docker" || level == "container") {
    o.backend_name = "docker";
  } else if (level == "podman") {
    o.engine = docker::Engine::kPodman;
    o.backend_name = "podman";
  } else if (level == "gvisor") {
    o.runtime = "runsc";
    o.backend_name = "gvisor";
    // runsc's gofer refuses to open host FIFOs (EPERM) unless started with
    // --host-fifo=open; gVisor cells keep stdio on the attach stream.
    o.fifo_stdio = false;
  } else {
    return MakeError("isolation level", level, "use auto, native, container, docker, podman or gvisor");
  }
  return o;
}

}  // namespace

std::string BackendForLevel(const std::string& level) {
  if (level == "auto" || level == "native") return "native";
  auto opts = ContainerOptionsFor(level);
  return opts ? opts->backend_name : level;
}

Result<Fallback> ParseFallback(const std::string& text) {
  if (text == "none") return Fallback::kNone;
  if (text == "native") return Fallback::kNative;
  return MakeError("--fallback", text, "expected none or native");
}

CellResult RunCell(const std::string& level, const CellSpec& spec, const RunContext& ctx,
                   const LaunchCallback& on_launch, Fallback fallback) {
  if (level == "auto" || level == "native") return RunNativeCell(spec, ctx, on_launch);
  auto opts = ContainerOptionsFor(level);
  if (!opts) {
    CellResult r;
    r.exit_code = kExitUsage;
    r.error = opts.error();
    return r;
  }
  Status ok = docker::CheckEngine(*opts);
  if (!ok) {
    bool missing = docker::IsEngineUnreachable(ok.error()) || ok.error().what == "container runtime" ||
                   ok.error().what == docker::kPodmanInitWhat;
    if (missing && fallback == Fallback::kNative) {
      std::fprintf(stderr, "mcpcell: warning: %s cell unavailable (%s); falling back to a native cell as "
                   "--fallback=native allows\n", opts->backend_name.c_str(), ok.error().Message().c_str());
      return RunNativeCell(spec, ctx, on_launch);
    }
    CellResult r;
    r.backend = opts->backend_name;
    r.exit_code = kExitIsolationUnavailable;
    r.error = ok.error();
    if (missing) r.error->detail += " (refusing to run without a " + opts->backend_name + " cell; --fallback=native "
                                    "would run a native cell instead)";
    return r;
  }
  opts->run = ctx;  // the egress proxy of an allow-list cell audits with it
  return docker::RunDockerCell(spec, *opts, on_launch);
}

}  // namespace mcpcell
