#pragma once
// The body of POST /containers/create for a CellSpec: the hardened container
// configuration, built from the spec alone (pure; unit-tested).

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/cell_spec.h"
#include "util/error.h"

namespace mcpcell::docker {

/// Label keys every mcpcell container carries; `mcpcell gc` reaps by them.
inline constexpr const char* kLabelCell = "io.mcpcell.cell";
inline constexpr const char* kLabelSupervisor = "io.mcpcell.supervisor";
inline constexpr const char* kLabelSupervisorStart = "io.mcpcell.supervisor-start";
/// The supervisor's pid namespace (readlink /proc/self/ns/pid): its pid means
/// nothing to a reaper in another namespace, which must leave it alone.
inline constexpr const char* kLabelSupervisorPidNs = "io.mcpcell.supervisor-pidns";

/// Where secrets appear inside the container (a read-only bind, see secrets_dir.h).
inline constexpr const char* kSecretsTarget = "/run/secrets";

/// RLIMIT_NPROC when nproc_limit is set and the spec has no pids limit.
inline constexpr std::int64_t kDefaultNproc = 1000;

/// The lowest pids limit a gVisor (runsc) container starts with.
inline constexpr std::uint64_t kGvisorMinPids = 256;

/// Facts about this run that are not part of the CellSpec.
struct ContainerOptions {
  std::string image;               ///< image reference
  std::string cell_id;
  long supervisor_pid = 0;         ///< mcpcell's pid, for the gc label
  std::string supervisor_start;    ///< its start time (/proc/PID/stat field 22): guards against pid reuse
  std::string supervisor_pidns;    ///< e.g. "pid:[4026531836]"
  std::string runtime;             ///< "" = the engine's default; "runsc" for gVisor
  std::string secrets_host_dir;    ///< non-empty: bound read-only at /run/secrets
  /// Non-empty: the FIFO directory (stdio_fifos.h), bound at /run/mcpcell-stdio;
  /// the command is wrapped to use it and the attach stream carries no stdin.
  std::string stdio_host_dir;
  /// Non-empty: pass the seccomp profile as this host file (Podman's compat API
  /// reads "seccomp=" as a path; Docker's takes the JSON itself).
  std::string seccomp_profile_file;
  /// Podman refuses tmpfs uid=/gid= options: a writable tmpfs (the home) is then
  /// mode 1777 instead of 0700 owned by the cell's user (the cell has one user).
  bool tmpfs_owner_options = true;
  /// Whether a host path exists; optional mounts whose source is missing are skipped.
  std::function<bool(const std::string&)> exists;
  /// The cell runs an image's own command line (docker:// source): the
  /// command goes in as Entrypoint [argv0] + Cmd [rest], replacing the
  /// image's Entrypoint (spec.argv already holds the image's, completed).
  bool set_entrypoint = false;
  /// Set RLIMIT_NPROC (to the pids limit, else kDefaultNproc): Podman's
  /// default copies the engine's own limits, which a root without
  /// CAP_SYS_RESOURCE may not raise to (the container fails to start).
  bool nproc_limit = false;
  /// Non-empty: the cell's network is an egress allow-list set up from
  /// outside (container_net.h): this per-run directory is bound at
  /// /run/mcpcell-net and its resolv.conf over /etc/resolv.conf, the
  /// container gets no network of the engine's, and the FIFO wrapper waits
  /// at the gate. Needs stdio_host_dir (the gate is in the wrapper).
  std::string egress_host_dir = {};
  /// Non-empty, with network none: the per-run DNS report directory
  /// (dns_report.h), bound at /run/mcpcell-dns with its resolv.conf over
  /// /etc/resolv.conf; the command runs through its relay, and the
  /// container's own net.ipv4.ip_unprivileged_port_start is 53 so the relay
  /// (the cell's uid, no capability) can bind 127.0.0.53:53 on its lo.
  std::string dns_report_host_dir = {};
  /// Checks a bind source just before the engine is asked to bind it (the
  /// engine binds by path; see OpenCheckedBindSource). Unset: not checked.
  std::function<Status(const MountSpec&)> check_source = {};
  /// The engine is Podman's compat service (adv23), which differs in three
  /// ways mcpcell must undo: it re-parses mounts as option strings (paths
  /// with a separator in them are refused: podman_mount_paths.h), a tmpfs
  /// gets a copy of what it covers unless told `notmpcopyup` (a mask would
  /// show what it masks), and a read-only root gets writable, exec-able
  /// tmpfs of Podman's at /var/tmp and /run (mcpcell mounts its own).
  bool podman = false;
};

/// The create body. Hardening that does not depend on the spec is always on:
/// read-only root, CapDrop ALL, no-new-privileges, an init process, no log
/// driver (stdio never lands in a json log on disk), private IPC and cgroup
/// namespaces. Fails for what a container cell cannot honour: an egress
/// allow-list without egress_host_dir and FIFO stdio, or a secret mapped to
/// an env var (its value would show in `docker inspect`).
Result<nlohmann::json> BuildCreateBody(const CellSpec& spec, const ContainerOptions& opts);

/// The seccomp profile a container cell gets: mcpcell's deny list, adapted to `runtime`.
nlohmann::json CellSeccompProfile(const std::string& runtime);

/// Mount options for one tmpfs of the spec, e.g. "rw,nosuid,nodev,noexec,size=134217728,mode=1777".
/// Every tmpfs is noexec: nothing the cell writes can be run, as in a native cell.
std::string TmpfsOptions(const MountSpec& m, const CellSpec& spec, bool owner_options = true);

}  // namespace mcpcell::docker
