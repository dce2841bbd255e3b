#pragma once
// The doctor's probe groups. Each returns its checks in display order and
// fills in the facts the backend summary needs. Internal to src/doctor/.

#include <map>
#include <string>
#include <vector>

#include "doctor/probe.h"

namespace mcpcell::doctor {

/// Kernel version, namespaces, seccomp, Landlock, no_new_privs, pidfd_open,
/// clone3, the new mount API.
std::vector<Probe> ProbeKernel();

struct UsernsFacts {
  bool caller_ok = false;  ///< the calling user can build a user namespace with the others in it
  std::string why;
};

/// Tries user namespaces for real (as the caller, and as uid 65534 when the
/// caller is root) and reads the sysctls that gate them.
std::vector<Probe> ProbeUserNamespaces(UsernsFacts* facts);

/// cgroup version and, per version, what the caller may control.
std::vector<Probe> ProbeCgroups();

struct EngineFacts {
  bool docker_ok = false;
  std::string docker_why;
  bool podman_ok = false;
  std::string podman_why;
  bool gvisor_runtime = false;  ///< docker names a runsc runtime (from /info, else daemon.json)
  std::string gvisor_why;
};

/// docker and podman (binary, socket, does it answer), runsc, bwrap.
std::vector<Probe> ProbeEngines(EngineFacts* facts);

}  // namespace mcpcell::doctor
