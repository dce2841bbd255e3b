// The cell's DNS stub, over real UDP sockets on loopback, with queries built
// by ldns and (when installed) by dig: allowed names get synthetic addresses
// that map back, denied names NXDOMAIN and an audit line read back from a real
// audit log, odd packets neither crash nor stop it.

#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12
#include "egress/dns_stub.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <ldns/ldns.h>
#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "core/cell_spec.h"

namespace mcpcell {
namespace {

struct PktFree {
  void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};
using Pkt = std::unique_ptr<ldns_pkt, PktFree>;

NetworkSpec TestNetwork() {
  NetworkSpec n;
  n.mode = NetworkSpec::Mode::kAllowList;
  n.allow_hosts = {"api.example.org", ".example.com"};
  n.allow_ports = {443};
  return n;
}

std::string TempPath(const char* name) {
  std::string p = ::testing::TempDir() + "/" + name + "-" + std::to_string(::getpid());
  ::unlink(p.c_str());
  return p;
}

UniqueFd BoundUdp(std::uint16_t port, std::uint16_t* bound_port) {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return UniqueFd();
  socklen_t len = sizeof sa;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len);
  *bound_port = ntohs(sa.sin_port);
  return fd;
}

/// Sends stderr to /dev/null while alive (EgressAudit says every new denied
/// host there once; a test that denies thousands would drown the output).
class QuietStderr {
 public:
  QuietStderr() : saved_(::dup(2)) {
    std::fflush(stderr);
    UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
    ::dup2(null.get(), 2);
  }
  ~QuietStderr() {
    std::fflush(stderr);
    ::dup2(saved_.get(), 2);
  }
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;

 private:
  UniqueFd saved_;
};

/// A stub on 127.0.0.1:<ephemeral> served by its own io thread, auditing to a
/// real AuditLog on a temp file.
class DnsStubTest : public ::testing::Test {
 protected:
  void SetUp() override { StartStub(0); }

  void StartStub(std::uint16_t port) {
    audit_path_ = TempPath("dns-audit");
    auto log = AuditLog::Open(audit_path_);
    ASSERT_TRUE(log.ok()) << log.error().Message();
    log_.emplace(std::move(*log));
    audit_ = std::make_unique<EgressAudit>(&*log_, "dns-test");
    UniqueFd server = BoundUdp(port, &port_);
    ASSERT_TRUE(server.valid()) << "bind 127.0.0.1:" << port;
    stub_ = std::make_unique<DnsStub>(io_, std::move(server), rules_, names_, *audit_);
    stub_->Start();
    thread_ = std::thread([this] { io_.run(); });
    client_ = Client();
  }

  void TearDown() override {
    StopIo();
    stub_.reset();
    ::unlink(audit_path_.c_str());
  }

  /// After this, the test thread may call stub_->Answer() alone.
  void StopIo() {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  /// A client socket connected to the stub. The receive timeout only keeps a
  /// broken stub from hanging the suite; no test depends on its length.
  UniqueFd Client() const {
    UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    timeval tv{.tv_sec = 20, .tv_usec = 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port_);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    return fd;
  }

  void SendRaw(const std::vector<std::uint8_t>& bytes) const {
    ASSERT_EQ(::send(client_.get(), bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  }

  static std::vector<std::uint8_t> Wire(const ldns_pkt* pkt) {
    std::uint8_t* wire = nullptr;
    std::size_t size = 0;
    EXPECT_EQ(ldns_pkt2wire(&wire, pkt, &size), LDNS_STATUS_OK);
    std::vector<std::uint8_t> out(wire, wire + size);
    std::free(wire);
    return out;
  }

  static Pkt MakeQuery(const std::string& name, ldns_rr_type type, std::uint16_t id) {
    Pkt q(ldns_pkt_query_new(ldns_dname_new_frm_str(name.c_str()), type, LDNS_RR_CLASS_IN, LDNS_RD));
    ldns_pkt_set_id(q.get(), id);
    return q;
  }

  /// The next datagram from the stub, parsed; null if none came or ldns cannot parse it.
  Pkt Receive() const {
    std::vector<std::uint8_t> buf(65535);
    ssize_t n = ::recv(client_.get(), buf.data(), buf.size(), 0);
    if (n <= 0) return nullptr;
    ldns_pkt* reply = nullptr;
    if (ldns_wire2pkt(&reply, buf.data(), static_cast<std::size_t>(n)) != LDNS_STATUS_OK) return nullptr;
    return Pkt(reply);
  }

  /// Sends one query and returns the reply carrying its id.
  Pkt Ask(const std::string& name, ldns_rr_type type) {
    std::uint16_t id = next_id_++;
    Pkt q = MakeQuery(name, type, id);
    SendRaw(Wire(q.get()));
    Pkt reply = Receive();
    if (reply) {
      EXPECT_EQ(ldns_pkt_id(reply.get()), id);
    }
    return reply;
  }

  /// The single A record of `reply`, host byte order.
  static std::optional<std::uint32_t> OnlyA(const ldns_pkt* reply) {
    if (ldns_pkt_ancount(reply) != 1) return std::nullopt;
    const ldns_rr* rr = ldns_rr_list_rr(ldns_pkt_answer(reply), 0);
    if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_A) return std::nullopt;
    EXPECT_EQ(ldns_rr_ttl(rr), 5u);
    const ldns_rdf* rdf = ldns_rr_rdf(rr, 0);
    std::uint32_t net = 0;
    std::memcpy(&net, ldns_rdf_data(rdf), sizeof net);
    return ntohl(net);
  }

  std::vector<nlohmann::json> EgressEvents() const {
    std::ifstream in(audit_path_);
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      if (j.value("event", "") == "egress") out.push_back(j);
    }
    return out;
  }

  /// The egress_summary event, if one was written.
  std::optional<nlohmann::json> Summary() const {
    std::ifstream in(audit_path_);
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      if (j.value("event", "") == "egress_summary") return j;
    }
    return std::nullopt;
  }

  std::vector<nlohmann::json> Denials() const {
    std::vector<nlohmann::json> out;
    for (auto& e : EgressEvents()) {
      if (!e["allowed"].get<bool>()) out.push_back(e);
    }
    return out;
  }

  EgressRules rules_ = EgressRules::FromSpec(TestNetwork());
  NameMap names_;
  boost::asio::io_context io_;
  std::string audit_path_;
  std::optional<AuditLog> log_;
  std::unique_ptr<EgressAudit> audit_;
  std::unique_ptr<DnsStub> stub_;
  std::thread thread_;
  std::uint16_t port_ = 0;
  UniqueFd client_;
  std::uint16_t next_id_ = 0x4100;
};

TEST_F(DnsStubTest, AllowedNameGetsASyntheticAddressThatMapsBack) {
  Pkt reply = Ask("api.example.org.", LDNS_RR_TYPE_A);
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_NOERROR);
  EXPECT_TRUE(ldns_pkt_qr(reply.get()));
  EXPECT_EQ(ldns_pkt_qdcount(reply.get()), 1);
  auto address = OnlyA(reply.get());
  ASSERT_TRUE(address);
  EXPECT_TRUE(NameMap::IsSynthetic(*address)) << NameMap::Format(*address);
  EXPECT_EQ(NameMap::Format(*address).rfind("198.1", 0), 0u) << NameMap::Format(*address);
  EXPECT_EQ(names_.NameOf(*address), "api.example.org");

  auto events = EgressEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["via"], "dns");
  EXPECT_EQ(events[0]["host"], "api.example.org");
  EXPECT_TRUE(events[0]["allowed"].get<bool>());
  EXPECT_EQ(events[0]["dns_type"], "A");
  EXPECT_EQ(events[0]["address"], NameMap::Format(*address));
  EXPECT_EQ(events[0]["rule"], "allow_host \"api.example.org\"");
}

TEST_F(DnsStubTest, SameNameTwiceGetsTheSameAddressAndOtherNamesAnother) {
  auto first = OnlyA(Ask("api.example.org.", LDNS_RR_TYPE_A).get());
  auto again = OnlyA(Ask("API.Example.ORG.", LDNS_RR_TYPE_A).get());  // case does not make a new name
  auto other = OnlyA(Ask("www.example.com.", LDNS_RR_TYPE_A).get());
  ASSERT_TRUE(first && again && other);
  EXPECT_EQ(*first, *again);
  EXPECT_NE(*first, *other);
  EXPECT_EQ(names_.NameOf(*other), "www.example.com");
}

TEST_F(DnsStubTest, AnswerKeepsTheQuestionsCase) {
  // Resolvers using 0x20 randomisation (and glibc) compare the echoed name.
  Pkt reply = Ask("ApI.eXample.org.", LDNS_RR_TYPE_A);
  ASSERT_TRUE(reply);
  const ldns_rr* rr = ldns_rr_list_rr(ldns_pkt_answer(reply.get()), 0);
  ASSERT_NE(rr, nullptr);
  char* owner = ldns_rdf2str(ldns_rr_owner(rr));
  EXPECT_STREQ(owner, "ApI.eXample.org.");
  std::free(owner);
}

/// A query for `labels` built byte by byte (ldns would escape or refuse odd
/// labels): header, one question of `labels` as given, type A, class IN.
std::vector<std::uint8_t> RawQuery(std::uint16_t id, const std::vector<std::string>& labels) {
  std::vector<std::uint8_t> q{static_cast<std::uint8_t>(id >> 8), static_cast<std::uint8_t>(id & 0xff), 0x01, 0x00,
                              0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  for (const auto& l : labels) {
    q.push_back(static_cast<std::uint8_t>(l.size()));
    q.insert(q.end(), l.begin(), l.end());
  }
  q.insert(q.end(), {0x00, 0x00, 0x01, 0x00, 0x01});
  return q;
}

// Issue 10 item 1 for DNS: a question whose labels carry a NUL, a '.' byte
// (which would join two labels into one suffix), '_' or a number libc reads
// as an address never reaches the rules: NXDOMAIN, audited with the reason.
TEST_F(DnsStubTest, QuestionsThatAreNotDnsNamesAreRefusedAndAuditedWithTheReason) {
  using namespace std::string_literals;
  StopIo();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"evil\0x"s, "example", "com"}, "NUL byte at offset 4"},
      {{"evil.test", "example", "com"}, "'.' byte inside the label at offset 4"},
      {{"x y", "example", "com"}, "space at offset 1"},
      {{"_srv", "example", "com"}, "'_' at offset 0"},
      {{"x\xc3\xa9", "example", "com"}, "non-ASCII byte 0xc3"},
      {{"2130706433"}, "127.0.0.1"},
  };
  std::uint16_t id = 0x5100;
  for (const auto& [labels, reason] : cases) {
    auto q = RawQuery(id, labels);
    auto reply = stub_->Answer(q.data(), q.size());
    ldns_pkt* parsed = nullptr;
    ASSERT_EQ(ldns_wire2pkt(&parsed, reply.data(), reply.size()), LDNS_STATUS_OK) << reason;
    Pkt owned(parsed);
    EXPECT_EQ(ldns_pkt_id(parsed), id) << reason;
    EXPECT_EQ(ldns_pkt_get_rcode(parsed), LDNS_RCODE_NXDOMAIN) << reason;
    EXPECT_EQ(ldns_pkt_ancount(parsed), 0) << reason;
    ++id;
  }
  auto denials = Denials();
  ASSERT_EQ(denials.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::string rule = denials[i]["rule"];
    EXPECT_EQ(rule.rfind("not a valid DNS name: ", 0), 0u) << rule;
    EXPECT_NE(rule.find(cases[i].second), std::string::npos) << rule;
    std::string host = denials[i]["host"];
    for (char c : host) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "raw byte in the audited host: " << host;
  }
  EXPECT_TRUE(names_.NameOf(NameMap::kBase + 1) == std::nullopt) << "a synthetic address was handed out";
}

TEST_F(DnsStubTest, DeniedNameIsNxdomainAndAudited) {
  Pkt reply = Ask("evil.example.net.", LDNS_RR_TYPE_A);
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_NXDOMAIN);
  EXPECT_EQ(ldns_pkt_ancount(reply.get()), 0);

  auto denials = Denials();
  ASSERT_EQ(denials.size(), 1u);
  const auto& e = denials[0];
  EXPECT_EQ(e["event"], "egress");
  EXPECT_EQ(e["server"], "dns-test");
  EXPECT_EQ(e["via"], "dns");
  EXPECT_EQ(e["host"], "evil.example.net");
  EXPECT_EQ(e["port"], 0);
  EXPECT_EQ(e["dns_type"], "A");
  EXPECT_EQ(e["address"], "");
  EXPECT_EQ(e["rule"], "no allow_host entry matches \"evil.example.net\"");
  EXPECT_NE(e["how_to_allow"].get<std::string>().find("allow_host"), std::string::npos) << e.dump();
  EXPECT_TRUE(e.contains("ts"));
}

// Fail closed (egress_audit.h, docs/AUDIT.md): once an audit write fails,
// the lookup whose record was lost gets REFUSED instead of its answer, and so
// does every later one, still after the log is back, until mcpcell starts
// again. The refusals are recorded once the log can be written again.
TEST_F(DnsStubTest, AfterAFailedAuditWriteLookupsAreRefusedEvenOnceTheLogIsBack) {
  QuietStderr quiet;
  Pkt first = Ask("api.example.org.", LDNS_RR_TYPE_A);
  ASSERT_TRUE(first);
  EXPECT_EQ(ldns_pkt_get_rcode(first.get()), LDNS_RCODE_NOERROR);
  std::string moved = audit_path_ + ".moved";
  ASSERT_EQ(::rename(audit_path_.c_str(), moved.c_str()), 0);
  Pkt lost = Ask("a.example.com.", LDNS_RR_TYPE_A);
  ASSERT_TRUE(lost);
  EXPECT_EQ(ldns_pkt_get_rcode(lost.get()), LDNS_RCODE_REFUSED) << "an answer whose record was lost was sent";
  EXPECT_EQ(ldns_pkt_ancount(lost.get()), 0);
  ASSERT_EQ(::rename(moved.c_str(), audit_path_.c_str()), 0);
  for (const char* name : {"api.example.org.", "b.example.com.", "c.example.com."}) {
    Pkt reply = Ask(name, LDNS_RR_TYPE_A);
    ASSERT_TRUE(reply);
    EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_REFUSED) << name;
    EXPECT_EQ(ldns_pkt_ancount(reply.get()), 0) << name;
  }
  auto events = EgressEvents();
  ASSERT_EQ(events.size(), 4u) << "api.example.org, then the three refusals";
  for (std::size_t i = 1; i < events.size(); ++i) {
    EXPECT_FALSE(events[i]["allowed"].get<bool>());
    std::string rule = events[i]["rule"];
    EXPECT_EQ(rule.rfind("the audit log cannot be written (", 0), 0u) << rule;
    EXPECT_NE(rule.find(audit_path_), std::string::npos) << rule;
  }
}

// A container cell without network (src/cell/docker/dns_report.h): the
// stub answers relayed datagrams without a socket of its own; nothing
// resolves, whatever the type, and localhost stays the cell's.
TEST_F(DnsStubTest, AnswerOnlyStubOfACellWithoutNetworkResolvesNothing) {
  QuietStderr quiet;
  EgressRules rules;
  rules.no_network = true;
  NameMap names;
  EgressAudit audit(nullptr, "none-test");
  boost::asio::io_context io;
  DnsStub stub(io, rules, names, audit);
  for (ldns_rr_type type : {LDNS_RR_TYPE_A, LDNS_RR_TYPE_AAAA, LDNS_RR_TYPE_TXT, LDNS_RR_TYPE_MX, LDNS_RR_TYPE_CNAME,
                            LDNS_RR_TYPE_NULL, LDNS_RR_TYPE_ANY}) {
    auto wire = Wire(MakeQuery("data-to-smuggle.example.com.", type, 7).get());
    auto reply_wire = stub.Answer(wire.data(), wire.size());
    ldns_pkt* raw = nullptr;
    ASSERT_EQ(ldns_wire2pkt(&raw, reply_wire.data(), reply_wire.size()), LDNS_STATUS_OK);
    Pkt reply(raw);
    EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_NXDOMAIN) << type;
    EXPECT_EQ(ldns_pkt_ancount(reply.get()), 0) << type;
    EXPECT_EQ(ldns_pkt_nscount(reply.get()), 0) << type;
  }
  auto wire = Wire(MakeQuery("localhost.", LDNS_RR_TYPE_A, 8).get());
  auto reply_wire = stub.Answer(wire.data(), wire.size());
  ldns_pkt* raw = nullptr;
  ASSERT_EQ(ldns_wire2pkt(&raw, reply_wire.data(), reply_wire.size()), LDNS_STATUS_OK);
  Pkt reply(raw);
  EXPECT_EQ(ldns_pkt_ancount(reply.get()), 1);
}

TEST_F(DnsStubTest, EveryDeniedQueryIsAuditedTheSameQueryAgainIsCounted) {
  Ask("evil.example.net.", LDNS_RR_TYPE_A);
  Ask("evil.example.net.", LDNS_RR_TYPE_AAAA);
  Ask("evil.example.net.", LDNS_RR_TYPE_TXT);
  Ask("evil.example.net.", LDNS_RR_TYPE_A);  // the same denial again: coalesced (EgressAudit)
  auto denials = Denials();
  ASSERT_EQ(denials.size(), 3u);
  EXPECT_EQ(denials[1]["dns_type"], "AAAA");
  EXPECT_EQ(denials[2]["dns_type"], "TXT");
  StopIo();
  stub_.reset();
  audit_.reset();  // writes the summary
  auto summary = Summary();
  ASSERT_TRUE(summary) << "no egress_summary event";
  EXPECT_EQ((*summary)["repeats_total"], 1);
  ASSERT_EQ((*summary)["repeats"].size(), 1u);
  EXPECT_EQ((*summary)["repeats"][0]["host"], "evil.example.net");
  EXPECT_EQ((*summary)["repeats"][0]["dns_type"], "A");
  EXPECT_EQ((*summary)["repeats"][0]["count"], 1);
}

TEST_F(DnsStubTest, AllowedAaaaHttpsAndTxtAreNodata) {
  for (ldns_rr_type type : {LDNS_RR_TYPE_AAAA, LDNS_RR_TYPE_HTTPS, LDNS_RR_TYPE_SVCB, LDNS_RR_TYPE_TXT,
                            LDNS_RR_TYPE_MX}) {
    Pkt reply = Ask("api.example.org.", type);
    ASSERT_TRUE(reply) << type;
    EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_NOERROR) << type;
    EXPECT_EQ(ldns_pkt_ancount(reply.get()), 0) << type;
  }
  EXPECT_TRUE(Denials().empty());
}

TEST_F(DnsStubTest, DomainRuleAllowsTheDomainAndNamesBelowButNotLookalikes) {
  EXPECT_TRUE(OnlyA(Ask("a.b.example.com.", LDNS_RR_TYPE_A).get()));
  EXPECT_TRUE(OnlyA(Ask("example.com.", LDNS_RR_TYPE_A).get()));
  Pkt lookalike = Ask("notexample.com.", LDNS_RR_TYPE_A);
  ASSERT_TRUE(lookalike);
  EXPECT_EQ(ldns_pkt_get_rcode(lookalike.get()), LDNS_RCODE_NXDOMAIN);
  Pkt suffix = Ask("example.com.evil.net.", LDNS_RR_TYPE_A);
  ASSERT_TRUE(suffix);
  EXPECT_EQ(ldns_pkt_get_rcode(suffix.get()), LDNS_RCODE_NXDOMAIN);
  EXPECT_EQ(Denials().size(), 2u);
}

TEST_F(DnsStubTest, LocalhostIsAnsweredLocallyWithoutRulesOrAudit) {
  auto a = OnlyA(Ask("localhost.", LDNS_RR_TYPE_A).get());
  ASSERT_TRUE(a);
  EXPECT_EQ(*a, INADDR_LOOPBACK);
  auto below = OnlyA(Ask("db.localhost.", LDNS_RR_TYPE_A).get());
  ASSERT_TRUE(below);
  EXPECT_EQ(*below, INADDR_LOOPBACK);

  Pkt aaaa = Ask("localhost.", LDNS_RR_TYPE_AAAA);
  ASSERT_TRUE(aaaa);
  ASSERT_EQ(ldns_pkt_ancount(aaaa.get()), 1);
  const ldns_rdf* rdf = ldns_rr_rdf(ldns_rr_list_rr(ldns_pkt_answer(aaaa.get()), 0), 0);
  in6_addr loop = IN6ADDR_LOOPBACK_INIT;
  ASSERT_EQ(ldns_rdf_size(rdf), sizeof loop);
  EXPECT_EQ(std::memcmp(ldns_rdf_data(rdf), &loop, sizeof loop), 0);
  EXPECT_TRUE(EgressEvents().empty());
}

TEST_F(DnsStubTest, PtrForASyntheticAddressGivesTheName) {
  auto address = OnlyA(Ask("api.example.org.", LDNS_RR_TYPE_A).get());
  ASSERT_TRUE(address);
  std::uint32_t a = *address;
  std::string reverse = std::to_string(a & 0xff) + "." + std::to_string((a >> 8) & 0xff) + "." +
                        std::to_string((a >> 16) & 0xff) + "." + std::to_string(a >> 24) + ".in-addr.arpa.";
  Pkt reply = Ask(reverse, LDNS_RR_TYPE_PTR);
  ASSERT_TRUE(reply);
  ASSERT_EQ(ldns_pkt_ancount(reply.get()), 1);
  char* name = ldns_rdf2str(ldns_rr_rdf(ldns_rr_list_rr(ldns_pkt_answer(reply.get()), 0), 0));
  EXPECT_STREQ(name, "api.example.org.");
  std::free(name);

  // An address nobody handed out is an ordinary (denied, audited) name.
  Pkt unknown = Ask("9.9.9.9.in-addr.arpa.", LDNS_RR_TYPE_PTR);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(ldns_pkt_get_rcode(unknown.get()), LDNS_RCODE_NXDOMAIN);
  EXPECT_EQ(Denials().size(), 1u);
}

TEST_F(DnsStubTest, GarbageDoesNotStopTheStub) {
  SendRaw({0x01, 0x02, 0x03});  // no header: dropped
  std::vector<std::uint8_t> junk(300);
  std::mt19937 rng(7);
  for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
  junk[2] |= 0x80;  // a "response": never answered
  SendRaw(junk);
  SendRaw({});  // an empty datagram

  // A header promising 5 questions and carrying none: ldns refuses it; the
  // header is there, so FORMERR with the same id.
  SendRaw({0xbe, 0xef, 0x01, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00});
  Pkt formerr = Receive();
  ASSERT_TRUE(formerr);
  EXPECT_EQ(ldns_pkt_id(formerr.get()), 0xbeef);
  EXPECT_EQ(ldns_pkt_get_rcode(formerr.get()), LDNS_RCODE_FORMERR);

  // And it still answers.
  EXPECT_TRUE(OnlyA(Ask("api.example.org.", LDNS_RR_TYPE_A).get()));
}

// Found by the dns_stub fuzz target (a one-hour run): this packet (one
// question, seven additional records) made ldns_wire2pkt leak 73 bytes per
// datagram. It is refused from its header now, before ldns parses it; the
// ASan build's leak check fails this test if ldns sees it again.
TEST_F(DnsStubTest, ExtraRecordsAreFormerrBeforeParsing) {
  SendRaw({0x00, 0x07, 0x01, 0xf6, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x01, 0xf6, 0x00, 0x01,
           0x00, 0x00, 0x00, 0x00, 0x00, 0xfa, 0x01, 0x72, 0x04, 0x61, 0xff, 0x03, 0x00, 0x00, 0x00, 0x00,
           0xfa, 0x01, 0x72, 0x04, 0x61, 0xff, 0x03, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00});
  Pkt reply = Receive();
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_id(reply.get()), 0x0007);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_FORMERR);
  // A query with an answer record, or with two additional records: the same.
  Pkt answered = MakeQuery("api.example.org.", LDNS_RR_TYPE_A, 0x2222);
  ldns_rr* rr = nullptr;
  ASSERT_EQ(ldns_rr_new_frm_str(&rr, "api.example.org. 60 IN A 192.0.2.1", 0, nullptr, nullptr), LDNS_STATUS_OK);
  ldns_pkt_push_rr(answered.get(), LDNS_SECTION_ANSWER, rr);
  SendRaw(Wire(answered.get()));
  reply = Receive();
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_id(reply.get()), 0x2222);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_FORMERR);
  // And a plain query still gets its answer.
  EXPECT_TRUE(OnlyA(Ask("api.example.org.", LDNS_RR_TYPE_A).get()));
}

TEST_F(DnsStubTest, TwoQuestionsAreFormerrAndOtherOpcodesNotimp) {
  Pkt two = MakeQuery("api.example.org.", LDNS_RR_TYPE_A, 0x1234);
  ldns_rr* second = ldns_rr_new();
  ldns_rr_set_owner(second, ldns_dname_new_frm_str("evil.example.net."));
  ldns_rr_set_type(second, LDNS_RR_TYPE_A);
  ldns_rr_set_class(second, LDNS_RR_CLASS_IN);
  ldns_rr_set_question(second, true);
  ldns_pkt_push_rr(two.get(), LDNS_SECTION_QUESTION, second);
  ASSERT_EQ(ldns_pkt_qdcount(two.get()), 2);
  SendRaw(Wire(two.get()));
  Pkt reply = Receive();
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_id(reply.get()), 0x1234);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_FORMERR);

  Pkt notify = MakeQuery("api.example.org.", LDNS_RR_TYPE_SOA, 0x1235);
  ldns_pkt_set_opcode(notify.get(), LDNS_PACKET_NOTIFY);
  SendRaw(Wire(notify.get()));
  reply = Receive();
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_id(reply.get()), 0x1235);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_NOTIMPL);
}

TEST_F(DnsStubTest, ExfiltrationThroughLongRandomLabelsIsAuditedNameByName) {
  std::mt19937 rng(42);
  const char* hex = "0123456789abcdef";
  std::set<std::string> sent;
  for (int i = 0; i < 200; ++i) {
    std::string name;
    for (int label = 0; label < 3; ++label) {
      for (int c = 0; c < 63; ++c) name += hex[rng() % 16];  // 63: the longest label DNS allows
      name += '.';
    }
    name += "exfil.attacker.net";
    Pkt reply = Ask(name + ".", LDNS_RR_TYPE_TXT);
    ASSERT_TRUE(reply) << i;
    EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_NXDOMAIN);
    sent.insert(name);
  }
  auto denials = Denials();
  ASSERT_EQ(denials.size(), 200u);
  std::set<std::string> logged;
  for (const auto& e : denials) {
    logged.insert(e["host"].get<std::string>());
    EXPECT_FALSE(e.contains("error")) << "nothing was held back: " << e.dump();
  }
  EXPECT_EQ(logged, sent);
}

TEST_F(DnsStubTest, MutatedQueriesGetAParseableReplyWithTheirIdOrNone) {
  // Every byte of a real query flipped at random, 20,000 times, straight into
  // Answer(): no crash (run it under MCPCELL_SANITIZE for memory errors), and
  // whatever comes back is a DNS reply to that query.
  Pkt base = MakeQuery("www.example.com.", LDNS_RR_TYPE_A, 0x7777);
  ldns_pkt_set_edns_udp_size(base.get(), 4096);
  std::vector<std::uint8_t> wire = Wire(base.get());
  std::mt19937 rng(1);
  QuietStderr quiet;  // denied random names would each print a sentence
  int replies = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::uint8_t> q = wire;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) q[rng() % q.size()] = static_cast<std::uint8_t>(rng());
    if (rng() % 8 == 0) q.resize(rng() % q.size());
    std::vector<std::uint8_t> reply = stub_->Answer(q.data(), q.size());
    if (reply.empty()) continue;
    ++replies;
    ldns_pkt* parsed = nullptr;
    ASSERT_EQ(ldns_wire2pkt(&parsed, reply.data(), reply.size()), LDNS_STATUS_OK) << i;
    Pkt owned(parsed);
    ASSERT_TRUE(ldns_pkt_qr(parsed)) << i;
    ASSERT_GE(q.size(), 2u);
    EXPECT_EQ(ldns_pkt_id(parsed), (q[0] << 8) | q[1]) << i;
  }
  EXPECT_GT(replies, 1000);  // most mutations still parse: the loop did exercise answers
}

TEST_F(DnsStubTest, AFloodIsRateLimitedButEveryQueryIsAccountedFor) {
  // 3,000 denied names as fast as the stub can answer: the audit log gets at
  // most the burst plus the refill, the lines that do get logged say how
  // many were held back before them, and the summary written when the audit
  // ends gives the totals. Lines + held back = sent, however fast this runs.
  StopIo();
  constexpr int kQueries = 3000;
  {
    QuietStderr quiet;
    for (int i = 0; i < kQueries; ++i) {
      std::vector<std::uint8_t> q = Wire(MakeQuery("n" + std::to_string(i) + ".flood.net.", LDNS_RR_TYPE_A, 1).get());
      ASSERT_FALSE(stub_->Answer(q.data(), q.size()).empty());
    }
    stub_.reset();
    audit_.reset();
  }
  std::uint64_t logged = 0;
  std::uint64_t held_on_lines = 0;
  for (const auto& e : Denials()) {
    ++logged;
    held_on_lines += e.value("held_back", 0ull);
  }
  auto summary = Summary();
  ASSERT_TRUE(summary) << "no egress_summary event";
  std::uint64_t held_total = (*summary)["held_back_total"];
  EXPECT_EQ((*summary)["lines"], logged);
  EXPECT_EQ(held_on_lines + (*summary)["held_back"].get<std::uint64_t>(), held_total);
  EXPECT_EQ(logged + held_total + (*summary)["repeats_total"].get<std::uint64_t>(),
            static_cast<std::uint64_t>(kQueries)) << logged << " logged";
  EXPECT_GE(logged, 1000u);  // the burst always passes
  EXPECT_LT(logged, static_cast<std::uint64_t>(kQueries));
}

TEST(DnsStubDig, DigGetsTheSameAnswers) {
  if (::system("command -v dig >/dev/null 2>&1") != 0) GTEST_SKIP() << "dig not installed (apt-get install dnsutils)";
  EgressRules rules = EgressRules::FromSpec(TestNetwork());
  NameMap names;
  EgressAudit audit(nullptr, "dns-test");
  boost::asio::io_context io;
  std::uint16_t port = 0;
  DnsStub stub(io, BoundUdp(0, &port), rules, names, audit);
  stub.Start();
  std::thread t([&] { io.run(); });
  auto dig = [&](const std::string& args) {
    std::string cmd = "dig @127.0.0.1 -p " + std::to_string(port) + " +tries=1 +time=10 " + args + " 2>&1";
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char buf[4096];
      while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
      ::pclose(p);
    }
    return out;
  };
  std::string allowed = dig("+short api.example.org A");
  std::string denied = dig("evil.example.net A");
  std::string aaaa = dig("api.example.org AAAA");
  io.stop();
  t.join();
  auto address = names.AddressFor("api.example.org");
  ASSERT_TRUE(address);
  EXPECT_EQ(allowed, NameMap::Format(*address) + "\n");
  EXPECT_NE(denied.find("status: NXDOMAIN"), std::string::npos) << denied;
  EXPECT_NE(aaaa.find("status: NOERROR"), std::string::npos) << aaaa;
  EXPECT_NE(aaaa.find("ANSWER: 0"), std::string::npos) << aaaa;
}

// ---- which queries reach the audit log (no clock: time is a parameter) ----

TEST(DnsAuditGate, EventsPassUpToTheBurstThenAreCountedAndReported) {
  DnsAuditGate gate(DnsAuditGate::Limits{.burst = 3, .per_second = 1, .allowed_window = std::chrono::seconds(5)});
  auto t0 = DnsAuditGate::Clock::time_point{} + std::chrono::hours(1);
  std::uint64_t held = 99;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(gate.Admit(t0, &held));
    EXPECT_EQ(held, 0u);
  }
  EXPECT_FALSE(gate.Admit(t0, &held));
  EXPECT_FALSE(gate.Admit(t0, &held));
  // One second later one token is back; the event that passes reports the two held back.
  ASSERT_TRUE(gate.Admit(t0 + std::chrono::seconds(1), &held));
  EXPECT_EQ(held, 2u);
  EXPECT_FALSE(gate.Admit(t0 + std::chrono::seconds(1), &held));
  EXPECT_EQ(gate.TakeHeldBack(), 1u);
  EXPECT_EQ(gate.TakeHeldBack(), 0u);
  // The bucket never holds more than the burst, however long the quiet.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(gate.Admit(t0 + std::chrono::hours(5), &held));
  EXPECT_FALSE(gate.Admit(t0 + std::chrono::hours(5), &held));
}

TEST(DnsAuditGate, AllowedNamesOncePerWindow) {
  DnsAuditGate gate;
  auto t0 = DnsAuditGate::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_TRUE(gate.FreshName("a.example.com", t0));
  EXPECT_FALSE(gate.FreshName("a.example.com", t0 + std::chrono::seconds(4)));
  EXPECT_TRUE(gate.FreshName("b.example.com", t0 + std::chrono::seconds(4)));
  EXPECT_TRUE(gate.FreshName("a.example.com", t0 + std::chrono::seconds(5)));
  EXPECT_FALSE(gate.FreshName("a.example.com", t0 + std::chrono::seconds(9)));
}

TEST(DnsAuditGate, ForgetsOldNamesOnceManyWereSeen) {
  DnsAuditGate gate;
  auto t0 = DnsAuditGate::Clock::time_point{} + std::chrono::hours(1);
  for (int i = 0; i < 5000; ++i) EXPECT_TRUE(gate.FreshName("n" + std::to_string(i), t0));
  // Pruning old names must not forget the window of recent ones.
  EXPECT_FALSE(gate.FreshName("n1", t0 + std::chrono::seconds(1)));
  EXPECT_TRUE(gate.FreshName("n1", t0 + std::chrono::seconds(10)));
}

/// For checking by hand with dig: serves on 127.0.0.1:$DNS_STUB_PORT (default
/// 5353) until killed. Run with --gtest_also_run_disabled_tests
/// --gtest_filter=DnsStubManual.*
TEST(DnsStubManual, DISABLED_ServeForDig) {
  const char* env = std::getenv("DNS_STUB_PORT");
  auto wanted = static_cast<std::uint16_t>(env ? std::atoi(env) : 5353);
  EgressRules rules = EgressRules::FromSpec(TestNetwork());
  NameMap names;
  EgressAudit audit(nullptr, "dns-manual");
  boost::asio::io_context io;
  std::uint16_t port = 0;
  UniqueFd fd = BoundUdp(wanted, &port);
  ASSERT_TRUE(fd.valid());
  DnsStub stub(io, std::move(fd), rules, names, audit);
  stub.Start();
  std::fprintf(stderr, "serving on 127.0.0.1:%u; allow_host api.example.org .example.com\n", port);
  io.run();
}

}  // namespace
}  // namespace mcpcell
