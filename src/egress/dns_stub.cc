#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12
#include "egress/dns_stub.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <fmt/format.h>
#include <ldns/ldns.h>

#include "egress/dns_name.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

namespace asio = boost::asio;
using asio::ip::udp;

constexpr std::uint32_t kTtlSeconds = 5;

struct PktFree {
  void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};
struct RrFree {
  void operator()(ldns_rr* r) const { ldns_rr_free(r); }
};
struct RdfFree {
  void operator()(ldns_rdf* r) const { ldns_rdf_deep_free(r); }
};
struct MallocFree {
  void operator()(void* p) const { std::free(p); }  // ldns allocates with malloc (LDNS_FREE is free)
};
using Pkt = std::unique_ptr<ldns_pkt, PktFree>;
using Rr = std::unique_ptr<ldns_rr, RrFree>;
using Rdf = std::unique_ptr<ldns_rdf, RdfFree>;

std::string TakeString(char* s) {
  std::unique_ptr<char, MallocFree> owned(s);
  return owned ? std::string(owned.get()) : std::string();
}

std::string TypeName(ldns_rr_type type) { return TakeString(ldns_rr_type2str(type)); }

/// The question's name as a host (CanonicalWireName: LDH labels, lower
/// case, no trailing dot; the root is "."), or nullopt with `*why`.
std::optional<std::string> HostOf(const ldns_rdf* owner, std::string* why) {
  return CanonicalWireName(ldns_rdf_data(owner), ldns_rdf_size(owner), why);
}

EgressAttempt DnsAttempt(const std::string& host, ldns_rr_type type, const RuleVerdict& verdict) {
  EgressAttempt a;
  a.via = "dns";
  a.host = host;
  a.allowed = verdict.allowed;
  a.rule = verdict.rule;
  a.how_to_allow = verdict.how_to_allow;
  a.dns_type = TypeName(type);
  return a;
}

bool IsLocalhost(std::string_view host) {
  return host == "localhost" || (host.size() > 10 && host.ends_with(".localhost"));
}

/// "4.3.2.1.in-addr.arpa" → 1.2.3.4 (host byte order); nullopt otherwise.
std::optional<std::uint32_t> ReverseV4(std::string_view host) {
  constexpr std::string_view kSuffix = ".in-addr.arpa";
  if (!host.ends_with(kSuffix)) return std::nullopt;
  std::string reversed;
  std::string_view rest = host.substr(0, host.size() - kSuffix.size());
  for (int i = 0; i < 4; ++i) {
    auto dot = rest.rfind('.');
    std::string_view label = dot == std::string_view::npos ? rest : rest.substr(dot + 1);
    if (!reversed.empty()) reversed += '.';
    reversed += label;
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(0, dot);
    if (dot == std::string_view::npos && i < 3) return std::nullopt;
  }
  in_addr addr{};
  if (!rest.empty() || inet_pton(AF_INET, reversed.c_str(), &addr) != 1) return std::nullopt;
  return ntohl(addr.s_addr);
}

bool IsReverseV6Loopback(std::string_view host) {
  // ::1 is 1 followed by 31 zero nibbles, then ip6.arpa.
  std::string want = "1.";
  for (int i = 0; i < 31; ++i) want += "0.";
  return host == want + "ip6.arpa";
}

/// A reply carrying the query's id, opcode, RD and question.
Pkt ReplyTo(const ldns_pkt* query, ldns_pkt_rcode rcode) {
  Pkt reply(ldns_pkt_new());
  if (!reply) return nullptr;
  ldns_pkt_set_id(reply.get(), ldns_pkt_id(query));
  ldns_pkt_set_qr(reply.get(), true);
  ldns_pkt_set_opcode(reply.get(), ldns_pkt_get_opcode(query));
  ldns_pkt_set_rd(reply.get(), ldns_pkt_rd(query));
  // RA: to the cell we are its recursive resolver; without it stub resolvers
  // and dig complain ("recursion requested but not available").
  ldns_pkt_set_ra(reply.get(), true);
  ldns_pkt_set_rcode(reply.get(), static_cast<std::uint8_t>(rcode));
  if (ldns_pkt_qdcount(query) == 1) {
    ldns_rr* question = ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(query), 0));
    if (question) ldns_pkt_push_rr(reply.get(), LDNS_SECTION_QUESTION, question);
  }
  // Answer EDNS with EDNS (RFC 6891 §7): our answers are tiny, 1232 is the
  // DNS flag day 2020 size every resolver accepts.
  if (ldns_pkt_edns(query)) ldns_pkt_set_edns_udp_size(reply.get(), 1232);
  return reply;
}

/// Appends one answer record for the question's owner.
void AddAnswer(ldns_pkt* reply, const ldns_rdf* owner, ldns_rr_type type, Rdf rdata) {
  if (!rdata) return;
  Rr rr(ldns_rr_new());
  if (!rr) return;
  ldns_rr_set_owner(rr.get(), ldns_rdf_clone(owner));
  ldns_rr_set_type(rr.get(), type);
  ldns_rr_set_class(rr.get(), LDNS_RR_CLASS_IN);
  ldns_rr_set_ttl(rr.get(), kTtlSeconds);
  ldns_rr_push_rdf(rr.get(), rdata.release());
  ldns_pkt_push_rr(reply, LDNS_SECTION_ANSWER, rr.release());
}

Rdf ARecord(std::uint32_t host_order) {
  std::uint32_t net = htonl(host_order);
  return Rdf(ldns_rdf_new_frm_data(LDNS_RDF_TYPE_A, sizeof net, &net));
}

Rdf AaaaLoopback() {
  in6_addr loop = IN6ADDR_LOOPBACK_INIT;
  return Rdf(ldns_rdf_new_frm_data(LDNS_RDF_TYPE_AAAA, sizeof loop, &loop));
}

std::vector<std::uint8_t> ToWire(const ldns_pkt* reply) {
  if (!reply) return {};
  std::uint8_t* wire = nullptr;
  std::size_t size = 0;
  if (ldns_pkt2wire(&wire, reply, &size) != LDNS_STATUS_OK) {
    std::free(wire);
    return {};
  }
  std::unique_ptr<std::uint8_t, MallocFree> owned(wire);
  return std::vector<std::uint8_t>(wire, wire + size);
}

/// A packet ldns could not parse: FORMERR if the header is there and is a
/// query (id and opcode from the header, no question), otherwise nothing.
std::vector<std::uint8_t> FormErrFromHeader(const std::uint8_t* data, std::size_t size) {
  if (size < LDNS_HEADER_SIZE || LDNS_QR_WIRE(data)) return {};
  Pkt reply(ldns_pkt_new());
  if (!reply) return {};
  ldns_pkt_set_id(reply.get(), LDNS_ID_WIRE(data));
  ldns_pkt_set_qr(reply.get(), true);
  ldns_pkt_set_opcode(reply.get(), static_cast<ldns_pkt_opcode>(LDNS_OPCODE_WIRE(data)));
  ldns_pkt_set_rd(reply.get(), LDNS_RD_WIRE(data) != 0);
  ldns_pkt_set_ra(reply.get(), true);
  ldns_pkt_set_rcode(reply.get(), LDNS_RCODE_FORMERR);
  return ToWire(reply.get());
}

udp ProtocolOf(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  // getsockname(2): the family the cell bound it with (127.0.0.53 today).
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 && ss.ss_family == AF_INET6) return udp::v6();
  return udp::v4();
}

}  // namespace

DnsStub::DnsStub(asio::io_context& io, UniqueFd udp_socket, const EgressRules& rules, NameMap& names,
                 EgressAudit& audit)
    : socket_(io), rules_(rules), names_(names), audit_(audit) {
  if (!udp_socket) {
    Say("dns stub: no socket was handed over; the cell has no DNS");
    return;
  }
  udp protocol = ProtocolOf(udp_socket.get());
  boost::system::error_code ec;
  socket_.assign(protocol, udp_socket.get(), ec);
  if (ec) {
    Say(fmt::format("dns stub: adopting fd {}: {}; the cell has no DNS", udp_socket.get(), ec.message()));
    return;  // udp_socket closes it
  }
  udp_socket.release();  // socket_ owns it now
}

void DnsStub::Start() {
  if (!socket_.is_open()) return;
  Receive();
}

void DnsStub::Receive() {
  socket_.async_receive_from(asio::buffer(buffer_), from_, [this](boost::system::error_code ec, std::size_t n) {
    if (ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor || !socket_.is_open()) return;
    if (!ec) {
      try {
        auto reply = Answer(buffer_.data(), n);
        if (!reply.empty()) Send(std::move(reply), from_);
      } catch (const std::exception& e) {
        Say(std::string("dns stub: query dropped: ") + e.what());
      } catch (...) {
        Say("dns stub: query dropped");
      }
    }
    // Any other receive error (ICMP-induced ECONNREFUSED and the like) is
    // about one datagram, not the socket: keep serving.
    Receive();
  });
}

void DnsStub::Send(std::vector<std::uint8_t> reply, const udp::endpoint& to) {
  auto owned = std::make_shared<std::vector<std::uint8_t>>(std::move(reply));
  // A lost reply is a lost UDP datagram: the client retries.
  socket_.async_send_to(asio::buffer(*owned), to, [owned](boost::system::error_code, std::size_t) {});
}

// A query as stub resolvers send it: one question, no answer or authority
// records, at most one additional (the EDNS OPT record). Judged on the header
// before ldns parses anything, because ldns_wire2pkt (1.8.3) leaks what it
// parsed of some packets with several additional records (a second OPT
// record's data overwrites the first's unfreed; found by the dns_stub fuzz
// target in a one-hour run): a cell sending such datagrams in a loop would
// grow mcpcell's memory outside the cell's limits.
bool PlausibleQueryHeader(const std::uint8_t* data, std::size_t size) {
  return size >= LDNS_HEADER_SIZE && LDNS_QDCOUNT(data) == 1 && LDNS_ANCOUNT(data) == 0 && LDNS_NSCOUNT(data) == 0 &&
         LDNS_ARCOUNT(data) <= 1;
}

std::vector<std::uint8_t> DnsStub::Answer(const std::uint8_t* data, std::size_t size) {
  if (!PlausibleQueryHeader(data, size)) return FormErrFromHeader(data, size);
  ldns_pkt* raw = nullptr;
  if (ldns_wire2pkt(&raw, data, size) != LDNS_STATUS_OK) {
    ldns_pkt_free(raw);
    return FormErrFromHeader(data, size);
  }
  Pkt query(raw);
  if (ldns_pkt_qr(query.get())) return {};
  if (ldns_pkt_get_opcode(query.get()) != LDNS_PACKET_QUERY) {
    return ToWire(ReplyTo(query.get(), LDNS_RCODE_NOTIMPL).get());
  }
  if (ldns_pkt_qdcount(query.get()) != 1) return ToWire(ReplyTo(query.get(), LDNS_RCODE_FORMERR).get());
  const ldns_rr* question = ldns_rr_list_rr(ldns_pkt_question(query.get()), 0);
  if (question == nullptr) return ToWire(ReplyTo(query.get(), LDNS_RCODE_FORMERR).get());
  return AnswerQuestion(query.get(), question);
}

std::vector<std::uint8_t> DnsStub::AnswerQuestion(const ldns_pkt* query, const ldns_rr* question) {
  const ldns_rdf* owner = ldns_rr_owner(question);
  ldns_rr_type type = ldns_rr_get_type(question);
  std::string why;
  std::optional<std::string> name = HostOf(owner, &why);
  if (!name) {
    // A name no rule can judge (a NUL or '.' byte in a label, '_', a number
    // in disguise): refused like a denied name, and audited as what it is.
    // ldns's presentation form escapes odd bytes as \DDD.
    EgressAttempt attempt = DnsAttempt(PrintableBytes(TakeString(ldns_rdf2str(owner))), type,
                                       {false, why, "ask for a DNS host name (letters, digits, '-' and dots)"});
    Audit(std::move(attempt));
    return ToWire(ReplyTo(query, LDNS_RCODE_NXDOMAIN).get());
  }
  const std::string& host = *name;

  // The cell's own loopback: never a rule's business, never audited.
  if (IsLocalhost(host)) {
    Pkt reply = ReplyTo(query, LDNS_RCODE_NOERROR);
    if (reply && type == LDNS_RR_TYPE_A) AddAnswer(reply.get(), owner, type, ARecord(INADDR_LOOPBACK));
    // With host loopback ports localhost is IPv4 only, as in the cell's
    // /etc/hosts: the redirect to the host's loopback is IPv4.
    if (reply && type == LDNS_RR_TYPE_AAAA && rules_.host_ports.empty()) {
      AddAnswer(reply.get(), owner, type, AaaaLoopback());
    }
    return ToWire(reply.get());
  }
  if (type == LDNS_RR_TYPE_PTR) {
    if (auto reply = AnswerPtr(query, owner, host)) return std::move(*reply);
  }
  if (ldns_rr_get_class(question) != LDNS_RR_CLASS_IN) {
    // Still a name the cell asked about: a denied one is audited like any other.
    RuleVerdict verdict = MatchName(rules_, host);
    if (!verdict.allowed) Audit(DnsAttempt(host, type, verdict));
    return ToWire(ReplyTo(query, LDNS_RCODE_NOTIMPL).get());
  }

  RuleVerdict verdict = MatchName(rules_, host);
  if (!verdict.allowed) {
    Audit(DnsAttempt(host, type, verdict));
    return ToWire(ReplyTo(query, LDNS_RCODE_NXDOMAIN).get());
  }
  EgressAttempt attempt = DnsAttempt(host, type, verdict);
  // Fail closed: no answer the audit cannot record (egress_audit.h). REFUSED
  // (RFC 1035 4.1.1), not NXDOMAIN: the name may exist, the stub will not say.
  if (audit_.RefuseIfBroken(attempt)) {
    Audit(std::move(attempt));
    return ToWire(ReplyTo(query, LDNS_RCODE_REFUSED).get());
  }
  Pkt reply = ReplyTo(query, LDNS_RCODE_NOERROR);
  // Only A gets an answer: the cell has no IPv6 route (AAAA), and the stub
  // has no MX/TXT/HTTPS/SVCB data to give; NODATA tells the client so
  // without making it try another server.
  if (reply && type == LDNS_RR_TYPE_A) {
    std::optional<std::uint32_t> address = names_.AddressFor(host);
    if (address) {
      AddAnswer(reply.get(), owner, type, ARecord(*address));
      attempt.address = NameMap::Format(*address);
    } else {
      ldns_pkt_set_rcode(reply.get(), LDNS_RCODE_SERVFAIL);
      attempt.error = "all synthetic addresses (198.18.0.0/15) are handed out";
    }
  }
  if (gate_.FreshName(host, DnsAuditGate::Clock::now()) || !attempt.error.empty()) Audit(std::move(attempt));
  // The answer whose record was just lost is withheld, as the relay withholds
  // a call's answer then.
  if (audit_.Broken()) return ToWire(ReplyTo(query, LDNS_RCODE_REFUSED).get());
  return ToWire(reply.get());
}

std::optional<std::vector<std::uint8_t>> DnsStub::AnswerPtr(const ldns_pkt* query, const ldns_rdf* owner,
                                                            const std::string& host) {
  std::optional<std::string> name;
  if (IsReverseV6Loopback(host)) {
    name = "localhost";
  } else if (auto v4 = ReverseV4(host)) {
    if (*v4 == INADDR_LOOPBACK) name = "localhost";
    else if (NameMap::IsSynthetic(*v4)) name = names_.NameOf(*v4);
  }
  if (!name) return std::nullopt;
  Pkt reply = ReplyTo(query, LDNS_RCODE_NOERROR);
  if (reply) AddAnswer(reply.get(), owner, LDNS_RR_TYPE_PTR, Rdf(ldns_dname_new_frm_str((*name + ".").c_str())));
  return ToWire(reply.get());
}

void DnsStub::Audit(EgressAttempt attempt) {
  // The rate limit, the coalescing and the summary of what was held back are
  // EgressAudit's, shared with every other egress event of the cell.
  audit_.Record(attempt);
}

}  // namespace mcpcell
