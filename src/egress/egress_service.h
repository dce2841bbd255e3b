#pragma once
// The egress side of one run: mcpcell's proxy and the cell's DNS stub,
// served by one thread of the supervisor on sockets that live in the cell's
// network namespace (created there before the server starts and handed out
// over the setup socket). The cell has no route anywhere else, so when this
// service stops, or mcpcell dies, the cell has no network at all: it fails
// closed.
//
// Inside the cell (see src/egress/cell_net.h):
//   127.0.0.1:3128 TCP  HTTP proxy (CONNECT and absolute-form forwarding) and
//                       SOCKS5 on the same port (told apart by the first byte),
//                       and every outbound TCP connection to any other address,
//                       redirected here by an nft rule (SO_ORIGINAL_DST says
//                       where it was going);
//   127.0.0.53:53  UDP  the DNS stub; outbound UDP to port 53 anywhere is
//                       redirected here too.

#include <memory>
#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

class AuditLog;

/// The cell-side sockets, created inside the cell's network namespace.
struct EgressSockets {
  UniqueFd proxy_listener;  ///< TCP, bound to 127.0.0.1:3128 and listening
  UniqueFd dns_socket;      ///< UDP, bound to 127.0.0.53:53
};

struct EgressConfig {
  NetworkSpec network;        ///< mode kAllowList: rules, allow_all, --resolve pins
  std::string server;         ///< the server's name, for audit events
  AuditLog* audit = nullptr;  ///< may be null; must outlive the service
};

class EgressService {
 public:
  /// Starts serving `sockets` on a new thread. Errors: the thread or the
  /// sockets could not be set up.
  static Result<std::unique_ptr<EgressService>> Start(EgressConfig config, EgressSockets sockets);

  /// Stops the thread and closes every socket and tunnel (the cell then has
  /// no network).
  virtual ~EgressService() = default;

 protected:
  EgressService() = default;
};

}  // namespace mcpcell
