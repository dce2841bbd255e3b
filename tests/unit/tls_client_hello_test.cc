// The server name a tunnel's first flight asks for (egress/tls_client_hello.h)
// and the gate that holds it (egress/server_name_gate.h): adversary pass
// 2026-11-28, a ClientHello naming another site through a tunnel opened for
// the npm registry.
#include "egress/tls_client_hello.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "egress/server_name_gate.h"
#include "tls_hello_builder.h"

namespace mcpcell {
namespace {

using namespace test_tls;  // NOLINT: the builder's few names read as the RFC's

TEST(ClientHello, ReadsTheServerNameAmongOtherExtensions) {
  std::string hello = Hello(Other(0x000a, "groups") + ServerNameExt({"Registry.Npmjs.org"}) + Other(0x002b, "\x02\x03\x04"));
  ClientHelloRead r = ReadClientHello(hello);
  ASSERT_EQ(r.kind, ClientHelloRead::Kind::kHello) << r.why;
  EXPECT_EQ(r.server_name, "Registry.Npmjs.org");
  // Every shorter prefix waits for more; a longer input (what follows) changes nothing.
  for (std::size_t n = 1; n < hello.size(); ++n) EXPECT_EQ(ReadClientHello(hello.substr(0, n)).kind, ClientHelloRead::Kind::kNeedMore) << n;
  EXPECT_EQ(ReadClientHello(hello + "\x17\x03\x03").server_name, "Registry.Npmjs.org");
}

TEST(ClientHello, NoExtensionsOrNoServerNameIsAHelloNamingNone) {
  EXPECT_EQ(ReadClientHello(Hello("", false)).kind, ClientHelloRead::Kind::kHello);
  EXPECT_FALSE(ReadClientHello(Hello(Other(0x000a, "x"))).server_name);
}

TEST(ClientHello, WhatIsNoTlsHandshakeIsNotTls) {
  for (const char* first : {"GET / HTTP/1.1\r\n", "SSH-2.0-x\r\n", "\x05\x01\x00", "PRI * HTTP/2.0\r\n", "*1\r\n$4\r\nPING\r\n"}) {
    EXPECT_EQ(ReadClientHello(first).kind, ClientHelloRead::Kind::kNotTls) << first;
  }
  EXPECT_EQ(ReadClientHello("").kind, ClientHelloRead::Kind::kNeedMore);
}

TEST(ClientHello, AnythingThatStartsAsAHandshakeButIsNoWholeHelloIsMalformed) {
  std::string good = Hello(ServerNameExt({"a.example"}));
  std::vector<std::string> bad = {
      std::string("\x16\x03\x01\x00\x00", 5),                              // empty record
      std::string("\x16\x03\x01\x40\x01", 5),                              // longer than 2^14
      Hello(ServerNameExt({"a.example", "b.example"})),                    // two host_names
      Hello(ServerNameExt({"a.example"}) + ServerNameExt({"b.example"})),  // two extensions
      Hello(ServerNameExt({"a.example"}, 7)),                               // another name type
      Hello(Be(0, 2) + Vec(Vec("", 2), 2)),                                // an empty list
      Hello(Other(0x000a, "x") + std::string(1, '\0')),                     // a cut extension
  };
  // A handshake that is no ClientHello, and one longer than its record.
  std::string server_hello = good;
  server_hello[5] = '\x02';
  bad.push_back(server_hello);
  std::string split = good;
  split[3] = 0;
  split[4] = 20;  // the record ends inside the ClientHello
  bad.push_back(split.substr(0, 25));
  for (const auto& b : bad) EXPECT_EQ(ReadClientHello(b).kind, ClientHelloRead::Kind::kMalformed) << ::testing::PrintToString(b);
}

// Adversary pass 2: what a TLS server reads as a ClientHello is one here too.
TEST(ClientHello, OtherTlsRecordsFirstSslv2AndEncryptedHellosAreMalformed) {
  std::string other = Hello(ServerNameExt({"b.example"}));
  for (const std::string& prefix : {std::string("\x14\x03\x01\x00\x00", 5), std::string("\x15\x03\x03\x00\x00", 5),
                                    std::string("\x17\x03\x04\x00\x00", 5), std::string("\x18\x03\x00\x00\x00", 5)}) {
    EXPECT_EQ(ReadClientHello(prefix.substr(0, 1)).kind, ClientHelloRead::Kind::kNeedMore);
    EXPECT_EQ(ReadClientHello(prefix + other).kind, ClientHelloRead::Kind::kMalformed) << ::testing::PrintToString(prefix);
  }
  EXPECT_EQ(ReadClientHello(std::string("\x14\x01x", 3)).kind, ClientHelloRead::Kind::kNotTls);  // no TLS version
  EXPECT_EQ(ReadClientHello(std::string("\x16\x24\x29", 3)).kind, ClientHelloRead::Kind::kNotTls);  // not 3.x: no TLS
  // Binary protocols start with any byte: the e2e load test's random tunnels
  // met an "SSLv2 hello" shape (top bit, then 1) in one of ~500. It names no
  // server, so it passes.
  EXPECT_EQ(ReadClientHello(std::string("\x80\x2e\x01\x03\x01", 5)).kind, ClientHelloRead::Kind::kNotTls);
  for (std::uint16_t ech : {std::uint16_t{0xfe0d}, std::uint16_t{0xfe08}, std::uint16_t{0xffce}}) {
    ClientHelloRead r = ReadClientHello(Hello(ServerNameExt({"a.example"}) + Other(ech, "inner")));
    EXPECT_EQ(r.kind, ClientHelloRead::Kind::kMalformed) << ech;
    EXPECT_NE(r.why.find("Encrypted Client Hello"), std::string::npos) << r.why;
  }
}

TEST(ServerNameGate, APostgresSslRequestPassesAndTheHandshakeAfterItIsJudged) {
  const std::string ssl_request("\0\0\0\x08\x04\xd2\x16\x2f", 8);
  ServerNameGate gate("db.example", 443, "a", ssl_request.substr(0, 3));
  EXPECT_EQ(gate.Decide(false), ServerNameGate::Verdict::kNeedMore);  // byte by byte is still the request
  gate.Add(ssl_request.substr(3) + Hello(ServerNameExt({"other.example"})));
  ASSERT_EQ(gate.Decide(false), ServerNameGate::Verdict::kPassSome);
  EXPECT_EQ(gate.TakePassable(), ssl_request);
  EXPECT_EQ(gate.Decide(false), ServerNameGate::Verdict::kRefused);
  ServerNameGate own("db.example", 443, "a", ssl_request);
  ASSERT_EQ(own.Decide(false), ServerNameGate::Verdict::kPassSome);
  own.TakePassable();
  EXPECT_EQ(own.Decide(false), ServerNameGate::Verdict::kNeedMore);
  own.Add(Hello(ServerNameExt({"db.example"})));
  EXPECT_EQ(own.Decide(false), ServerNameGate::Verdict::kOpen);
}

TEST(ServerNameGate, OpensForTheAllowedNameNoNameOrNoTlsAndRefusesAnother) {
  std::string registry = Hello(ServerNameExt({"REGISTRY.example."}));
  ServerNameGate same("registry.example", 443, "advice", registry.substr(0, 10));
  EXPECT_EQ(same.Decide(false), ServerNameGate::Verdict::kNeedMore);
  same.Add(registry.substr(10));
  EXPECT_EQ(same.Decide(false), ServerNameGate::Verdict::kOpen);
  EXPECT_EQ(same.TakeHeld(), registry);  // passed on byte for byte

  EXPECT_EQ(ServerNameGate("registry.example", 443, "a", Hello("", false)).Decide(false), ServerNameGate::Verdict::kOpen);
  EXPECT_EQ(ServerNameGate("registry.example", 443, "a", "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n").Decide(false),
            ServerNameGate::Verdict::kOpen);
  EXPECT_EQ(ServerNameGate("registry.example", 443, "a", "").Decide(true), ServerNameGate::Verdict::kOpen);

  ServerNameGate other("registry.example", 443, "the advice", Hello(ServerNameExt({"worker.attacker.example\x1b[2J"})));
  EXPECT_EQ(other.Decide(false), ServerNameGate::Verdict::kRefused);
  EXPECT_TRUE(other.refused());
  EXPECT_NE(other.refusal().find("worker.attacker.example"), std::string::npos) << other.refusal();
  EXPECT_EQ(other.refusal().find('\x1b'), std::string::npos) << "the name is shown printable";
  EXPECT_EQ(other.how_to_allow(), "the advice");
  EXPECT_EQ(other.TakeHeld(), "") << "nothing of a refused flight is kept to pass on";

  ServerNameGate cut("registry.example", 443, "a", registry.substr(0, 20));
  EXPECT_EQ(cut.Decide(true), ServerNameGate::Verdict::kRefused);  // EOF inside the ClientHello
  // An IP-literal host takes no other name (a ClientHello names no IP).
  EXPECT_EQ(ServerNameGate("127.0.0.1", 443, "a", registry).Decide(false), ServerNameGate::Verdict::kRefused);
  // The host's loopback answers to its three names (https://localhost reaches 127.0.0.1).
  EXPECT_EQ(ServerNameGate("127.0.0.1", 443, "a", Hello(ServerNameExt({"localhost"}))).Decide(false), ServerNameGate::Verdict::kOpen);
  EXPECT_EQ(ServerNameGate("localhost", 443, "a", Hello(ServerNameExt({"evil.localhost"}))).Decide(false),
            ServerNameGate::Verdict::kRefused);
}

}  // namespace
}  // namespace mcpcell
