#include "cell/docker/container_net.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "cell/docker/engine_client.h"
#include "egress/cell_net.h"
#include "egress/host_loopback.h"

namespace mcpcell::docker {
namespace {

constexpr const char* kParent = "/dev/shm";
constexpr const char* kPrefix = "mcpcell-net-";
constexpr const char* kGateName = "go";
constexpr const char* kResolvConfName = "resolv.conf";

const char* const kRootHint =
    "a network allow-list in a container cell is set up by mcpcell from outside the container (it joins the "
    "container's network namespace, which setns(2) allows only with CAP_SYS_ADMIN): run mcpcell as root, or use "
    "--isolate=native, whose cells set up the same allow-list without privileges";

Status WriteSmallFile(const std::string& path, const std::string& text, mode_t mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode));
  if (!fd) return ErrnoError("create", path);
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    return ErrnoError("write", path);
  }
  // The umask may have taken bits away; the cell's user must read it.
  if (::fchmod(fd.get(), mode) != 0) return ErrnoError("chmod", path);
  return {};
}

Status ChownForCell(const std::string& path, std::uint32_t uid, std::uint32_t gid, const char* what) {
  if (::chown(path.c_str(), uid, gid) != 0 && ::geteuid() != uid) return ErrnoError(what, path);
  return {};
}

// The thread's half: join the container's network namespace and build the
// cell's egress there. setns(2) with CLONE_NEWNET changes the calling
// thread's namespace only (namespaces are per task), so this thread is the
// only one that ever leaves the host's network namespace; sockets keep the
// namespace they were created in, so the listener and the DNS socket stay in
// the container's after the thread ends.
Result<EgressSockets> SetUpInNamespace(int netns_fd, const std::string& ns_path,
                                       const std::vector<std::uint16_t>& host_ports) {
  if (::setns(netns_fd, CLONE_NEWNET) != 0) {
    Error e = ErrnoError("join the container's network namespace", ns_path);
    if (e.err == EPERM) e.detail = kRootHint;
    return e;
  }
  return SetUpCellNet(host_ports);
}

}  // namespace

std::string EgressGatePath() { return std::string(kEgressTarget) + "/" + kGateName; }

std::vector<EgressBind> EgressBinds(const std::string& host_dir) {
  return {{host_dir, kEgressTarget}, {host_dir + "/" + kResolvConfName, "/etc/resolv.conf"}};
}

bool HasCapSysAdmin() {
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  return (data[CAP_SYS_ADMIN / 32].effective & (1U << (CAP_SYS_ADMIN % 32))) != 0;
}

Status CheckContainerEgress(const std::string& runtime, bool fifo_stdio, bool has_cap_sys_admin) {
  if (runtime == "runsc") {
    return MakeError("network allow-list", "gvisor",
                     "a gVisor cell cannot have a network allow-list: runsc runs the server's network stack "
                     "inside the sandbox (netstack), so the container's kernel network namespace, where mcpcell "
                     "redirects every connection to its egress proxy, never sees the server's traffic (and the "
                     "engine's runsc is registered with --network=none). Use --isolate=docker or --isolate=native "
                     "for an allow-list, or drop the allow-list (no network) to keep gVisor");
  }
  if (!fifo_stdio) {
    return MakeError("network allow-list", "container stdio",
                     "a network allow-list in a container cell needs the cell's /bin/sh (the FIFO stdio wrapper "
                     "holds the server back until mcpcell has set up the container's network); this cell has no "
                     "/bin/sh (an image without a shell, e.g. distroless or scratch). Use an image with /bin/sh, "
                     "or drop the allow-list");
  }
  if (!has_cap_sys_admin) return MakeError("network allow-list", "container cell", kRootHint);
  return {};
}

Result<ContainerEgress> ContainerEgress::Prepare(std::uint32_t uid, std::uint32_t gid) {
  (void)ReapEgressDirs();
  ContainerEgress e;
  auto outer = RunDir::Create(kParent, kPrefix, "egress directory");
  if (!outer) return outer.error();
  e.outer_ = std::move(*outer);
  std::string inner = e.outer_.path() + "/d";
  // Root's, 0755: the cell's user may look inside; the bind is read-only,
  // so nothing in the cell can add, remove or chmod anything here.
  if (::mkdir(inner.c_str(), 0755) != 0) return ErrnoError("create egress directory", inner);
  MCPCELL_TRY(WriteSmallFile(inner + "/" + kResolvConfName, std::string("nameserver ") + kCellDnsAddress + "\n", 0444));
  std::string gate = inner + "/" + kGateName;
  // 0400 for the cell's user: its wrapper reads the gate line; nobody in the
  // cell can write it (and the bind is read-only, so no chmod either).
  if (::mkfifo(gate.c_str(), 0400) != 0) return ErrnoError("create egress gate FIFO", gate);
  MCPCELL_TRY(ChownForCell(gate, uid, gid, "hand the egress gate FIFO to the cell's user"));
  // O_RDWR on a FIFO never blocks and keeps a writer alive for the cell's
  // open(O_RDONLY) (fifo(7)); our close is the gate's EOF.
  e.gate_ = UniqueFd(::open(gate.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW));
  if (!e.gate_) return ErrnoError("open egress gate FIFO", gate);
  e.inner_ = inner;
  return e;
}

Result<int> ContainerEgress::ContainerPid(const EngineClient& engine, const std::string& id) const {
  auto r = engine.Call("GET", "/containers/" + id + "/json");
  if (!r) return r.error();
  if (r->status != 200) return MakeError("inspect container for its network namespace", id, EngineMessage(*r));
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  int pid = 0;
  if (j.is_object() && j.contains("State") && j["State"].is_object()) {
    const auto& p = j["State"].value("Pid", nlohmann::json());
    if (p.is_number_integer()) pid = p.get<int>();
  }
  if (pid <= 0) {
    return MakeError("inspect container for its network namespace", id,
                     "the engine reports no running process (State.Pid); did the container exit at once?");
  }
  return pid;
}

// State.Pid is a pid in the engine's pid namespace, and a pid can be reused:
// only act on it if its root holds our gate FIFO (the same inode), which no
// other process's root does.
Status ContainerEgress::CheckIsOurContainer(int pid) const {
  std::string seen = "/proc/" + std::to_string(pid) + "/root" + EgressGatePath();
  struct stat theirs{};
  struct stat ours{};
  if (::stat(seen.c_str(), &theirs) != 0) {
    Error e = ErrnoError("find the container's process", seen);
    e.detail = "the engine's State.Pid does not show mcpcell's egress directory: is the engine in another pid "
               "namespace than mcpcell (mcpcell itself in a container)? The allow-list needs both in the same one";
    return e;
  }
  if (::fstat(gate_.get(), &ours) != 0) return ErrnoError("stat egress gate FIFO", inner_);
  if (theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino) {
    return MakeError("find the container's process", seen,
                     "pid " + std::to_string(pid) + " is not this cell's container (its egress gate differs)");
  }
  std::string own_ns = "/proc/self/ns/net";
  struct stat host_ns{};
  struct stat cell_ns{};
  std::string ns = "/proc/" + std::to_string(pid) + "/ns/net";
  if (::stat(own_ns.c_str(), &host_ns) != 0) return ErrnoError("stat network namespace", own_ns);
  if (::stat(ns.c_str(), &cell_ns) != 0) return ErrnoError("stat network namespace", ns);
  if (host_ns.st_ino == cell_ns.st_ino && host_ns.st_dev == cell_ns.st_dev) {
    // NetworkMode "none" always gets its own; never redirect the host's traffic.
    return MakeError("container network namespace", ns, "the container shares mcpcell's network namespace");
  }
  return {};
}

Status ContainerEgress::Start(const EngineClient& engine, const std::string& container_id,
                              const NetworkSpec& network, const RunContext& ctx) {
  auto pid = ContainerPid(engine, container_id);
  if (!pid) return pid.error();
  MCPCELL_TRY(CheckIsOurContainer(*pid));
  std::string ns_path = "/proc/" + std::to_string(*pid) + "/ns/net";
  // Opened here and handed over as an fd: what the thread joins is the
  // namespace checked above, whatever happens to the pid meanwhile.
  UniqueFd ns(::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns) return ErrnoError("open the container's network namespace", ns_path);
  std::optional<Result<EgressSockets>> made;
  std::vector<std::uint16_t> host_ports = HostLoopbackPortNumbers(network.host_ports);
  std::thread worker([&] { made.emplace(SetUpInNamespace(ns.get(), ns_path, host_ports)); });
  worker.join();
  if (!*made) return made->error();
  auto service = EgressService::Start(EgressConfig{network, ctx.server, ctx.audit}, std::move(**made));
  if (!service) return service.error();
  service_ = std::move(*service);
  // Only now may the server start: its network is mediated.
  if (::write(gate_.get(), "\n", 1) != 1) return ErrnoError("open the egress gate", inner_ + "/" + kGateName);
  return {};
}

int ReapEgressDirs() { return ReapDeadRunDirs(kParent, kPrefix); }

}  // namespace mcpcell::docker
