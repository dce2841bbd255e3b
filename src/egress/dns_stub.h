#pragma once
// The cell's DNS stub: the only resolver a cell with an allow-list has. It
// never asks anyone upstream, so DNS itself carries nothing out of the cell;
// it only tells the cell's programs which names they may connect to.
//
// Answers (every reply echoes the question; RA set so stub resolvers accept it):
//   "localhost" and names below it   A 127.0.0.1 / AAAA ::1, rules not asked
//                                    (the cell's own loopback), never audited
//   allowed name (MatchName), A      one A record: NameMap::AddressFor(name), TTL 5
//   allowed name, any other type     NOERROR with no answer (NODATA): the cell
//                                    has no IPv6 route, and the stub has no MX,
//                                    TXT, HTTPS/SVCB... data to give
//   name not allowed, any type       NXDOMAIN, and one audit event per query
//   PTR for a synthetic address      the name it stands for (127.0.0.1 and ::1:
//                                    "localhost"); other reverse names are
//                                    ordinary names (not allowed: NXDOMAIN, audited)
//   opcode other than QUERY, class   NOTIMP (a denied name in another class is
//     other than IN                  still audited)
//   not exactly one question         FORMERR
//   a packet ldns cannot parse       FORMERR when the 12-byte header is there
//                                    and is a query; otherwise dropped
//   a response (QR set)              dropped (never answer an answer: no loops)
// UDP only: answers are small and never truncated, so clients have no reason
// to retry over TCP; DNS over TCP from the cell is refused (nothing listens
// on 127.0.0.53 TCP) or, to an outside resolver, denied at the proxy.
//
// Audit (via "dns"): every query for a name that is not allowed is one
// EgressAttempt with allowed=false; exfiltration through many random labels
// therefore shows up name by name. Allowed lookups are audited at most once
// per name every 5 seconds (the TTL), with the synthetic address. To keep a
// flooding cell from filling the host's disk, every event then goes through
// EgressAudit's bounds, shared with the proxy's events (a token bucket, 1000
// at once and 200 a second; identical denials coalesced; a summary of what
// was held back when the audit ends). See src/egress/egress_audit.h.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>

#include "egress/dns_audit_gate.h"
#include "egress/egress_audit.h"
#include "egress/host_rules.h"
#include "egress/name_map.h"
#include "util/unique_fd.h"

// ldns's types (typedefs of these in <ldns/packet.h>, <ldns/rr.h>,
// <ldns/rdata.h>), so includers do not get all of ldns's macros.
struct ldns_struct_pkt;
struct ldns_struct_rr;
struct ldns_struct_rdf;

namespace mcpcell {

class DnsStub {
 public:
  /// Adopts `udp_socket` (bound, IPv4 or IPv6). `rules`, `names` and `audit`
  /// must outlive the stub, and the stub must outlive `io`'s run. Does not
  /// throw: if the socket cannot be adopted, says so on stderr and Start()
  /// serves nothing (the cell then has no DNS: fails closed).
  DnsStub(boost::asio::io_context& io, UniqueFd udp_socket, const EgressRules& rules, NameMap& names,
          EgressAudit& audit);

  /// Answers only (Answer()), serves no socket: for a container cell,
  /// whose queries come through a relay (src/cell/docker/dns_report.h).
  DnsStub(boost::asio::io_context& io, const EgressRules& rules, NameMap& names, EgressAudit& audit)
      : socket_(io), rules_(rules), names_(names), audit_(audit) {}

  ~DnsStub() = default;
  DnsStub(const DnsStub&) = delete;
  DnsStub& operator=(const DnsStub&) = delete;

  /// Serves queries on `io` until io stops or the socket is closed; never
  /// throws out of handlers. Call once.
  void Start();

  /// The reply to one datagram `query` (empty: send nothing). Public so tests
  /// can check answers without a socket; Start() uses exactly this.
  std::vector<std::uint8_t> Answer(const std::uint8_t* query, std::size_t size);

 private:
  void Receive();
  void Send(std::vector<std::uint8_t> reply, const boost::asio::ip::udp::endpoint& to);
  std::vector<std::uint8_t> AnswerQuestion(const ldns_struct_pkt* query, const ldns_struct_rr* question);
  /// A reverse name the stub knows (synthetic or loopback address); nullopt: an ordinary name.
  std::optional<std::vector<std::uint8_t>> AnswerPtr(const ldns_struct_pkt* query, const ldns_struct_rdf* owner,
                                                     const std::string& host);
  /// Records `attempt` on the audit (which bounds what is written).
  void Audit(EgressAttempt attempt);

  boost::asio::ip::udp::socket socket_;
  const EgressRules& rules_;
  NameMap& names_;
  EgressAudit& audit_;
  DnsAuditGate gate_;  ///< only its FreshName: allowed lookups once per name per window
  // 65535: the largest UDP payload; a bigger buffer never fills, a smaller
  // one would silently truncate (and we would answer a different question).
  std::array<std::uint8_t, 65535> buffer_{};
  boost::asio::ip::udp::endpoint from_;
};

}  // namespace mcpcell
