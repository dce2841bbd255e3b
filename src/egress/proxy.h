#pragma once
// mcpcell's egress proxy: one listening TCP socket, served on an Asio
// io_context by one thread, one coroutine per connection (no thread per
// connection). Each connection is told apart by how it arrived:
//   redirected by the cell's nft rule (SO_ORIGINAL_DST is not the listener)
//                                        → src/egress/redirect.h
//   first byte 0x05                      → SOCKS5, src/egress/socks5.h
//   anything else                        → HTTP CONNECT / forwarding, src/egress/http_proxy.h
// Every path ends in OpenUpstream (rules, resolution, address check) and one
// audit event. Exceptions never leave a connection's coroutine.

#include <boost/asio/io_context.hpp>

#include "egress/proxy_context.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// Lifts this process's soft RLIMIT_NOFILE to its hard limit. Every tunnel
/// holds two sockets (and a pipe while bulk data flows), so the common soft
/// limit of 1024 (getrlimit(2)) caps a proxy at ~500 tunnels: beyond it,
/// accept(2) fails with EMFILE and new connections wait in the backlog until
/// old ones close. A cell's own limits are set explicitly (CellSpec.limits),
/// so its processes are not affected.
void RaiseFdLimit();

/// Adopts `listener` (a bound, listening TCP socket, IPv4 or IPv6) and
/// accepts connections on `io` until io stops. `ctx` must outlive io's run.
/// Raises the descriptor limit (RaiseFdLimit). Errors: the fd is not a
/// listening TCP socket.
Status StartProxy(boost::asio::io_context& io, UniqueFd listener, ProxyContext& ctx);

}  // namespace mcpcell
