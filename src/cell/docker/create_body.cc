#include "cell/docker/create_body.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "cell/docker/container_net.h"
#include "cell/docker/dns_report.h"
#include "cell/docker/podman_mount_paths.h"
#include "cell/docker/seccomp_profile.h"
#include "cell/docker/stdio_fifos.h"

namespace mcpcell::docker {
namespace {

constexpr std::uint64_t kDefaultTmpfsBytes = 64ULL << 20;

nlohmann::json EnvList(const CellSpec& spec) {
  nlohmann::json env = nlohmann::json::array();
  for (const auto& [k, v] : spec.env) env.push_back(k + "=" + v);
  return env;
}

nlohmann::json Labels(const ContainerOptions& o) {
  return {{kLabelCell, o.cell_id},
          {kLabelSupervisor, std::to_string(o.supervisor_pid)},
          {kLabelSupervisorStart, o.supervisor_start},
          {kLabelSupervisorPidNs, o.supervisor_pidns}};
}

nlohmann::json BindMount(const ContainerOptions& o, const std::string& source, const std::string& target,
                         bool writable) {
  // rprivate: nothing the host mounts later under `source` propagates in.
  nlohmann::json options{{"Propagation", "rprivate"}};
  // Docker before 25 (API < 1.44, which has ReadOnlyForceRecursive) makes
  // only the top of a recursive bind read-only: a disk, NFS or 1777 tmpfs
  // mounted below a --read grant stayed writable (adv23). So a read-only
  // bind is not recursive: the cell sees the directory underneath a
  // submount, never the submount; grant it separately to see it. No check of
  // mountinfo, which a mount made after it would escape. Podman binds this
  // way already (and its compat API has no such field). gVisor makes the
  // whole tree read-only itself (EROFS below it; tried), and shows the
  // submount as a native cell does: its binds stay recursive.
  if (!writable && !o.podman && o.runtime != "runsc") options["NonRecursive"] = true;
  return {{"Type", "bind"}, {"Source", source}, {"Target", target}, {"ReadOnly", !writable}, {"BindOptions", options}};
}

// Podman copies what a tmpfs covers into it unless told not to (its default
// is tmpcopyup): every mask would show what it masks (adv23). Docker hands
// options it does not know to the kernel, which refuses them: Podman only.
std::string ForEngine(std::string tmpfs_options, const ContainerOptions& o) {
  return o.podman ? tmpfs_options + ",notmpcopyup" : tmpfs_options;
}

Result<nlohmann::json> NetworkMode(const CellSpec& spec, const ContainerOptions& o) {
  switch (spec.network.mode) {
    case NetworkSpec::Mode::kNone: return nlohmann::json("none");
    case NetworkSpec::Mode::kOpen: return nlohmann::json("bridge");
    case NetworkSpec::Mode::kAllowList: break;
  }
  // An allow-list: a namespace with only lo, which mcpcell mediates from
  // outside (container_net.h) before the gate lets the server start.
  if (!o.egress_host_dir.empty() && !o.stdio_host_dir.empty()) return nlohmann::json("none");
  return MakeError("container network", "",
                   "an egress allow-list in a container cell needs mcpcell's egress directory and the FIFO stdio "
                   "wrapper (container_net.h); refusing rather than opening the network");
}

}  // namespace

nlohmann::json CellSeccompProfile(const std::string& runtime) {
  auto rules = SeccompDenyRules();
  if (runtime == "runsc") {
    // runsc (--oci-seccomp) answers a denied clone3 with EPERM whatever
    // errnoRet says; glibc falls back to clone only on ENOSYS, so every new
    // thread would fail. gVisor's own kernel handles clone3 (the battery's
    // clone3_namespace attempt fails there without this rule).
    std::erase_if(rules, [](const SyscallRule& r) { return r.syscall == "clone3"; });
  }
  return SeccompProfile(rules);
}

std::string TmpfsOptions(const MountSpec& m, const CellSpec& spec, bool owner_options) {
  std::uint64_t size = m.size_bytes != 0 ? m.size_bytes : kDefaultTmpfsBytes;
  std::string o = m.writable ? "rw" : "ro";
  // noexec on every tmpfs (the home too): nothing the cell writes or
  // downloads can be run directly, as in a native cell. Docker adds it by
  // default; Podman does not (adv23).
  o += ",nosuid,nodev,noexec";
  // Sticky and world-writable like any /tmp.
  if (m.target == "/tmp") return o + ",size=" + std::to_string(size) + ",mode=1777";
  o += ",size=" + std::to_string(size);
  // A writable tmpfs (the home) belongs to the cell's user, else it could not write it.
  if (m.writable && !owner_options) {
    o += ",mode=1777";
  } else if (m.writable) {
    o += ",mode=0700,uid=" + std::to_string(spec.uid) + ",gid=" + std::to_string(spec.gid);
  } else {
    o += ",mode=0755";
  }
  return o;
}

namespace {

// A secret in the environment would show in `docker inspect`.
Status CheckNoSecretInEnv(const CellSpec& spec) {
  for (const auto& s : spec.secrets) {
    if (s.env_name) {
      return MakeError("secret " + s.name, "",
                       "mapping a secret to an environment variable is refused in container cells: the value "
                       "would be visible in `docker inspect`; read it from /run/secrets/" + s.name +
                           ", or use a native cell (--isolate=native), which sets " + *s.env_name + " at exec");
    }
  }
  return {};
}

Status CheckGvisorPids(const CellSpec& spec, const ContainerOptions& opts) {
  if (opts.runtime == "runsc" && spec.limits.pids.value && *spec.limits.pids.value < kGvisorMinPids) {
    // The pids cgroup of a gVisor container holds the sandbox's own threads
    // (the Sentry and gofer), not the guest's processes; below this the
    // sandbox cannot even start (runsc start hangs).
    return MakeError("--pids", std::to_string(*spec.limits.pids.value),
                     "a gVisor cell needs a pids limit of at least " + std::to_string(kGvisorMinPids) +
                         " (it counts the sandbox's threads, not the server's processes)");
  }
  return {};
}

// The spec's bind mounts as the engine's Mounts; its tmpfs mounts go to `tmpfs`.
Result<nlohmann::json> SpecMounts(const CellSpec& spec, const ContainerOptions& opts, nlohmann::json* tmpfs) {
  nlohmann::json mounts = nlohmann::json::array();
  for (const auto& m : spec.mounts) {
    if (m.kind == MountSpec::Kind::kTmpfs) {
      if (opts.podman) MCPCELL_TRY(CheckPodmanMountPath("tmpfs target", m.target));
      (*tmpfs)[m.target] = ForEngine(TmpfsOptions(m, spec, opts.tmpfs_owner_options), opts);
      continue;
    }
    if (m.optional && opts.exists && !opts.exists(m.source)) continue;
    // The engine bind-mounts its init (Init: true) at /sbin/docker-init; a
    // read-only /sbin from the host leaves it no mountpoint and start fails.
    // System binaries stay reachable through /usr/sbin (PATH has it).
    if (m.target == "/sbin" && m.origin == MountSpec::Origin::kSystem) continue;
    // The engine resolves the path again, after us: refuse a source that is
    // no longer the object checked at lowering or has a symlink in it now.
    // A swap after this check still reaches the engine (docs/THREAT_MODEL.md).
    MountSpec bind = m;
    // The engine cannot make a symlink: the executable a link names is bound
    // at the link's path instead, resolved here once like every other source.
    char real[PATH_MAX];
    if (m.origin == MountSpec::Origin::kServerLink && ::realpath(m.source.c_str(), real) != nullptr) bind.source = real;
    if (opts.podman) {
      MCPCELL_TRY(CheckPodmanMountPath("bind source", bind.source));
      MCPCELL_TRY(CheckPodmanMountPath("bind target", bind.target));
    }
    if (opts.check_source && m.origin != MountSpec::Origin::kSystem) MCPCELL_TRY(opts.check_source(bind));
    mounts.push_back(BindMount(opts, bind.source, bind.target, bind.writable));
  }
  return mounts;
}

bool DnsReport(const CellSpec& spec, const ContainerOptions& opts) {
  return spec.network.mode == NetworkSpec::Mode::kNone && !opts.dns_report_host_dir.empty();
}

// mcpcell's own binds after the spec's: secrets, the stdio FIFOs, the egress gate.
void AddSupervisorMounts(const CellSpec& spec, const ContainerOptions& opts, nlohmann::json* mounts) {
  if (!opts.secrets_host_dir.empty()) mounts->push_back(BindMount(opts, opts.secrets_host_dir, kSecretsTarget, false));
  // Read-only is enough: opening a FIFO for writing does not write the filesystem.
  if (!opts.stdio_host_dir.empty()) mounts->push_back(BindMount(opts, opts.stdio_host_dir, kStdioTarget, false));
  if (spec.network.mode == NetworkSpec::Mode::kAllowList) {
    for (const auto& b : EgressBinds(opts.egress_host_dir)) mounts->push_back(BindMount(opts, b.source, b.target, false));
  }
  if (DnsReport(spec, opts)) {
    mounts->push_back(BindMount(opts, opts.dns_report_host_dir, kDnsReportTarget, false));
    mounts->push_back(BindMount(opts, opts.dns_report_host_dir + "/resolv.conf", "/etc/resolv.conf", false));
  }
}

bool SpecMountsAt(const CellSpec& spec, const std::string& target) {
  return std::any_of(spec.mounts.begin(), spec.mounts.end(), [&](const MountSpec& m) { return m.target == target; });
}

// mcpcell's own tmpfs over what the engine would mount itself (adv23). An
// empty read-only /sys: the host's sysfs shows kernel BTF, CPU mitigations
// and modules, and a native cell has none (runc still mounts the cell's own
// cgroup below it); gVisor's sysfs is its own synthetic one and stays. For
// Podman, /var/tmp and /run: with a read-only root it mounts writable,
// exec-able tmpfs there (containers.conf read_only_tmpfs); these are noexec,
// and /run is root's (the engine makes its mountpoints there).
void AddEngineTmpfs(const CellSpec& spec, const ContainerOptions& opts, nlohmann::json* tmpfs) {
  auto add = [&](const std::string& target, const std::string& options) {
    if (!tmpfs->contains(target) && !SpecMountsAt(spec, target)) (*tmpfs)[target] = ForEngine(options, opts);
  };
  if (opts.runtime != "runsc") add("/sys", "ro,nosuid,nodev,noexec,size=4096,mode=0755");
  if (!opts.podman) return;
  add("/var/tmp", "rw,nosuid,nodev,noexec,size=" + std::to_string(kDefaultTmpfsBytes) + ",mode=1777");
  add("/run", "rw,nosuid,nodev,noexec,size=1048576,mode=0755");
}

nlohmann::json Ulimits(const CellSpec& spec, const ContainerOptions& opts) {
  nlohmann::json ulimits = nlohmann::json::array();
  auto nofile = static_cast<std::int64_t>(spec.limits.nofile);
  auto core = static_cast<std::int64_t>(spec.limits.core_bytes);
  ulimits.push_back({{"Name", "nofile"}, {"Soft", nofile}, {"Hard", nofile}});
  ulimits.push_back({{"Name", "core"}, {"Soft", core}, {"Hard", core}});
  if (spec.limits.file_bytes != 0) {
    auto fsize = static_cast<std::int64_t>(spec.limits.file_bytes);
    ulimits.push_back({{"Name", "fsize"}, {"Soft", fsize}, {"Hard", fsize}});
  }
  if (opts.nproc_limit) {
    auto nproc = spec.limits.pids.value ? static_cast<std::int64_t>(*spec.limits.pids.value) : kDefaultNproc;
    ulimits.push_back({{"Name", "nproc"}, {"Soft", nproc}, {"Hard", nproc}});
  }
  return ulimits;
}

nlohmann::json HostConfig(const CellSpec& spec, const ContainerOptions& opts, nlohmann::json network,
                          nlohmann::json mounts, nlohmann::json tmpfs) {
  nlohmann::json security_opt = {"no-new-privileges:true"};
  // The same deny list as a native cell (docker's default profile allows ptrace and io_uring).
  if (spec.seccomp) {
    security_opt.push_back("seccomp=" + (opts.seccomp_profile_file.empty() ? CellSeccompProfile(opts.runtime).dump()
                                                                          : opts.seccomp_profile_file));
  }
  nlohmann::json host{
      {"ReadonlyRootfs", true},
      {"CapDrop", {"ALL"}},
      {"SecurityOpt", security_opt},
      {"Privileged", false},
      {"Init", true},
      {"NetworkMode", std::move(network)},
      {"IpcMode", "private"},
      {"CgroupnsMode", "private"},
      {"Mounts", std::move(mounts)},
      {"Tmpfs", std::move(tmpfs)},
      {"Ulimits", Ulimits(spec, opts)},
      // Engine logs would copy every stdout byte (tool results) to disk.
      {"LogConfig", {{"Type", "none"}, {"Config", nlohmann::json::object()}}},
      {"AutoRemove", false},  // mcpcell removes it after reading the exit status
  };
  if (spec.limits.memory_bytes.value) {
    auto mem = static_cast<std::int64_t>(*spec.limits.memory_bytes.value);
    host["Memory"] = mem;
    host["MemorySwap"] = mem;  // equal to Memory: no swap on top
  }
  if (spec.limits.pids.value) host["PidsLimit"] = static_cast<std::int64_t>(*spec.limits.pids.value);
  if (spec.limits.cpus.value) host["NanoCpus"] = std::llround(*spec.limits.cpus.value * 1e9);
  if (!opts.runtime.empty()) host["Runtime"] = opts.runtime;
  // The container's own network namespace (lo only): ports from 53 up are
  // anyone's there, so the DNS relay needs no capability. Nothing outside
  // the namespace is reachable either way.
  if (DnsReport(spec, opts)) host["Sysctls"] = {{"net.ipv4.ip_unprivileged_port_start", "53"}};
  return host;
}

}  // namespace

Result<nlohmann::json> BuildCreateBody(const CellSpec& spec, const ContainerOptions& opts) {
  MCPCELL_TRY(CheckNoSecretInEnv(spec));
  auto network = NetworkMode(spec, opts);
  if (!network) return network.error();
  MCPCELL_TRY(CheckGvisorPids(spec, opts));
  nlohmann::json tmpfs = nlohmann::json::object();
  auto mounts = SpecMounts(spec, opts, &tmpfs);
  if (!mounts) return mounts.error();
  AddSupervisorMounts(spec, opts, &*mounts);
  AddEngineTmpfs(spec, opts, &tmpfs);
  bool fifo = !opts.stdio_host_dir.empty();
  bool egress = spec.network.mode == NetworkSpec::Mode::kAllowList;

  nlohmann::json body{
      {"Image", opts.image},
      {"Env", EnvList(spec)},
      {"WorkingDir", spec.workdir},
      {"User", std::to_string(spec.uid) + ":" + std::to_string(spec.gid)},
      {"Hostname", spec.hostname},
      {"Labels", Labels(opts)},
      // stdio through attach: stdin kept open until the client's EOF, which
      // StdinOnce turns into EOF on the server's stdin. No TTY: a TTY would
      // mangle binary data and merge stderr into stdout.
      {"AttachStdin", !fifo},
      {"AttachStdout", true},
      {"AttachStderr", true},
      {"OpenStdin", !fifo},
      {"StdinOnce", !fifo},
      {"Tty", false},
      // Also for an allow-list: the runtime still gives the container a
      // network namespace of its own (lo only), and the engine skips the
      // ~230 ms of setting up a sandbox for a network we replace anyway.
      {"NetworkDisabled", spec.network.mode != NetworkSpec::Mode::kOpen},
      {"HostConfig", HostConfig(spec, opts, std::move(*network), std::move(*mounts), std::move(tmpfs))},
  };
  if (!spec.argv.empty()) {
    auto argv = DnsReport(spec, opts) ? DnsRelayCommand(spec.argv) : spec.argv;
    auto cmd = fifo ? FifoCommand(argv, egress ? EgressGatePath() : std::string()) : argv;
    if (opts.set_entrypoint) {
      body["Entrypoint"] = nlohmann::json::array({cmd.front()});
      cmd.erase(cmd.begin());
    }
    body["Cmd"] = cmd;
  }
  return body;
}

}  // namespace mcpcell::docker
