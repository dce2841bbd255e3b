#pragma once
// Name lookups of a container cell with no network (profile none), reported
// like a native cell's (issue 14 item 8): the first lookup of each host says
// on stderr and in the audit log that the server has no network, and how to
// allow the host. Without this a docker, podman or gVisor cell's server
// failed with its own EAI_AGAIN and nobody said why.
//
// The container keeps NetworkMode none (lo only) and gains no network: what
// mcpcell adds is a way for its lookups to reach mcpcell's DNS stub, which
// answers every name but localhost with NXDOMAIN (nothing resolvable, so
// nothing to tunnel data back through) and reports it through EgressAudit,
// the same sentence and audit event as a native cell's. A container has no
// step of ours inside it and, for a docker-group user or under gVisor
// (netstack), no namespace we could join, so the path is:
//
//  1. a per-run directory (/dev/shm/mcpcell-dns-PID-XXXXXX/d) holding the
//     static relay program (dns_relay/dns_relay.c) and a resolv.conf
//     ("nameserver 127.0.0.53") is bound read-only at /run/mcpcell-dns, the
//     resolv.conf also over /etc/resolv.conf;
//  2. the server's command becomes `relay hold -- CMD...`: the relay binds
//     UDP 127.0.0.53:53 in the container (the engine lowers the container's
//     own net.ipv4.ip_unprivileged_port_start to 53; gVisor needs no help),
//     leaves a holder process with that socket, and execs the server;
//  3. after start, mcpcell execs `relay serve` in the container (Engine API
//     exec, its stdio hijacked like attach): it takes the socket from the
//     holder and moves datagrams between it and that stream;
//  4. a thread of mcpcell's answers each one with DnsStub::Answer and writes
//     the reply back. It reads at most one frame (8 + 65535 bytes) at a time;
//     what it logs is bounded by EgressAudit (once per host on stderr, at
//     most 20 hosts; the audit log's token bucket).
//
// Best effort, like the native cell's (HandOverNoNetworkDns): the cell has
// no network either way, so when any step fails the run goes on without
// reports and says why once. No TCP listener: DNS over TCP is refused.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cell/docker/run_dirs.h"
#include "cell/run_context.h"
#include "util/error.h"

namespace mcpcell::docker {

/// Where the per-run DNS directory appears inside the container.
inline constexpr const char* kDnsReportTarget = "/run/mcpcell-dns";

/// The relay program's path inside the container.
std::string DnsRelayPath();

/// `argv` run through the relay: {relay, "hold", "--", argv...}.
std::vector<std::string> DnsRelayCommand(const std::vector<std::string>& argv);

/// One relay frame (dns_relay.c): a datagram and the client it came from.
struct RelayFrame {
  std::uint16_t port = 0;     ///< network byte order, as on the wire
  std::uint32_t address = 0;  ///< network byte order
  std::string_view payload;
};

/// Splits the relay's byte stream into frames, incrementally (a frame may be
/// cut anywhere). Holds at most one frame.
class RelayFrameReader {
 public:
  /// Calls `on_frame` for each complete frame in `bytes`.
  template <typename F>
  void Feed(std::string_view bytes, F&& on_frame) {
    for (char c : bytes) {
      buf_.push_back(c);
      if (buf_.size() < kHeader) continue;
      if (buf_.size() == kHeader + PayloadSize()) {
        on_frame(Frame());
        buf_.clear();
      }
    }
  }
  static constexpr std::size_t kHeader = 8;

  /// `payload` from `client` as a frame for the relay.
  static std::string Encode(const RelayFrame& frame);

 private:
  std::size_t PayloadSize() const;
  RelayFrame Frame() const;
  std::string buf_;
};

class DnsAnswerer;

/// The host side of one container cell's DNS reports. Move-only; destroying
/// it stops answering (the container's lookups then time out, as before).
class ContainerDnsReport {
 public:
  ContainerDnsReport();
  ContainerDnsReport(ContainerDnsReport&&) noexcept;
  ContainerDnsReport& operator=(ContainerDnsReport&&) noexcept;
  ~ContainerDnsReport();

  /// Makes the per-run directory with the relay (0555) and resolv.conf
  /// (0444), readable by everyone (the cell's uid, gVisor's gofer). Reaps
  /// directories of dead runs first.
  static Result<ContainerDnsReport> Prepare();

  /// The directory to bind at kDnsReportTarget; empty before Prepare.
  const std::string& host_dir() const { return inner_; }

  /// After the container started: on a thread of its own, execs the relay's
  /// serving half in it through the engine at `engine_socket` and answers its
  /// queries (events name ctx.server, go to ctx.audit). What fails is said on
  /// stderr once; a container that already stopped is not worth a word.
  void Start(const std::string& engine_socket, const std::string& container_id, const RunContext& ctx);

 private:
  RunDir outer_;
  std::string inner_;
  std::unique_ptr<DnsAnswerer> answerer_;
};

/// Removes DNS directories of dead runs. Returns how many.
int ReapDnsReportDirs();

}  // namespace mcpcell::docker
