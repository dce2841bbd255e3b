#pragma once
// A network allow-list for a container cell (issue 5): the same egress as a
// native cell (src/egress/cell_net.h), set up from outside the container.
//
// A native cell's PID 1 builds its own network (it holds CAP_NET_ADMIN in its
// user namespace until the server starts). A container has no such step of
// ours inside it, so mcpcell does it from the host:
//
//  1. create: no network (NetworkDisabled, NetworkMode "none": the runtime
//     gives the container a network namespace of its own holding only lo);
//     a per-run directory bound read-only at /run/mcpcell-net holds the gate
//     FIFO `go`, and its resolv.conf ("nameserver 127.0.0.53") is bound over
//     /etc/resolv.conf (the engine skips its own resolv.conf when the user
//     mounts one there);
//  2. the container's /bin/sh wrapper (stdio_fifos.h FifoCommand) first runs
//     `read -r _ </run/mcpcell-net/go`: the server cannot start before its
//     network is mediated; mcpcell holds the FIFO O_RDWR, so the read waits
//     for a line and mcpcell dying (every writer gone) is EOF → the wrapper
//     exits without running the server (fails closed);
//  3. after start, mcpcell takes the container's pid from the engine
//     (State.Pid), checks it is really this container (its root has our gate
//     FIFO), and on a thread of its own (setns(2) moves only the calling
//     thread) joins /proc/PID/ns/net and runs SetUpCellNet(): lo up, the
//     local default route, the nft redirect, the two sockets;
//  4. EgressService serves those sockets from the host's network namespace,
//     then the gate line is written and the server starts.
//
// setns(2) into a network namespace needs CAP_SYS_ADMIN both in the user
// namespace owning it (the engine's: the initial one) and in our own, so this
// needs mcpcell to run as root; a docker-group user is refused up front.
// gVisor is refused: runsc runs the guest's network stack (netstack) inside
// the sandbox, so the container's kernel network namespace never sees the
// guest's connections and an nft redirect there mediates nothing.

#include <memory>
#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "cell/docker/run_dirs.h"
#include "cell/run_context.h"
#include "egress/egress_service.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell::docker {

class EngineClient;

/// Where the per-run egress directory appears inside the container.
inline constexpr const char* kEgressTarget = "/run/mcpcell-net";

/// The gate FIFO's path inside the container.
std::string EgressGatePath();

/// One read-only bind of the egress directory into the container.
struct EgressBind {
  std::string source;  ///< host path
  std::string target;  ///< container path
};

/// The binds of an egress directory at `host_dir`: the directory itself at
/// kEgressTarget and its resolv.conf at /etc/resolv.conf.
std::vector<EgressBind> EgressBinds(const std::string& host_dir);

/// Whether a container cell can have an allow-list here; the Error says why
/// not and what to use instead. `runtime`: "" or "runsc"; `fifo_stdio`: the
/// run uses the /bin/sh FIFO wrapper (the gate lives in it); `has_cap_sys_admin`:
/// see HasCapSysAdmin().
Status CheckContainerEgress(const std::string& runtime, bool fifo_stdio, bool has_cap_sys_admin);

/// Whether this process has CAP_SYS_ADMIN in its effective set (capget(2)).
bool HasCapSysAdmin();

/// The host side of one container cell's egress. Move-only; destroying it
/// stops the proxy (the container then has no network) and closes the gate
/// (a wrapper still waiting exits without running the server).
class ContainerEgress {
 public:
  ContainerEgress() = default;

  /// Makes the per-run directory (/dev/shm/mcpcell-net-PID-XXXXXX/d) with
  /// resolv.conf and the gate FIFO owned by uid:gid (read-only for them),
  /// and opens the gate O_RDWR. Reaps directories of dead runs first.
  static Result<ContainerEgress> Prepare(std::uint32_t uid, std::uint32_t gid);

  /// The directory to bind (EgressBinds).
  const std::string& host_dir() const { return inner_; }

  /// After the container started: finds its pid, sets up its network
  /// namespace, starts serving it (events name ctx.server, go to ctx.audit),
  /// then lets the server start. On error nothing was let through the gate.
  Status Start(const EngineClient& engine, const std::string& container_id, const NetworkSpec& network,
               const RunContext& ctx);

 private:
  Result<int> ContainerPid(const EngineClient& engine, const std::string& id) const;
  Status CheckIsOurContainer(int pid) const;

  RunDir outer_;
  std::string inner_;
  UniqueFd gate_;
  std::unique_ptr<EgressService> service_;
};

/// Removes egress directories of dead runs. Returns how many.
int ReapEgressDirs();

}  // namespace mcpcell::docker
