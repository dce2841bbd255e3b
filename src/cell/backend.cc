#include "cell/backend.h"

#include "cell/docker/docker_cell.h"
#include "cell/docker/engine_client.h"
#include "cell/docker/podman_init.h"
#include "cell/native/native_cell.h"
#include "core/exit_codes.h"
#include "guard/pin_guard.h"
#include "cell/native/stdio_relay.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

class NativeBackend final : public Backend {
 public:
  std::string name() const override { return "native"; }
  Status Check() const override { return {}; }  // what it lacks, it says at setup (exit 122)
  StartedCell Start(const CellSpec& spec, const RunContext& ctx, StdioRelay& stdio,
                    const LaunchCallback& on_launch) const override {
    return StartNativeCell(spec, ctx, stdio, on_launch);
  }
};

class ContainerBackend final : public Backend {
 public:
  explicit ContainerBackend(docker::DockerCellOptions opts) : opts_(std::move(opts)) {}
  std::string name() const override { return opts_.backend_name; }
  Status Check() const override { return docker::CheckEngine(opts_); }
  StartedCell Start(const CellSpec& spec, const RunContext& ctx, StdioRelay& stdio,
                    const LaunchCallback& on_launch) const override {
    docker::DockerCellOptions o = opts_;
    o.run = ctx;  // the egress proxy of an allow-list cell audits with it
    return docker::StartDockerCell(spec, o, stdio, on_launch);
  }

 private:
  docker::DockerCellOptions opts_;
};

docker::DockerCellOptions ContainerOptionsFor(IsolationLevel level) {
  docker::DockerCellOptions o;
  if (level == IsolationLevel::kPodman) {
    o.engine = docker::Engine::kPodman;
    o.backend_name = "podman";
  } else if (level == IsolationLevel::kGvisor) {
    o.runtime = "runsc";
    o.backend_name = "gvisor";
    // runsc's gofer refuses to open host FIFOs (EPERM) unless started with
    // --host-fifo=open; gVisor cells keep stdio on the attach stream.
    o.fifo_stdio = false;
  }
  return o;
}

CellResult Refused(const std::string& backend, int code, Error e) {
  CellResult r;
  r.backend = backend;
  r.exit_code = code;
  r.error = std::move(e);
  return r;
}

bool EngineMissing(const Error& e) {
  return docker::IsEngineUnreachable(e) || e.what == "container runtime" || e.what == docker::kPodmanInitWhat;
}

// The relay's settings for this run, when it is on (CellSpec.relay, lowered
// from the profile and --relay by PlanLaunch).
std::optional<RelayConfig> RelayConfigFor(const CellSpec& spec, const RunContext& ctx) {
  if (!spec.relay.on) return std::nullopt;
  RelayConfig config{ctx.server, ToolRules{spec.relay.tools_allow, spec.relay.tools_deny, spec.relay.tools_origin},
                     static_cast<std::size_t>(spec.relay.max_message), 4096,
                     spec.relay.call_rate, static_cast<std::size_t>(spec.relay.call_burst),
                     static_cast<std::size_t>(spec.relay.max_inflight), spec.relay.call_timeout,
                     spec.relay.audit_content, spec.relay.secrets, nullptr,
                     ToolRules{spec.relay.prompts_allow, spec.relay.prompts_deny, spec.relay.tools_origin, "prompt",
                               "mcpcell.prompts"},
                     ToolRules{spec.relay.resources_allow, spec.relay.resources_deny, spec.relay.tools_origin,
                               "resource", "mcpcell.resources"}};
  config.block_input_requests = spec.relay.pins_block_poisoning;
  return config;
}

// The one place where the supervisor's copy sits between the client's fds
// and the cell's: terminals become pipes (the cell never holds one), and
// with the relay on stdin and stdout always do, read message by message.
CellResult RunWithStdio(const Backend& backend, const CellSpec& spec, const RunContext& ctx,
                        const LaunchCallback& on_launch) {
  auto config = RelayConfigFor(spec, ctx);
  if (config && spec.relay.pins) {
    auto pins = PinGuard::Open({spec.relay.pins_server, spec.relay.pins_dir, spec.relay.pins_block_poisoning});
    if (!pins.ok()) return Refused(backend.name(), kExitSetupFailed, pins.error());
    config->pins = std::move(*pins);
  }
  auto stdio = StdioRelay::Prepare(std::move(config), ctx.audit);
  if (!stdio) return Refused(backend.name(), kExitSetupFailed, stdio.error());
  StartedCell started = backend.Start(spec, ctx, *stdio, on_launch);
  CellResult r = started.ok() ? started.cell->Wait() : std::move(started.failure);
  started.cell.reset();  // what the backend made for the cell is undone (container removed) first
  stdio->Finish();       // the server's last output is out before mcpcell says how it ended
  return r;
}

}  // namespace

Result<Fallback> ParseFallback(const std::string& text) {
  if (text == "none") return Fallback::kNone;
  if (text == "native") return Fallback::kNative;
  return MakeError("--fallback", text, "expected none or native");
}

Result<std::unique_ptr<Backend>> BackendFor(const CellTarget& target) {
  if (target.image && target.level == IsolationLevel::kNative) {
    return MakeError("isolation level", "native",
                     "a docker:// image runs only in a container cell (docker, podman or gvisor): a native cell "
                     "has no image to run");
  }
  if (!target.image && !IsContainerLevel(target.level)) return std::unique_ptr<Backend>(new NativeBackend());
  docker::DockerCellOptions o = ContainerOptionsFor(target.level);
  o.source_image = target.image;
  o.user_given = target.user_given;
  return std::unique_ptr<Backend>(new ContainerBackend(std::move(o)));
}

std::string BackendName(const CellTarget& target) {
  if (target.image && target.level == IsolationLevel::kNative) return "native";
  auto b = BackendFor(target);
  return b ? (*b)->name() : "native";
}

CellResult RunCell(const CellTarget& target, const CellSpec& spec, const RunContext& ctx,
                   const LaunchCallback& on_launch, Fallback fallback) {
  auto backend = BackendFor(target);
  if (!backend) return Refused("native", kExitIsolationUnavailable, backend.error());
  Status ok = (*backend)->Check();
  if (ok) return RunWithStdio(**backend, spec, ctx, on_launch);
  const std::string name = (*backend)->name();
  Error e = ok.error();
  if (target.image) {
    e.detail += " (a docker:// image needs this engine: there is no native fallback for an image)";
    return Refused(name, kExitIsolationUnavailable, std::move(e));
  }
  bool missing = EngineMissing(e);
  if (missing && fallback == Fallback::kNative) {
    Warn(name + " cell unavailable (" + e.Message() + "); falling back to a native cell as --fallback=native allows");
    return RunWithStdio(NativeBackend(), spec, ctx, on_launch);
  }
  if (missing) {
    e.detail += " (refusing to run without a " + name + " cell; --fallback=native would run a native cell instead)";
  }
  return Refused(name, kExitIsolationUnavailable, std::move(e));
}

}  // namespace mcpcell
