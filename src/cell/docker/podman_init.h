#pragma once
// The init binary Podman puts at PID 1 of a container created with Init:
// true, and whether it is there.
//
// Why mcpcell asks for an init at all: nothing of mcpcell's runs inside a
// container, so without one the server itself is PID 1 of the container's pid
// namespace. The kernel drops signals a PID 1 has no handler for, SIGTERM
// included, even from the host (pid_namespaces(7)): MCP's stop order (stdin
// EOF, SIGTERM, SIGKILL) would lose its middle step for every Node or Python
// server without a SIGTERM handler (seen: `docker kill -s TERM` leaves a
// PID-1 `sleep` running without --init, and ends it with); and nothing would reap the server's
// orphaned grandchildren, whose zombies count against the pids limit.
//
// Podman takes its init from containers.conf `init_path` (default
// /usr/libexec/podman/catatonit, package catatonit, only a Recommends of
// podman: `--no-install-recommends` leaves it out) and fails every create
// without it. mcpcell checks first and refuses with the package to install.

#include <optional>
#include <string>
#include <vector>

#include "util/error.h"

namespace mcpcell::docker {

inline constexpr const char* kPodmanDefaultInit = "/usr/libexec/podman/catatonit";
/// The `what` of CheckPodmanInit's Error (the run may fall back on it like on a missing engine).
inline constexpr const char* kPodmanInitWhat = "podman's container init";

/// The containers.conf files Podman reads, in order (later ones win):
/// $CONTAINERS_CONF alone when set; else /usr/share/containers/containers.conf,
/// /etc/containers/containers.conf, /etc/containers/containers.conf.d/*.conf
/// (sorted), and for a non-root user ~/.config/containers/containers.conf and
/// its .d directory (containers.conf(5)). Only files that exist.
std::vector<std::string> ContainersConfFiles();

/// `init_path` from one containers.conf text (a TOML key of [containers], or
/// [engine] in newer releases); nullopt when the file does not set it.
std::optional<std::string> InitPathFromConf(const std::string& text);

/// The init binary Podman will use: the last init_path set, else the default.
std::string PodmanInitPath();

/// Ok when PodmanInitPath() is an executable file; else an Error naming the
/// path, where it comes from and the package (apt-get install catatonit).
Status CheckPodmanInit();

}  // namespace mcpcell::docker
