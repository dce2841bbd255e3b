// libFuzzer target: one datagram from a cell to its DNS stub
// (src/egress/dns_stub.cc, DnsStub::Answer, which Start() calls for every
// packet). The stub has an allow-list, as in a cell; its socket is a real
// UDP socket on loopback that is never read (Answer needs no I/O).
#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "core/cell_spec.h"
#include "egress/dns_stub.h"
#include "egress/egress_audit.h"
#include "egress/host_rules.h"
#include "egress/name_map.h"
#include "util/unique_fd.h"

namespace mcpcell {
namespace {

NetworkSpec FuzzNetwork() {
  NetworkSpec n;
  n.mode = NetworkSpec::Mode::kAllowList;
  n.allow_hosts = {"api.example.org", ".example.com"};
  n.allow_ports = {443};
  return n;
}

UniqueFd LoopbackUdp() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (!fd.valid() || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) std::abort();
  return fd;
}

struct Stub {
  boost::asio::io_context io;
  EgressRules rules = EgressRules::FromSpec(FuzzNetwork());
  NameMap names;
  EgressAudit audit{nullptr, "fuzz"};  // no audit log: denials go to stderr (it stops repeating them)
  DnsStub stub{io, LoopbackUdp(), rules, names, audit};
};

}  // namespace
}  // namespace mcpcell

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static auto* stub = new mcpcell::Stub();  // lives for the process, as in a cell
  (void)stub->stub.Answer(data, size);
  return 0;
}
