// The network section of a profile (plus --allow-host/--allow-port/--resolve)
// lowered into a NetworkSpec, and the sentence that tells the user what holds.
#include <gtest/gtest.h>

#include "profile/lower.h"
#include "profile/permission_profile.h"

namespace mcpcell {
namespace {

PermissionProfile Profile(const char* json) {
  auto p = ParseProfile(json, "p.json");
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().Message());
  return p.ok() ? *p : PermissionProfile{};
}

TEST(LowerNetwork, AllowListIsEnforcedThroughTheProxyAndSaysWhatIsNotCovered) {
  auto p = Profile(R"({"network": {"outbound": {"allow_host": [".acmecorp.com"], "allow_port": [443]}}})");
  auto n = LowerNetwork(p, {"api.example.com"}, {"8443"});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->spec.mode, NetworkSpec::Mode::kAllowList);
  EXPECT_FALSE(n->spec.allow_all);
  EXPECT_EQ(n->spec.allow_hosts, (std::vector<std::string>{".acmecorp.com", "api.example.com"}));
  EXPECT_EQ(n->spec.allow_ports, (std::vector<std::uint16_t>{443, 8443}));
  EXPECT_NE(n->enforced.find("enforced"), std::string::npos) << n->enforced;
  EXPECT_NE(n->enforced.find("egress proxy"), std::string::npos) << n->enforced;
  EXPECT_NE(n->enforced.find("UDP other than DNS, QUIC, ICMP and IPv6 are denied"), std::string::npos);
  EXPECT_EQ(n->enforced.find("not enforceable"), std::string::npos) << n->enforced;
  EXPECT_EQ(n->enforced.find("NOT"), std::string::npos) << n->enforced;
  EXPECT_TRUE(n->warnings.empty());
}

TEST(LowerNetwork, InsecureAllowAllIsAuditOnlyThroughTheProxyNeverTheHostNetwork) {
  auto p = Profile(R"({"network": {"outbound": {"insecure_allow_all": true}}})");
  auto n = LowerNetwork(p, {}, {});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->spec.mode, NetworkSpec::Mode::kAllowList);
  EXPECT_TRUE(n->spec.allow_all);
  EXPECT_NE(n->enforced.find("audit-only"), std::string::npos) << n->enforced;
  ASSERT_FALSE(n->warnings.empty());
  EXPECT_NE(n->warnings[0].find("WARNING: network is OPEN"), std::string::npos);
}

TEST(LowerNetwork, NoOutboundRulesMeansNoNetworkAndPinsAreNotedAsUnused) {
  auto n = LowerNetwork(Profile("{}"), {}, {}, {"a.test:80:127.0.0.1"});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->spec.mode, NetworkSpec::Mode::kNone);
  ASSERT_EQ(n->warnings.size(), 1u);
  EXPECT_NE(n->warnings[0].find("--resolve has no effect"), std::string::npos);
}

TEST(LowerNetwork, ResolvePinsJoinTheSpec) {
  auto n = LowerNetwork(Profile("{}"), {"example.test", "b.test"}, {}, {"Example.Test.:8099:127.0.0.1", "b.test:*:[::1]"});
  ASSERT_TRUE(n.ok()) << n.error().Message();
  ASSERT_EQ(n->spec.resolve.size(), 2u);
  EXPECT_EQ(n->spec.resolve[0].host, "example.test");
  EXPECT_EQ(n->spec.resolve[0].port, 8099);
  EXPECT_EQ(n->spec.resolve[0].address, "127.0.0.1");
  EXPECT_EQ(n->spec.resolve[1].port, 0);
  EXPECT_EQ(n->spec.resolve[1].address, "::1");
}

// What the proxy would refuse every time is refused at launch, a pin that does nothing said (adv8).
TEST(LowerNetwork, APinNoRuleAllowsIsSaidCloudMetadataIsRefused) {
  auto unallowed = LowerNetwork(Profile("{}"), {"example.test"}, {}, {"other.test:443:203.0.113.7"});
  ASSERT_TRUE(unallowed.ok()) << unallowed.error().Message();
  ASSERT_EQ(unallowed->warnings.size(), 1u);
  EXPECT_NE(unallowed->warnings[0].find("--resolve other.test has no effect"), std::string::npos)
      << unallowed->warnings[0];
  EXPECT_TRUE(LowerNetwork(Profile("{}"), {".example.test"}, {}, {"api.example.test:443:203.0.113.7"}).ok())
      << "a domain rule covers the pinned name";
  EXPECT_TRUE(LowerNetwork(Profile("{}"), {}, {"443"}, {"any.test:443:203.0.113.7"}).ok()) << "ports only: any name";
  for (const char* host : {"169.254.169.254", "fd00:ec2::254", "[fd00:ec2::254]"}) {
    auto r = LowerNetwork(Profile("{}"), {host}, {}, {});
    ASSERT_FALSE(r.ok()) << host;
    EXPECT_NE(r.error().Message().find("cloud metadata"), std::string::npos) << r.error().Message();
  }
  auto pinned = LowerNetwork(Profile("{}"), {"x.test"}, {}, {"x.test:443:169.254.169.254"});
  ASSERT_FALSE(pinned.ok());
  EXPECT_NE(pinned.error().Message().find("cloud metadata"), std::string::npos) << pinned.error().Message();
}

TEST(ParseResolveFlag, RefusesWhatCurlWouldNotTakeAndSaysWhatWasExpected) {
  for (const char* bad : {"", "host", "host:443", ":443:1.2.3.4", "host:0:1.2.3.4", "host:70000:1.2.3.4",
                          "host:x:1.2.3.4", "host:443:", "host:443:example.com", "host:443:1.2.3.4,5.6.7.8",
                          ".example.com:443:1.2.3.4", "*.example.com:443:1.2.3.4"}) {
    auto r = ParseResolveFlag(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.error().what, "--resolve") << bad;
      EXPECT_NE(r.error().detail.find("HOST:PORT:ADDRESS"), std::string::npos) << bad << ": " << r.error().detail;
    }
  }
  auto v6 = ParseResolveFlag("h.test:443:2001:db8::1");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->address, "2001:db8::1");
}

// The host's loopback, port by port (issue 14 item 3).
TEST(LowerNetwork, LocalhostWithAPortIsAHostLoopbackPortNotAHostRule) {
  auto n = LowerNetwork(PermissionProfile{}, {"localhost:5432", "[::1]:6379", "127.0.0.1:5432"}, {});
  ASSERT_TRUE(n.ok()) << n.error().Message();
  EXPECT_EQ(n->spec.mode, NetworkSpec::Mode::kAllowList);
  EXPECT_TRUE(n->spec.allow_hosts.empty());
  EXPECT_TRUE(n->spec.allow_ports.empty());
  EXPECT_EQ(n->spec.host_ports, (std::vector<HostLoopbackPort>{{"localhost", 5432}, {"::1", 6379}, {"127.0.0.1", 5432}}));
  EXPECT_NE(n->enforced.find("the host's loopback on localhost:5432, [::1]:6379, 127.0.0.1:5432 only"), std::string::npos)
      << n->enforced;
}

TEST(LowerNetwork, ProfileLocalhostTakesTheAllowPortsAndOpensNoOtherHostOnThem) {
  auto p = Profile(R"({"network": {"outbound": {"allow_host": ["localhost"], "allow_port": [5432, 6379]}}})");
  auto n = LowerNetwork(p, {}, {});
  ASSERT_TRUE(n.ok()) << n.error().Message();
  EXPECT_EQ(n->spec.host_ports, (std::vector<HostLoopbackPort>{{"localhost", 5432}, {"localhost", 6379}}));
  EXPECT_TRUE(n->spec.allow_hosts.empty());
  EXPECT_TRUE(n->spec.allow_ports.empty()) << "the ports were localhost's, not \"any host on 5432\"";
}

TEST(LowerNetwork, ProfileLocalhostBesideOtherHostsKeepsToolHivesPairing) {
  auto p = Profile(R"({"network": {"outbound": {"allow_host": ["LOCALHOST.", "api.example.com"], "allow_port": [443]}}})");
  auto n = LowerNetwork(p, {}, {});
  ASSERT_TRUE(n.ok()) << n.error().Message();
  EXPECT_EQ(n->spec.host_ports, (std::vector<HostLoopbackPort>{{"localhost", 443}}));
  EXPECT_EQ(n->spec.allow_hosts, (std::vector<std::string>{"api.example.com"}));
  EXPECT_EQ(n->spec.allow_ports, (std::vector<std::uint16_t>{443}));
}

TEST(LowerNetwork, ALoopbackEntryWithoutAPortIsRefusedSayingWhatToWrite) {
  for (const char* entry : {"localhost", "127.0.0.1", "::1", "[::1]"}) {
    auto n = LowerNetwork(PermissionProfile{}, {entry}, {});
    ASSERT_FALSE(n.ok()) << entry;
    EXPECT_NE(n.error().detail.find(":5432"), std::string::npos) << n.error().Message();
    EXPECT_NE(n.error().detail.find("network.outbound.allow_port"), std::string::npos) << n.error().Message();
  }
  auto p = Profile(R"({"network": {"outbound": {"allow_host": ["localhost", "api.example.com"]}}})");
  EXPECT_FALSE(LowerNetwork(p, {}, {}).ok());
}

TEST(LowerNetwork, OtherSpellingsOfThisMachineAndTheProxyPortAreRefused) {
  for (const char* entry : {"127.0.0.2", "127.0.0.2:5432", "0.0.0.0", "0.0.0.0:5432", "::", "[::]:5432",
                            "::ffff:127.0.0.1", "[::ffff:127.0.0.1]:5432", "::127.0.0.1", "0.1.2.3"}) {
    auto n = LowerNetwork(PermissionProfile{}, {entry}, {});
    ASSERT_FALSE(n.ok()) << entry;
    EXPECT_NE(n.error().Message().find("leads to this machine itself"), std::string::npos) << n.error().Message();
  }
  for (const char* entry : {"localhost:3128", "localhost:0", "localhost:65536", "localhost:", "localhost:+1",
                            "localhost:5432:1", "[::1]x"}) {
    EXPECT_FALSE(LowerNetwork(PermissionProfile{}, {entry}, {}).ok()) << entry;
  }
  auto p = Profile(R"({"network": {"outbound": {"allow_host": ["localhost"], "allow_port": [3128]}}})");
  auto n = LowerNetwork(p, {}, {});
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().Message().find("cell's own egress proxy port"), std::string::npos) << n.error().Message();
}

TEST(LowerNetwork, AnOrdinaryHostWithAPortIsStillRefused) {
  auto n = LowerNetwork(PermissionProfile{}, {"example.com:443"}, {});
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().Message().find("only the host's loopback takes a port"), std::string::npos) << n.error().Message();
}

}  // namespace
}  // namespace mcpcell
