// CanonicalHost / CanonicalWireName (src/egress/dns_name.h): the one gate
// every name a cell sends passes before a rule sees it (issue 10, item 1).
// Each bypass encoding found or imagined is a case here.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "egress/dns_name.h"
#include "egress/host_rules.h"

namespace mcpcell {
namespace {

using namespace std::string_literals;

std::string Why(std::string_view bytes) {
  std::string why;
  auto name = CanonicalHost(bytes, &why);
  EXPECT_FALSE(name.has_value()) << PrintableBytes(bytes) << " was accepted as " << name.value_or("");
  return why;
}

std::string Ok(std::string_view bytes) {
  std::string why;
  auto name = CanonicalHost(bytes, &why);
  EXPECT_TRUE(name.has_value()) << PrintableBytes(bytes) << ": " << why;
  return name.value_or("");
}

TEST(DnsName, NulByteIsRefusedWithItsOffset) {
  EXPECT_EQ(Why("evil.test\0.allowed.test"s), "not a valid DNS name: NUL byte at offset 9");
  EXPECT_EQ(Why("203.0.113.2\0.allowed.test"s), "not a valid DNS name: NUL byte at offset 11");
  EXPECT_EQ(Why("\0"s), "not a valid DNS name: NUL byte at offset 0");
  EXPECT_EQ(Why("allowed.test\0"s), "not a valid DNS name: NUL byte at offset 12");
  // A NUL in something that looks like IPv6: inet_pton would stop at it.
  EXPECT_EQ(Why("::1\0.allowed.test"s), "not a valid DNS name: NUL byte at offset 3");
  EXPECT_EQ(Why("[::1\0]"s), "not a valid DNS name: NUL byte at offset 4");
}

TEST(DnsName, PercentEncodingControlBytesAndSpacesAreRefused) {
  EXPECT_NE(Why("evil.test%00.allowed.test").find("'%' at offset 9"), std::string::npos);
  EXPECT_NE(Why("evil.test\n.allowed.test").find("control byte 0x0a at offset 9"), std::string::npos);
  EXPECT_NE(Why("evil.test\r.allowed.test").find("control byte 0x0d"), std::string::npos);
  EXPECT_NE(Why("evil.test\t.allowed.test").find("control byte 0x09"), std::string::npos);
  EXPECT_NE(Why("evil.test\x7f.allowed.test").find("control byte 0x7f"), std::string::npos);
  EXPECT_NE(Why("evil.test .allowed.test").find("space at offset 9"), std::string::npos);
  EXPECT_NE(Why(" allowed.test").find("space at offset 0"), std::string::npos);
  EXPECT_NE(Why("evil.test/.allowed.test").find("'/' at offset 9"), std::string::npos);
  EXPECT_NE(Why("evil.test\\.allowed.test").find("'\\' at offset 9"), std::string::npos);
  EXPECT_NE(Why("_dmarc.allowed.test").find("'_' at offset 0"), std::string::npos);
  EXPECT_NE(Why("*.allowed.test").find("'*'"), std::string::npos);
}

TEST(DnsName, UserInfoIsRefused) {
  EXPECT_NE(Why("user@evil.test").find("'@' at offset 4 (user information is not accepted)"), std::string::npos);
  EXPECT_NE(Why("allowed.test@evil.test").find("'@'"), std::string::npos);
}

TEST(DnsName, EmptyLabelsAndDotsAreRefusedButOneTrailingDotIsDropped) {
  EXPECT_NE(Why("evil..allowed.test").find("empty label at offset 5"), std::string::npos);
  EXPECT_NE(Why(".allowed.test").find("empty label at offset 0"), std::string::npos);
  EXPECT_NE(Why("allowed.test..").find("empty label"), std::string::npos);
  EXPECT_NE(Why(".").find("empty label"), std::string::npos);
  EXPECT_NE(Why("").find("empty name"), std::string::npos);
  EXPECT_EQ(Ok("allowed.test."), "allowed.test");
  EXPECT_NE(Why("-evil.test").find("starts or ends with '-'"), std::string::npos);
  EXPECT_NE(Why("evil-.test").find("starts or ends with '-'"), std::string::npos);
}

TEST(DnsName, UpperCaseIsFolded) {
  EXPECT_EQ(Ok("WIKI.AcmeCorp.COM"), "wiki.acmecorp.com");
  EXPECT_EQ(Ok("xn--bcher-kva.example"), "xn--bcher-kva.example");  // punycode is LDH
}

TEST(DnsName, LengthLimits) {
  std::string label63(63, 'a');
  EXPECT_EQ(Ok(label63 + ".test"), label63 + ".test");
  EXPECT_NE(Why(std::string(64, 'a') + ".test").find("label of 64 bytes at offset 0 (at most 63)"),
            std::string::npos);
  // 253 bytes is the most a name can have; a trailing dot on top is allowed.
  std::string n253 = label63 + "." + label63 + "." + label63 + "." + std::string(61, 'b');
  ASSERT_EQ(n253.size(), 253u);
  EXPECT_EQ(Ok(n253), n253);
  EXPECT_EQ(Ok(n253 + "."), n253);
  EXPECT_NE(Why(n253 + "c").find("name of 254 bytes (at most 253)"), std::string::npos);
  EXPECT_NE(Why(std::string(60000, 'a')).find("name of 60000 bytes"), std::string::npos);
}

TEST(DnsName, NonAsciiIsRefusedWithThePunycodeHint) {
  EXPECT_NE(Why("b\xc3\xbc" "cher.example").find("non-ASCII byte 0xc3 at offset 1"), std::string::npos);
  EXPECT_NE(Why("b\xc3\xbc" "cher.example").find("xn--"), std::string::npos);
  // A fullwidth full stop (U+FF0E) is not a label separator here.
  EXPECT_NE(Why("evil\xef\xbc\x8e" "allowed.test").find("non-ASCII"), std::string::npos);
}

TEST(DnsName, NumbersLibcWouldReadAsIPv4AreRefusedWithTheAddressTheyMean) {
  EXPECT_NE(Why("0x7f.1").find("is the IPv4 address 127.0.0.1 to libc; write it as 127.0.0.1"),
            std::string::npos);
  EXPECT_NE(Why("2130706433").find("127.0.0.1"), std::string::npos);
  EXPECT_NE(Why("017700000001").find("127.0.0.1"), std::string::npos);
  EXPECT_NE(Why("127.1").find("127.0.0.1"), std::string::npos);
  EXPECT_NE(Why("0x7f000001").find("127.0.0.1"), std::string::npos);
  EXPECT_NE(Why("0251.0376.0251.0376").find("169.254.169.254"), std::string::npos);
  EXPECT_NE(Why("127.000.000.001").find("127.0.0.1"), std::string::npos);
  // Not an address to libc, but a number as top-level domain: no real name is.
  EXPECT_NE(Why("evil.4294967296").find("all digits"), std::string::npos);
  EXPECT_NE(Why("1.2.3.4.5").find("all digits"), std::string::npos);
  EXPECT_EQ(Ok("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(Ok("203.0.113.2"), "203.0.113.2");
  EXPECT_EQ(Ok("1password.com"), "1password.com");  // digits first in a label are fine
  EXPECT_EQ(Ok("0x7f.example"), "0x7f.example");
}

TEST(DnsName, IPv6LiteralsAreCanonicalAndZoneIdsRefused) {
  EXPECT_EQ(Ok("[::1]"), "::1");
  EXPECT_EQ(Ok("0:0::1"), "::1");
  EXPECT_EQ(Ok("[FD00:EC2::254]"), "fd00:ec2::254");
  EXPECT_EQ(Ok("::ffff:127.0.0.1"), "::ffff:127.0.0.1");
  EXPECT_NE(Why("fe80::1%eth0").find("IPv6 zone id at offset 7"), std::string::npos);
  EXPECT_NE(Why("[fe80::1%25eth0]").find("IPv6 zone id at offset 8"), std::string::npos);
  EXPECT_NE(Why("[127.0.0.1]").find("not an IPv6 address"), std::string::npos);
  EXPECT_NE(Why("evil.test:443").find("not an IPv6 address"), std::string::npos);
}

TEST(DnsName, CanonicalFormIsAFixedPoint) {
  for (const char* name : {"wiki.acmecorp.com", "127.0.0.1", "::1", "fd00:ec2::254", "a-b.c-d.example"}) {
    EXPECT_EQ(Ok(Ok(name)), Ok(name)) << name;
  }
}

std::vector<std::uint8_t> Wire(std::vector<std::string> labels) {
  std::vector<std::uint8_t> out;
  for (const auto& l : labels) {
    out.push_back(static_cast<std::uint8_t>(l.size()));
    out.insert(out.end(), l.begin(), l.end());
  }
  out.push_back(0);
  return out;
}

TEST(DnsName, WireNamesAreCheckedLabelByLabel) {
  std::string why;
  auto ok = Wire({"Wiki", "acmecorp", "com"});
  EXPECT_EQ(CanonicalWireName(ok.data(), ok.size(), &why), "wiki.acmecorp.com");
  auto root = Wire({});
  EXPECT_EQ(CanonicalWireName(root.data(), root.size(), &why), ".");
  // A '.' byte inside one label must not become a label boundary.
  auto dotted = Wire({"evil.test", "allowed", "test"});
  EXPECT_FALSE(CanonicalWireName(dotted.data(), dotted.size(), &why));
  EXPECT_EQ(why, "not a valid DNS name: '.' byte inside the label at offset 4");
  auto nul = Wire({"evil\0x"s, "allowed", "test"});
  EXPECT_FALSE(CanonicalWireName(nul.data(), nul.size(), &why));
  EXPECT_EQ(why, "not a valid DNS name: NUL byte at offset 4");
  auto truncated = Wire({"allowed", "test"});
  truncated.pop_back();
  EXPECT_FALSE(CanonicalWireName(truncated.data(), truncated.size(), &why));
  std::vector<std::uint8_t> compressed{0xc0, 0x0c};
  EXPECT_FALSE(CanonicalWireName(compressed.data(), compressed.size(), &why));
}

TEST(DnsName, PrintableBytesEscapesAndCuts) {
  EXPECT_EQ(PrintableBytes("evil.test\0.allowed.test"s), "evil.test\\x00.allowed.test");
  EXPECT_EQ(PrintableBytes("a\"b\\c\xff"), "a\\\"b\\\\c\\xff");
  EXPECT_EQ(PrintableBytes(std::string(300, 'x'), 253), std::string(253, 'x') + "...(47 more bytes)");
  // Escapes count towards the limit: 60,000 NUL bytes give a short line.
  std::string nuls = PrintableBytes(std::string(60000, '\0'), 253);
  EXPECT_LE(nuls.size(), 253u + 3 + 32) << nuls.size();
  EXPECT_NE(nuls.find("more bytes)"), std::string::npos);
}

// The rules see only canonical names, and allow_host entries are put in the
// same form: a trailing dot or upper case in an entry changes nothing.
TEST(DnsName, AllowHostEntriesAreCanonicalToo) {
  NetworkSpec n;
  n.mode = NetworkSpec::Mode::kAllowList;
  n.allow_hosts = {".Allowed.TEST.", "Exact.Example.", "[::1]"};
  auto rules = EgressRules::FromSpec(n);
  EXPECT_EQ(rules.hosts, (std::vector<std::string>{".allowed.test", "exact.example", "::1"}));
  EXPECT_TRUE(MatchConnection(rules, "x.allowed.test", 443).allowed);
  EXPECT_TRUE(MatchConnection(rules, "exact.example", 443).allowed);
  // The NUL name, had it reached the rules, would match the suffix: which is
  // why no raw name may reach them (the proxy and the stub call CanonicalHost first).
  EXPECT_FALSE(CanonicalHost("evil.test\0.allowed.test"s, nullptr));
}

}  // namespace
}  // namespace mcpcell
