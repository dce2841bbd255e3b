// The pure decisions of egress: ToolHive host/port rules (the lead's
// host_rules), the synthetic name map, the address check, --resolve parsing
// and the HTTP target/Host-header rules of the proxy.

#include <gtest/gtest.h>

#include <boost/asio/ip/address.hpp>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstring>

#include "egress/address_check.h"
#include "egress/host_addresses.h"
#include "egress/host_loopback.h"
#include "egress/host_rules.h"
#include "egress/http_target.h"
#include "egress/name_map.h"
#include "egress/resolver.h"

namespace mcpcell {
namespace {

using boost::asio::ip::make_address;

EgressRules Rules(std::vector<std::string> hosts, std::vector<std::uint16_t> ports = {}, bool all = false) {
  NetworkSpec n;
  n.mode = NetworkSpec::Mode::kAllowList;
  n.allow_hosts = std::move(hosts);
  n.allow_ports = std::move(ports);
  n.allow_all = all;
  return EgressRules::FromSpec(n);
}

TEST(HostRules, ExactAndDomainEntriesMatchLikeToolHive) {
  auto r = Rules({"example.com", ".acme.com"});
  EXPECT_TRUE(MatchConnection(r, "example.com", 443).allowed);
  EXPECT_TRUE(MatchConnection(r, "EXAMPLE.com.", 443).allowed);
  EXPECT_FALSE(MatchConnection(r, "www.example.com", 443).allowed);
  EXPECT_TRUE(MatchConnection(r, "acme.com", 80).allowed);
  EXPECT_TRUE(MatchConnection(r, "wiki.eu.acme.com", 80).allowed);
  EXPECT_FALSE(MatchConnection(r, "evilacme.com", 80).allowed);
  auto denied = MatchConnection(r, "evil.example", 443);
  EXPECT_EQ(denied.rule, "no allow_host entry matches \"evil.example\"");
  EXPECT_NE(denied.how_to_allow.find("--allow-host evil.example"), std::string::npos);
}

TEST(HostRules, HostsAndPortsMustBothMatch) {
  auto r = Rules({".acme.com"}, {80, 443});
  EXPECT_TRUE(MatchConnection(r, "wiki.acme.com", 443).allowed);
  auto port = MatchConnection(r, "wiki.acme.com", 22);
  EXPECT_FALSE(port.allowed);
  EXPECT_NE(port.rule.find("port 22"), std::string::npos);
  EXPECT_NE(port.how_to_allow.find("allow_port"), std::string::npos);
  auto both = MatchConnection(r, "evil.example", 22);
  EXPECT_FALSE(both.allowed);
  EXPECT_NE(both.how_to_allow.find("--allow-port 22"), std::string::npos);
}

TEST(HostRules, PortsOnlyAllowsAnyHostOnThosePorts) {
  auto r = Rules({}, {5432});
  EXPECT_TRUE(MatchConnection(r, "db.internal", 5432).allowed);
  EXPECT_FALSE(MatchConnection(r, "db.internal", 5433).allowed);
  EXPECT_TRUE(MatchName(r, "anything.example").allowed);
}

TEST(HostRules, EmptyRulesDenyAndAllowAllAllows) {
  EXPECT_FALSE(MatchConnection(Rules({}), "example.com", 443).allowed);
  EXPECT_FALSE(MatchName(Rules({}), "example.com").allowed);
  auto all = Rules({}, {}, true);
  EXPECT_TRUE(MatchConnection(all, "anything", 1).allowed);
  EXPECT_EQ(MatchConnection(all, "anything", 1).rule, "insecure_allow_all");
}

TEST(HostRules, MatchNameIgnoresPorts) {
  auto r = Rules({".acme.com"}, {443});
  EXPECT_TRUE(MatchName(r, "x.acme.com").allowed);
  EXPECT_FALSE(MatchName(r, "x.evil.com").allowed);
}

TEST(NameMap, StableSyntheticAddressesMapBackToNames) {
  NameMap names;
  auto a = names.AddressFor("api.example.com");
  auto b = names.AddressFor("other.example.com");
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(names.AddressFor("api.example.com"), a);
  EXPECT_TRUE(NameMap::IsSynthetic(*a));
  EXPECT_EQ(names.NameOf(*a), "api.example.com");
  EXPECT_EQ(names.NameOf(*b), "other.example.com");
  EXPECT_EQ(names.NameOf(*b + 1), std::nullopt);
  EXPECT_EQ(names.NameOf(NameMap::kBase), std::nullopt);
  EXPECT_FALSE(NameMap::IsSynthetic(0x7F000001));
  EXPECT_EQ(NameMap::Format(*a), "198.18.0.1");
}

TEST(AddressCheck, RestrictedRangesAreNamed) {
  auto range = [](const char* a) { return RestrictedRange(make_address(a)).value_or("public"); };
  EXPECT_NE(range("127.0.0.1").find("loopback"), std::string::npos);
  EXPECT_NE(range("10.1.2.3").find("private"), std::string::npos);
  EXPECT_NE(range("172.16.0.1").find("private"), std::string::npos);
  EXPECT_EQ(range("172.32.0.1"), "public");
  EXPECT_NE(range("192.168.1.1").find("private"), std::string::npos);
  EXPECT_NE(range("100.64.0.1").find("private"), std::string::npos);
  EXPECT_NE(range("169.254.169.254").find("cloud metadata"), std::string::npos);
  EXPECT_NE(range("169.254.1.1").find("link-local"), std::string::npos);
  EXPECT_NE(range("0.0.0.0").find("unspecified"), std::string::npos);
  EXPECT_NE(range("224.0.0.1").find("multicast"), std::string::npos);
  EXPECT_NE(range("198.18.0.1").find("synthetic"), std::string::npos);
  EXPECT_NE(range("::1").find("loopback"), std::string::npos);
  EXPECT_NE(range("::").find("unspecified"), std::string::npos);
  EXPECT_NE(range("fd00:ec2::254").find("cloud metadata"), std::string::npos);
  EXPECT_NE(range("fd12::1").find("private"), std::string::npos);
  EXPECT_NE(range("fe80::1").find("link-local"), std::string::npos);
  EXPECT_NE(range("ff02::1").find("multicast"), std::string::npos);
  EXPECT_NE(range("::ffff:127.0.0.1").find("loopback"), std::string::npos);
  EXPECT_NE(range("::ffff:169.254.169.254").find("cloud metadata"), std::string::npos);
  EXPECT_NE(range("64:ff9b::a01:203").find("private"), std::string::npos);
  EXPECT_EQ(range("93.184.216.34"), "public");
  EXPECT_EQ(range("2606:2800:220:1::1"), "public");
  EXPECT_EQ(range("::ffff:93.184.216.34"), "public");
}

// Issue 10 item 11: IPv6 forms that lead to an internal IPv4 host, and
// ranges that are never an ordinary destination.
TEST(AddressCheck, IPv6TransitionFormsAndSpecialRangesAreRefused) {
  auto range = [](const char* a) { return RestrictedRange(make_address(a)).value_or("public"); };
  // NAT64 well-known prefix (RFC 6052) with an internal / a public IPv4 inside.
  EXPECT_NE(range("64:ff9b::7f00:1").find("loopback (127.0.0.0/8) inside"), std::string::npos);
  EXPECT_NE(range("64:ff9b::a9fe:a9fe").find("cloud metadata"), std::string::npos);
  EXPECT_EQ(range("64:ff9b::5db8:d822"), "public");  // 93.184.216.34
  // NAT64 local-use (RFC 8215) and the rest of 64:ff9b::/32: refused whole.
  EXPECT_NE(range("64:ff9b:1::7f00:1").find("NAT64 local-use (64:ff9b:1::/48)"), std::string::npos);
  EXPECT_NE(range("64:ff9b:1:2:3::5db8:d822").find("NAT64 local-use"), std::string::npos);
  EXPECT_NE(range("64:ff9b:0:0:1::1").find("64:ff9b::/32"), std::string::npos);
  // 6to4 (RFC 3056): the IPv4 in bits 16-47.
  EXPECT_NE(range("2002:7f00:1::1").find("loopback (127.0.0.0/8) inside"), std::string::npos);
  EXPECT_NE(range("2002:a00:1::").find("private (10.0.0.0/8) inside"), std::string::npos);
  EXPECT_NE(range("2002:a9fe:a9fe::1").find("cloud metadata"), std::string::npos);
  EXPECT_EQ(range("2002:5db8:d822::1"), "public");
  // Teredo (RFC 4380), whatever the obfuscated IPv4.
  EXPECT_NE(range("2001:0:4136:e378:8000:63bf:3fff:fdd2").find("Teredo (2001::/32)"), std::string::npos);
  EXPECT_EQ(range("2001:4860:4860::8888"), "public");  // 2001:4860::/32 is not Teredo
  // IPv4-compatible ::a.b.c.d.
  EXPECT_NE(range("::127.0.0.1").find("loopback"), std::string::npos);
  EXPECT_NE(range("::10.0.0.1").find("private"), std::string::npos);
  EXPECT_NE(range("::169.254.169.254").find("cloud metadata"), std::string::npos);
  // Site-local, multicast (every scope), unspecified, discard-only.
  EXPECT_NE(range("fec0::1").find("site-local"), std::string::npos);
  EXPECT_NE(range("feff::1").find("site-local"), std::string::npos);
  EXPECT_NE(range("ff05::2").find("multicast"), std::string::npos);
  EXPECT_NE(range("ff0e::1").find("multicast"), std::string::npos);
  EXPECT_NE(range("::").find("unspecified"), std::string::npos);
  EXPECT_NE(range("::ffff:0.0.0.0").find("unspecified"), std::string::npos);
  EXPECT_NE(range("100::1").find("discard-only"), std::string::npos);
  // IPv4 special ranges the list gained.
  EXPECT_NE(range("192.0.0.170").find("IETF protocol assignments"), std::string::npos);
  EXPECT_NE(range("255.255.255.255").find("broadcast"), std::string::npos);
  EXPECT_EQ(range("192.0.1.1"), "public");
}

// Issue 18 item 11: a metadata address is refused as one, and neither an
// allow_host literal nor a --resolve pin allows it.
TEST(AddressCheck, MetadataAddressesCannotBeAllowed) {
  auto r = Rules({"169.254.169.254", "fd00:ec2::254", "meta.test"});
  for (const char* meta : {"169.254.169.254", "fd00:ec2::254", "169.254.170.2", "100.100.100.200", "168.63.129.16",
                           "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::"}) {
    auto a = make_address(meta);
    EXPECT_TRUE(IsMetadataAddress(a)) << meta;
    for (bool pinned : {false, true}) {
      auto v = CheckAddress(r, a.to_string(), 80, a, pinned);
      EXPECT_FALSE(v.allowed) << meta << (pinned ? " pinned" : "");
      EXPECT_NE(v.rule.find("refused as a metadata address"), std::string::npos) << v.rule;
      EXPECT_NE(v.rule.find("allow_host and --resolve cannot allow it"), std::string::npos) << v.rule;
      EXPECT_EQ(v.how_to_allow.find("add \""), std::string::npos) << v.how_to_allow;
    }
  }
  auto named = CheckAddress(r, "meta.test", 80, make_address("169.254.169.254"), true);
  EXPECT_FALSE(named.allowed);
  EXPECT_NE(named.rule.find("\"meta.test\" resolved to 169.254.169.254"), std::string::npos) << named.rule;
  EXPECT_FALSE(IsMetadataAddress(make_address("169.254.169.253")));
  EXPECT_FALSE(IsMetadataAddress(make_address("93.184.216.34")));
}

TEST(AddressCheck, InternalAddressRefusedUnlessNamedExplicitly) {
  auto r = Rules({"localhost", "10.1.2.3", "::1"});
  auto v = CheckAddress(r, "localhost", 8080, make_address("127.0.0.1"), false);
  EXPECT_FALSE(v.allowed);
  EXPECT_NE(v.rule.find("loopback"), std::string::npos);
  EXPECT_NE(v.how_to_allow.find("--resolve localhost:8080:127.0.0.1"), std::string::npos);
  // The same address from a --resolve pin: named explicitly.
  EXPECT_TRUE(CheckAddress(r, "localhost", 8080, make_address("127.0.0.1"), true).allowed);
  // An allow_host entry that is the literal.
  EXPECT_TRUE(CheckAddress(r, "10.1.2.3", 80, make_address("10.1.2.3"), false).allowed);
  EXPECT_TRUE(CheckAddress(r, "::1", 80, make_address("0:0::1"), false).allowed);
  // A literal nobody named.
  auto lit = CheckAddress(r, "10.9.9.9", 80, make_address("10.9.9.9"), false);
  EXPECT_FALSE(lit.allowed);
  EXPECT_NE(lit.how_to_allow.find("--allow-host 10.9.9.9"), std::string::npos);
  // insecure_allow_all does not switch the address check off.
  EXPECT_FALSE(CheckAddress(Rules({}, {}, true), "x", 80, make_address("169.254.169.254"), false).allowed);
  EXPECT_TRUE(CheckAddress(r, "example.com", 443, make_address("93.184.216.34"), false).allowed);
}

TEST(ResolvePin, ParsesCurlForm) {
  auto pin = ParseResolvePin("API.Example.com:443:203.0.113.7");
  ASSERT_TRUE(pin.ok()) << pin.error().Message();
  EXPECT_EQ(pin->host, "api.example.com");
  EXPECT_EQ(pin->port, 443);
  EXPECT_EQ(pin->address, "203.0.113.7");
  auto any = ParseResolvePin("db.test:*:[::1]");
  ASSERT_TRUE(any.ok()) << any.error().Message();
  EXPECT_EQ(any->port, 0);
  EXPECT_EQ(any->address, "::1");
  auto v6 = ParseResolvePin("db.test:5432:fd00::2");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->address, "fd00::2");
}

TEST(ResolvePin, ErrorsSayWhatIsWrong) {
  for (const char* bad : {"example.com", "example.com:443", ":443:1.2.3.4", "example.com:0:1.2.3.4",
                          "example.com:http:1.2.3.4", "example.com:443:not-an-ip", "x:1:1.2.3.4,5.6.7.8",
                          "evil%00.x:443:1.2.3.4", "a..b:443:1.2.3.4", "0x7f.1:80:1.2.3.4"}) {
    auto r = ParseResolvePin(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().Message().find("HOST:PORT:ADDRESS"), std::string::npos) << r.error().Message();
  }
}

TEST(Resolver, PinsWinForTheirPortOnly) {
  Resolver resolver({{"api.test", 443, "10.0.0.5"}, {"any.test", 0, "::1"}});
  EXPECT_EQ(resolver.Pinned("api.test", 443), make_address("10.0.0.5"));
  EXPECT_EQ(resolver.Pinned("api.test", 80), std::nullopt);
  EXPECT_EQ(resolver.Pinned("any.test", 1), make_address("::1"));
  EXPECT_EQ(resolver.Pinned("other.test", 443), std::nullopt);
}

TEST(HttpTarget, AuthorityForms) {
  auto hp = ParseAuthority("Example.COM:8443", 0);
  ASSERT_TRUE(hp);
  EXPECT_EQ(hp->host, "example.com");
  EXPECT_EQ(hp->port, 8443);
  EXPECT_EQ(ParseAuthority("example.com", 80)->port, 80);
  EXPECT_EQ(ParseAuthority("example.com", 0), std::nullopt);  // CONNECT needs a port
  EXPECT_EQ(ParseAuthority("[::1]:443", 0)->host, "::1");
  EXPECT_EQ(ParseAuthority("::1:443", 0), std::nullopt);
  EXPECT_EQ(ParseAuthority("example.com:99999", 0), std::nullopt);
  EXPECT_EQ(ParseAuthority("exa mple.com:80", 0), std::nullopt);
  // Every name goes through CanonicalHost; the reason comes back.
  std::string why;
  EXPECT_EQ(ParseAuthority(std::string("evil.test\0.allowed.test:443", 27), 0, &why), std::nullopt);
  EXPECT_EQ(why, "not a valid DNS name: NUL byte at offset 9");
  EXPECT_EQ(ParseAuthority("evil.test%00.allowed.test:443", 0, &why), std::nullopt);
  EXPECT_NE(why.find("'%' at offset 9"), std::string::npos) << why;
  EXPECT_EQ(ParseAuthority("user@evil.test:443", 0, &why), std::nullopt);
  EXPECT_NE(why.find("user information"), std::string::npos) << why;
  EXPECT_EQ(ParseAuthority("user:pw@evil.test:443", 0, &why), std::nullopt);
  EXPECT_EQ(ParseAuthority("[fe80::1%25lo]:443", 0, &why), std::nullopt);
  EXPECT_NE(why.find("zone id"), std::string::npos) << why;
  EXPECT_EQ(ParseAuthority("2130706433:443", 0, &why), std::nullopt);
  EXPECT_NE(why.find("127.0.0.1"), std::string::npos) << why;
  EXPECT_EQ(ParseAuthority("0x7f.1:443", 0, &why), std::nullopt);
  EXPECT_EQ(ParseAuthority("evil..allowed.test:443", 0, &why), std::nullopt);
  EXPECT_EQ(ParseAuthority("allowed.test.:443", 0)->host, "allowed.test");
  EXPECT_EQ(ParseAuthority("[0:0::1]:443", 0)->host, "::1");
  EXPECT_EQ(FormatHostPort({"::1", 443}), "[::1]:443");
}

TEST(HttpTarget, AbsoluteFormOnly) {
  std::string why;
  auto t = ParseHttpTarget("http://Example.com:8080/a/b?q=1#frag", &why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->where.host, "example.com");
  EXPECT_EQ(t->where.port, 8080);
  EXPECT_EQ(t->origin_form, "/a/b?q=1");
  EXPECT_EQ(ParseHttpTarget("http://example.com", &why)->origin_form, "/");
  EXPECT_EQ(ParseHttpTarget("http://example.com?x", &why)->origin_form, "/?x");
  EXPECT_FALSE(ParseHttpTarget("https://example.com/", &why));
  EXPECT_NE(why.find("CONNECT"), std::string::npos);
  EXPECT_FALSE(ParseHttpTarget("/index.html", &why));
  EXPECT_NE(why.find("proxy"), std::string::npos);
  EXPECT_FALSE(ParseHttpTarget("http://user:pw@example.com/", &why));
  EXPECT_FALSE(ParseHttpTarget("http://evil.test%00.allowed.test/", &why));
  EXPECT_NE(why.find("not a valid DNS name: '%' at offset 9"), std::string::npos) << why;
  EXPECT_FALSE(ParseHttpTarget(std::string("http://evil.test\0.allowed.test/", 31), &why));
  EXPECT_NE(why.find("NUL byte at offset 9"), std::string::npos) << why;
}

TEST(HttpTarget, HostHeaderMustNameTheTarget) {
  HostPort target{"example.com", 80};
  EXPECT_TRUE(HostHeaderMatches("example.com", target, 80));
  EXPECT_TRUE(HostHeaderMatches("EXAMPLE.com:80", target, 80));
  EXPECT_FALSE(HostHeaderMatches("example.com:8080", target, 80));
  EXPECT_FALSE(HostHeaderMatches("evil.example", target, 80));
  EXPECT_FALSE(HostHeaderMatches("", target, 80));
  EXPECT_TRUE(HostHeaderMatches("example.com.", target, 80));
  std::string why;
  EXPECT_FALSE(HostHeaderMatches(std::string("example.com\0.evil", 17), target, 80, &why));
  EXPECT_NE(why.find("NUL byte at offset 11"), std::string::npos) << why;
}

TEST(HttpTarget, HopByHopHeaders) {
  EXPECT_TRUE(IsHopByHop("Connection", ""));
  EXPECT_TRUE(IsHopByHop("Proxy-Authorization", ""));
  EXPECT_TRUE(IsHopByHop("proxy-connection", ""));
  EXPECT_TRUE(IsHopByHop("Transfer-Encoding", ""));
  EXPECT_TRUE(IsHopByHop("X-Secret", "keep-alive, X-Secret"));
  EXPECT_FALSE(IsHopByHop("Accept", "keep-alive"));
}

// Issue 14 item 8: a cell without network reports what it looked up, and how to allow it.
TEST(EgressRules, NoNetworkDenialsSayNetworkNoneAndHowToAllow) {
  EgressRules rules;
  rules.no_network = true;
  RuleVerdict name = MatchName(rules, "YouTube.com.");
  EXPECT_FALSE(name.allowed);
  EXPECT_EQ(name.rule.rfind("network none: this server has no network", 0), 0u) << name.rule;
  EXPECT_EQ(name.how_to_allow,
            "pass --allow-host youtube.com, or in the permission profile: \"network\": {\"outbound\": "
            "{\"allow_host\": [\"youtube.com\"]}}");
  RuleVerdict connection = MatchConnection(rules, "youtube.com", 443);
  EXPECT_FALSE(connection.allowed);
  EXPECT_NE(connection.how_to_allow.find("--allow-host youtube.com --allow-port 443"), std::string::npos);
  EXPECT_NE(connection.how_to_allow.find("\"allow_port\": [443]"), std::string::npos) << connection.how_to_allow;
}

// Issue 14 item 2: an install-script cell reaches its registry only, and its
// denials give the cell's own advice, never a flag that does not reach it.
TEST(EgressRules, FixedAdviceReplacesTheFlagsInEveryRuleDenialAndOnlyThere) {
  NetworkSpec net;
  net.mode = NetworkSpec::Mode::kAllowList;
  net.allow_hosts = {"registry.example"};
  net.allow_ports = {443};
  net.fixed_how_to_allow = "install scripts reach only the npm registry";
  EgressRules rules = EgressRules::FromSpec(net);
  rules.fixed_how_to_allow = net.fixed_how_to_allow;
  EXPECT_TRUE(MatchConnection(rules, "registry.example", 443).allowed);
  EXPECT_TRUE(MatchName(rules, "Registry.Example.").allowed);
  for (const RuleVerdict& v : {MatchConnection(rules, "evil.example", 443), MatchConnection(rules, "registry.example", 80),
                               MatchName(rules, "evil.example")}) {
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.how_to_allow, "install scripts reach only the npm registry");
  }
  EXPECT_EQ(MatchConnection(rules, "registry.example", 443).how_to_allow, "");
  rules.no_network = true;
  RuleVerdict none = MatchConnection(rules, "registry.example", 443);
  EXPECT_FALSE(none.allowed);
  EXPECT_EQ(none.how_to_allow, "install scripts reach only the npm registry");
}

// Issue 14 item 3: the host's loopback is judged by port against the named ports only.
TEST(EgressRules, HostLoopbackIsMatchedByPortAndTargetsFollowTheSpelling) {
  std::vector<HostLoopbackPort> ports{{"localhost", 5432}, {"::1", 6379}};
  auto db = MatchHostLoopback(ports, "127.0.0.1", 5432);
  EXPECT_TRUE(db.verdict.allowed);
  ASSERT_EQ(db.targets.size(), 2u);
  EXPECT_EQ(db.targets[0].to_string(), "127.0.0.1");
  EXPECT_EQ(db.targets[1].to_string(), "::1");
  auto redis = MatchHostLoopback(ports, "localhost", 6379);
  ASSERT_EQ(redis.targets.size(), 1u);
  EXPECT_EQ(redis.targets[0].to_string(), "::1");
  auto other = MatchHostLoopback(ports, "::1", 22);
  EXPECT_FALSE(other.verdict.allowed);
  EXPECT_TRUE(other.targets.empty());
  EXPECT_NE(other.verdict.rule.find("the named ones are localhost:5432, [::1]:6379"), std::string::npos)
      << other.verdict.rule;
  EXPECT_NE(other.verdict.how_to_allow.find("--allow-host localhost:22"), std::string::npos);
  for (const char* host : {"localhost", "127.0.0.1", "::1"}) EXPECT_TRUE(IsLoopbackName(host)) << host;
  for (const char* host : {"127.0.0.2", "0.0.0.0", "::ffff:127.0.0.1", "localhost.localdomain", "x.localhost"}) {
    EXPECT_FALSE(IsLoopbackName(host)) << host;
  }
}

}  // namespace
}  // namespace mcpcell

// The host's own interface addresses are refused like loopback: a connection
// to one of them stays inside the machine and reaches services on 0.0.0.0.
TEST(HostOwnAddress, EveryInterfaceAddressIsRestrictedAndAPublicOneIsNot) {
  ifaddrs* list = nullptr;
  ASSERT_EQ(::getifaddrs(&list), 0);
  int checked = 0;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    sockaddr_in sin{};
    std::memcpy(&sin, i->ifa_addr, sizeof sin);
    ASSERT_NE(::inet_ntop(AF_INET, &sin.sin_addr, text, sizeof text), nullptr);
    auto a = boost::asio::ip::make_address(text);
    auto range = mcpcell::RestrictedRange(a);
    ASSERT_TRUE(range.has_value()) << text << " on " << i->ifa_name << " is not restricted";
    ++checked;
  }
  ::freeifaddrs(list);
  EXPECT_GT(checked, 0);
  // TEST-NET-3 is on no interface of a test machine.
  auto foreign = boost::asio::ip::make_address("203.0.113.77");
  EXPECT_FALSE(mcpcell::HostOwnAddress(foreign).has_value());
}
