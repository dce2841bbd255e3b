#include "doctor/probe.h"

#include "doctor/checks.h"

namespace mcpcell::doctor {

const char* StatusName(Probe::Status s) {
  switch (s) {
    case Probe::Status::kOk: return "ok";
    case Probe::Status::kWarn: return "warn";
    case Probe::Status::kMissing: return "missing";
  }
  return "missing";
}

MachineReport ProbeMachine() {
  MachineReport report;
  auto append = [&report](std::vector<Probe> probes) {
    for (Probe& p : probes) report.checks.push_back(std::move(p));
  };
  UsernsFacts userns;
  EngineFacts engines;
  append(ProbeKernel());
  append(ProbeUserNamespaces(&userns));
  append(ProbeCgroups());
  append(ProbeEngines(&engines));

  // Native cells start in a user namespace; the trial already built the other
  // namespaces inside it, so it alone decides.
  report.backends["native"] = {userns.caller_ok, userns.why};
  report.backends["docker"] = {engines.docker_ok, engines.docker_why};
  report.backends["podman"] = {engines.podman_ok, engines.podman_why};
  bool gvisor = engines.docker_ok && engines.gvisor_runtime;
  report.backends["gvisor"] = {gvisor, engines.docker_ok ? engines.gvisor_why : engines.docker_why};
  return report;
}

}  // namespace mcpcell::doctor
