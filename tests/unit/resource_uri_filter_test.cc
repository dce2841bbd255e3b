// The resource rules (mcpcell.resources) judge the URI a WHATWG URL parser
// will read, not only the bytes sent: the TypeScript SDK's McpServer looks a
// resource up by `new URL(uri).toString()`. Every spelling below was read
// through a deny rule before (adversary pass, tests/e2e/adv_filters.test.mjs).

#include <gtest/gtest.h>

#include "relay/tool_filter.h"

namespace mcpcell {
namespace {

ToolFilter Resources(std::vector<std::string> deny, std::vector<std::string> allow = {}) {
  return ToolFilter(ToolRules{std::move(allow), std::move(deny), "profile p.json", "resource", "mcpcell.resources"});
}

TEST(ResourceUriFilter, SpellingsAParserCanonicalisesAreRefused) {
  ToolFilter f = Resources({"test://secrets/*", "file:///srv/*", "http://internal.example/*"});
  for (const char* uri : {" test://secrets/key", "test://secrets/key ", "file://localhost/srv/secret.txt",
                          "file://LOCALHOST/srv/secret.txt", "file:/srv/secret.txt", "file:srv/secret.txt",
                          "FILE:srv/secret.txt", "file:////srv/secret.txt", "http:internal.example/admin",
                          "http:/internal.example/admin", "http://internal.example:80/admin",
                          "http://internal.example:080/admin", "http://internal.example:/admin",
                          "https://internal.example:443/admin", "http://\xef\xbd\x89nternal.example/admin",
                          "http://internal.example./admin", "http://u@internal.example/admin",
                          "http://2130706433/admin", "http://0x7f.1/admin", "http://127.1/admin",
                          "http://127.000.0.1/admin", "test://secrets//key",
                          "test://secrets:/key", "test://@secrets/key", "test://:@secrets/key", "test://secrets:00/key",
                          "http://internal.example", "http://internal.example?x", "http://internal.example#x", "file://"}) {
    auto why = f.Denial(uri);
    EXPECT_TRUE(why.has_value()) << uri;
  }
}

TEST(ResourceUriFilter, PlainUrisAreJudgedByTheGlobsAlone) {
  ToolFilter f = Resources({"test://secrets/*"});
  for (const char* uri : {"test://docs/readme", "file:///srv/a.txt", "http://example.com:8080/x", "http://127.0.0.1/x",
                          "https://[::1]:8443/x", "https://example.com/a?b=c#d", "urn:isbn:0451450523",
                          "test:opaque/path", "memo://insights", "http://example.com/é",
                          "test://secrets:1/key"}) {
    EXPECT_EQ(f.Denial(uri), std::nullopt) << uri;
  }
  EXPECT_TRUE(f.Denial("test://secrets/key").has_value());
}

TEST(ResourceUriFilter, AQueryOrFragmentDoesNotLeaveAnExactDenyRule) {
  ToolFilter f = Resources({"file:///srv/key"});
  for (const char* uri : {"file:///srv/key", "file:///srv/key?", "file:///srv/key?x=1", "file:///srv/key#", "file:///srv/key#a"}) {
    EXPECT_TRUE(f.Denial(uri).has_value()) << uri;
  }
  EXPECT_EQ(f.Denial("file:///srv/keys"), std::nullopt);
}

TEST(ResourceUriFilter, TheRefusalSaysWhatToSend) {
  auto why = Resources({"file:///srv/*"}).Denial("file://localhost/srv/x");
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("localhost"), std::string::npos) << *why;
  EXPECT_NE(why->find("send the plain URI"), std::string::npos) << *why;
}

}  // namespace
}  // namespace mcpcell
