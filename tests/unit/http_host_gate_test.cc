// Plain HTTP inside a tunnel (egress/http_host_gate.h, through the tunnel's
// ServerNameGate): every request of the connection names the host the tunnel
// was allowed for, or the connection is cut before the request leaves.
// Adversary pass 3 (2026-11-28): a Host header inside a tunnel opened for the
// npm registry reached another virtual host of the registry's server.
#include "egress/http_host_gate.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "egress/server_name_gate.h"

namespace mcpcell {
namespace {

using V = ServerNameGate::Verdict;

struct Flight {
  std::string passed;  ///< what the gate let through, in order
  V last = V::kNeedMore;
  std::string refusal;
};

// Feeds `pieces` as reads from the cell; `eof` after the last. Once the gate
// opens, the rest passes unjudged (as ByteFlow drops the gate).
Flight Drive(const std::vector<std::string>& pieces, bool eof = false, std::string host = "registry.example",
          std::uint16_t port = 80) {
  ServerNameGate gate(std::move(host), port, "advice", "");
  Flight r;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (r.last == V::kOpen) {
      r.passed += pieces[i];
      continue;
    }
    gate.Add(pieces[i]);
    bool at_eof = eof && i + 1 == pieces.size();
    for (;;) {
      r.last = gate.Decide(at_eof);
      if (r.last == V::kPassSome) {
        std::string part = gate.TakePassable();
        EXPECT_FALSE(part.empty()) << "a pass with no bytes would spin the tunnel";
        r.passed += part;
        continue;
      }
      if (r.last == V::kOpen) r.passed += gate.TakeHeld();
      if (r.last == V::kRefused) {
        r.refusal = gate.refusal();
        return r;
      }
      break;
    }
  }
  return r;
}

// Every byte on its own read: the verdicts must not depend on how TCP cut it.
std::vector<std::string> Bytes(const std::string& s) {
  std::vector<std::string> out;
  for (char c : s) out.emplace_back(1, c);
  return out;
}

HttpStart Classify(std::string_view bytes, bool eof) {
  HttpStartReader reader;
  return reader.Read(bytes, eof);
}

const std::string kOwn = "GET /pkg HTTP/1.1\r\nHost: registry.example\r\nUser-Agent: npm\r\n\r\n";

TEST(HttpHostGate, EveryRequestOfAKeepAliveConnectionForTheHostPassesByteForByte) {
  std::string two = kOwn + "GET /other HTTP/1.1\r\nHost: REGISTRY.example:80\r\n\r\n";
  Flight r = Drive({two});
  EXPECT_EQ(r.last, V::kNeedMore) << r.refusal;  // the gate stays for the next request
  EXPECT_EQ(r.passed, two);
  Flight slow = Drive(Bytes(two));
  EXPECT_EQ(slow.passed, two) << slow.refusal;
}

TEST(HttpHostGate, ASecondRequestForAnotherHostIsCutBeforeItLeaves) {
  std::string evil = "GET /secret HTTP/1.1\r\nHost: intranet.example\r\n\r\n";
  for (const Flight& r : {Drive({kOwn + evil}), Drive({kOwn, evil}), Drive(Bytes(kOwn + evil))}) {
    EXPECT_EQ(r.last, V::kRefused);
    EXPECT_EQ(r.passed.find("intranet"), std::string::npos) << "the other host's request left";
    EXPECT_NE(r.refusal.find("intranet.example"), std::string::npos) << r.refusal;
  }
  Flight escape = Drive({kOwn + "GET / HTTP/1.1\r\nHost: intranet.example\x1b[2J\r\n\r\n"});
  EXPECT_EQ(escape.last, V::kRefused);
  EXPECT_EQ(escape.refusal.find('\x1b'), std::string::npos) << "nothing of the request is echoed raw";
  // The request that was judged before it went on, not the one after.
  EXPECT_EQ(Drive({kOwn, evil}).passed, kOwn);
}

TEST(HttpHostGate, TheHostIsSpelledAsTheTunnelsExceptForCase) {
  // A server that routes on the exact string would serve its default site
  // for another spelling (adversary pass 4).
  for (const char* host : {"registry.example.", "registry.example:080", "registry.example:"}) {
    EXPECT_EQ(Drive({std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n"}).last, V::kRefused) << host;
  }
  EXPECT_EQ(Drive({"GET / HTTP/1.1\r\nHost: Registry.Example\r\n\r\n"}).last, V::kNeedMore);
}

TEST(HttpHostGate, TheHostsPortMustBeTheTunnelsAndAnAbsoluteUrlIsJudgedToo) {
  EXPECT_EQ(Drive({"GET / HTTP/1.1\r\nHost: registry.example:8080\r\n\r\n"}).last, V::kRefused);
  EXPECT_EQ(Drive({"GET / HTTP/1.1\r\nHost: registry.example:8080\r\n\r\n"}, false, "registry.example", 8080).last,
            V::kNeedMore);
  // RFC 9112 section 3.2.2: a server takes an absolute URL's authority over the Host header.
  EXPECT_EQ(Drive({"GET http://other.example/ HTTP/1.1\r\nHost: registry.example\r\n\r\n"}).last, V::kRefused);
  EXPECT_EQ(Drive({"GET https://other.example:80/ HTTP/1.1\r\nHost: registry.example\r\n\r\n"}).last, V::kRefused);
  EXPECT_EQ(Drive({"GET http://registry.example/x HTTP/1.1\r\nHost: registry.example\r\n\r\n"}).last, V::kNeedMore);
  EXPECT_EQ(Drive({"GET other.example HTTP/1.1\r\nHost: registry.example\r\n\r\n"}).last, V::kRefused);
  EXPECT_EQ(Drive({"OPTIONS * HTTP/1.1\r\nHost: registry.example\r\n\r\n"}).last, V::kNeedMore);
}

TEST(HttpHostGate, WhatNamesNoHostOrTwoIsRefused) {
  for (const char* req : {
           "GET / HTTP/1.0\r\n\r\n",                                                   // no Host: the default site
           "GET / HTTP/1.1\r\nHost: registry.example\r\nHost: other.example\r\n\r\n",  // which one wins differs
           "GET /\r\n",                                                                // HTTP/0.9
           "GET / HTTP/1.1\r\nHost: user@registry.example\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: registry.example\r\n other.example\r\n\r\n",  // obs-fold
           "CONNECT other.example:443 HTTP/1.1\r\nHost: registry.example\r\n\r\n",
           "CONNECT registry.example:80 HTTP/1.1\r\nHost: registry.example\r\n\r\n",  // a proxy is a proxy
           "GET / HTTP/2.0\r\nHost: registry.example\r\n\r\n",
       }) {
    Flight r = Drive({req}, true);
    EXPECT_EQ(r.last, V::kRefused) << req;
    EXPECT_EQ(r.passed, "") << req;
    EXPECT_FALSE(r.refusal.empty()) << req;
  }
  Flight h2 = Drive({"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"});
  EXPECT_EQ(h2.last, V::kRefused);
  EXPECT_NE(h2.refusal.find("HTTP/2"), std::string::npos) << h2.refusal;
}

TEST(HttpHostGate, ABodyIsPassedAsABodyAndTheRequestAfterItIsJudged) {
  std::string hidden = "GET / HTTP/1.1\r\nHost: other.example\r\n\r\n";
  std::string with_length = "POST /-/v1/login HTTP/1.1\r\nHost: registry.example\r\nContent-Length: " +
                            std::to_string(hidden.size()) + "\r\n\r\n" + hidden;
  Flight r = Drive(Bytes(with_length));
  EXPECT_EQ(r.passed, with_length) << r.refusal;  // the look-alike is body, which the server reads as body
  EXPECT_EQ(Drive({with_length + hidden}).last, V::kRefused);

  std::string chunked = "PUT /pkg HTTP/1.1\r\nHost: registry.example\r\nTransfer-Encoding: chunked\r\n\r\n" +
                        fmt::format("{:x}", hidden.size()) + "\r\n" + hidden + "\r\n0\r\n\r\n";
  Flight c = Drive({chunked});
  EXPECT_EQ(c.passed, chunked) << c.refusal;
  EXPECT_EQ(Drive({chunked + hidden}).last, V::kRefused);

  std::string big(1 << 20, 'x');
  std::string upload = "PUT /big HTTP/1.1\r\nHost: registry.example\r\nContent-Length: " + std::to_string(big.size()) +
                       "\r\n\r\n";
  std::vector<std::string> pieces{upload};
  for (std::size_t at = 0; at < big.size(); at += 65536) pieces.push_back(big.substr(at, 65536));
  Flight u = Drive(pieces);
  EXPECT_EQ(u.passed.size(), upload.size() + big.size()) << u.refusal;
}

TEST(HttpHostGate, ABodyWhoseEndServersCouldReadDifferentlyIsRefused) {
  const std::string head = "POST / HTTP/1.1\r\nHost: registry.example\r\n";
  for (std::string fields : {
           std::string("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"),
           std::string("Transfer-Encoding: gzip, chunked\r\n"),
           std::string("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"),
           std::string("Transfer-Encoding: identity\r\n"),
           std::string("Content-Length: 5\r\nContent-Length: 5\r\n"),
           std::string("Content-Length: 5, 5\r\n"),
       }) {
    Flight r = Drive({head + fields + "\r\n0\r\n\r\n"});
    EXPECT_EQ(r.last, V::kRefused) << fields;
    EXPECT_EQ(r.passed, "") << fields;
  }
}

TEST(HttpHostGate, AfterAnUpgradeTheNewProtocolPassesAndAnotherRequestIsStillJudged) {
  std::string upgrade = "GET /ws HTTP/1.1\r\nHost: registry.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
  std::string frame("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11);
  Flight ws = Drive({upgrade, frame, "GET / HTTP/1.1\r\nHost: other.example\r\n\r\n"});
  EXPECT_EQ(ws.last, V::kOpen);  // a WebSocket is not HTTP: the gate steps aside
  EXPECT_EQ(ws.passed.substr(0, upgrade.size() + frame.size()), upgrade + frame);
  // A server that declined the upgrade reads on as HTTP: so does the gate.
  Flight declined = Drive({upgrade, "GET / HTTP/1.1\r\nHost: other.example\r\n\r\n"});
  EXPECT_EQ(declined.last, V::kRefused);
  EXPECT_EQ(declined.passed, upgrade);
  EXPECT_EQ(Drive({upgrade, "\r\nGET / HTTP/1.1\r\nHost: other.example\r\n\r\n"}).last, V::kRefused);
  // h2c: after "Upgrade: h2c" the client's preface is HTTP/2, which names no host the gate reads.
  EXPECT_EQ(Drive({"GET / HTTP/1.1\r\nHost: registry.example\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                   "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n",
                   "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"})
                .last,
            V::kRefused);
}

TEST(HttpHostGate, EmptyLinesBeforeARequestDoNotHideIt) {
  EXPECT_EQ(Drive({"\r\n\r\n", "GET / HTTP/1.1\r\nHost: other.example\r\n\r\n"}).last, V::kRefused);
  EXPECT_EQ(Drive({"\n\n\r\nGET / HTTP/1.1\r\nHost: other.example\r\n\r\n"}).last, V::kRefused);
  Flight blank = Drive({"\r\n\r\n"}, true);
  EXPECT_EQ(blank.passed, "\r\n\r\n");
}

TEST(HttpHostGate, TheHostsLoopbackAnswersToItsThreeNames) {
  for (const char* name : {"localhost:8080", "127.0.0.1:8080", "[::1]:8080"}) {
    std::string req = std::string("GET / HTTP/1.1\r\nHost: ") + name + "\r\n\r\n";
    EXPECT_EQ(Drive({req}, false, "127.0.0.1", 8080).last, V::kNeedMore) << name;
  }
  EXPECT_EQ(Drive({"GET / HTTP/1.1\r\nHost: evil.localhost:8080\r\n\r\n"}, false, "localhost", 8080).last, V::kRefused);
}

TEST(HttpHostGate, AHeadOverTheLimitOrCutByEofIsRefusedAndABodyCutByEofPasses) {
  std::string huge = "GET / HTTP/1.1\r\nHost: registry.example\r\nX: " + std::string(70 * 1024, 'a') + "\r\n\r\n";
  EXPECT_EQ(Drive({huge}).last, V::kRefused);
  EXPECT_EQ(Drive({"GET / HTTP/1.1\r\nHost: registry.example\r\n"}, true).last, V::kRefused);
  std::string cut = "POST / HTTP/1.1\r\nHost: registry.example\r\nContent-Length: 100\r\n\r\nabc";
  Flight r = Drive({cut}, true);
  EXPECT_EQ(r.passed, cut) << r.refusal;
  EXPECT_EQ(r.last, V::kOpen);  // the EOF passes on
}

TEST(HttpHostGate, OtherProtocolsAreNotReadAsHttp) {
  for (const char* first : {"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n", "*1\r\n$4\r\nPING\r\n", "EHLO mail\r\n",
                            "PING\r\n", "\x05\x01\x00", "{\"jsonrpc\":\"2.0\"}\n"}) {
    EXPECT_EQ(Classify(first, false), HttpStart::kOther) << first;
    EXPECT_EQ(Drive({first}).last, V::kOpen) << first;
  }
  EXPECT_EQ(Classify("GET", false), HttpStart::kNeedMore);
  EXPECT_EQ(Classify("GET", true), HttpStart::kOther);  // a partial word asks for nothing
  EXPECT_EQ(Classify("GET ", false), HttpStart::kHttp);
  EXPECT_EQ(Classify("FOO\t/ hTtP/1.1", false), HttpStart::kHttp);
  // A capital word and a space: the line's end tells (nginx reads spaces in a target).
  EXPECT_EQ(Classify("PUT /a b", false), HttpStart::kNeedMore);
  EXPECT_EQ(Classify("PUT /a b HTTP/1.1", false), HttpStart::kHttp);
  // python takes control bytes in a path: only the line's end tells.
  EXPECT_EQ(Classify("PUT /a\x01", false), HttpStart::kNeedMore);
  EXPECT_EQ(Classify("PUT\x01/a", false), HttpStart::kOther);  // right after a method: binary
  EXPECT_EQ(Classify("X", false), HttpStart::kNeedMore);
  // Go reads any token as a method, python any blank as a gap (adversary pass 4).
  for (const char* first : {"get / HTTP/1.1", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA / HTTP/1.1", " GET / HTTP/1.1",
                            "GET\x1c/\x1cHTTP/1.1", "G.ET / http/1.1", "~ / HTTP/1.1"}) {
    EXPECT_EQ(Classify(first, false), HttpStart::kHttp) << first;
  }
  // What no server reads as a request line, decided before the line ends: a
  // lower-case word whose third word is no version.
  for (std::string first : {std::string("ping from the cell"), std::string("socks ping pong"),
                            std::string("SSH-2.0-x Debian 1"), std::string("db\0", 3)}) {
    EXPECT_EQ(Classify(first, false), HttpStart::kOther) << first;
  }
  // One read after another goes on where the last stopped.
  HttpStartReader dripped;
  std::string line = "POST /upload HTTP/1.1";
  for (std::size_t n = 0; n < 16; ++n) EXPECT_EQ(dripped.Read(line.substr(n, 1), false), HttpStart::kNeedMore) << n;
  EXPECT_EQ(dripped.Read(line.substr(16), false), HttpStart::kHttp);
  EXPECT_EQ(Drive({"PUT /a b HTTP/1.1\r\nHost: other.example\r\n\r\n"}).last, V::kRefused);
}

}  // namespace
}  // namespace mcpcell
