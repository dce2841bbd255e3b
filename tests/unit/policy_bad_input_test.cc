// A table of malformed policies and profiles, each refused with a message
// that names the file and the line:column or JSON path, and what was expected.
#include <gtest/gtest.h>

#include "policy/policy.h"
#include "profile/permission_profile.h"

namespace mcpcell {
namespace {

struct BadCase {
  const char* what;
  bool profile;  // false: a policy
  const char* text;
  const char* message;  // the full expected Error::Message()
};

const BadCase kCases[] = {
    {"bad JSON, line and column", false, "{\n  \"rules\": [\n    {\"condition\": always}\n  ]\n}",
     "p.json:3:19: invalid JSON: syntax error while parsing value - invalid literal; last read: '\"condition\": a'"},
    {"trailing comma", false, "{\"rules\": [],}",
     "p.json:1:14: invalid JSON: syntax error while parsing object key - unexpected '}'; expected string literal"},
    {"unknown top-level key", false, R"({"rulez": []})",
     "p.json: at $.rulez: unknown key \"rulez\" (allowed here: $schema, version, description, trusted_sources, trusted_tiers, rules, default)"},
    {"unknown condition", false, R"({"rules": [{"condition": "untrusted", "action": "isolate"}]})",
     "p.json: at $.rules[0].condition: unknown condition \"untrusted\"; expected one of always, untrusted_source, unpinned_version, not_in_registry, requests_network, requests_write, {\"source\": ...}, {\"name\": ...}, {\"registry_tier\": ...}, {\"all\": [...]}, {\"any\": [...]}, {\"not\": ...}"},
    {"unknown action", false, R"({"rules": [{"condition": "always", "action": "sandbox"}]})",
     "p.json: at $.rules[0].action: unknown action \"sandbox\"; expected one of isolate, deny, warn, allow"},
    {"rules not an array", false, R"({"rules": {"condition": "always"}})",
     "p.json: at $.rules: expected an array of rules, got object {\"condition\":\"always\"}"},
    {"action wrong type", false, R"({"rules": [{"condition": "always", "action": 1}]})",
     "p.json: at $.rules[0].action: expected one of isolate, deny, warn, allow, got number 1"},
    {"missing condition", false, R"({"rules": [{"action": "deny"}]})",
     "p.json: at $.rules[0]: missing \"condition\" (write \"always\" for a rule that always applies)"},
    {"unknown key in a rule", false, R"({"rules": [{"condition": "always", "action": "deny", "reason": "x"}]})",
     "p.json: at $.rules[0].reason: unknown key \"reason\" (allowed here: name, condition, action, profile, level, message)"},
    {"profile on deny is contradictory", false, R"({"rules": [{"condition": "always", "action": "deny", "profile": "none"}]})",
     "p.json: at $.rules[0].profile: contradictory: \"profile\" only applies to action isolate, not deny"},
    {"unknown level", false, R"({"rules": [{"condition": "always", "action": "isolate", "level": "vm"}]})",
     "p.json: at $.rules[0].level: unknown level \"vm\"; expected native, container, gvisor or auto"},
    {"warn as default", false, R"({"default": "warn"})",
     "p.json: at $.default: the default cannot be warn: warn goes on to the next rule and there is none; use isolate or deny"},
    {"source glob that cannot match", false, R"({"trusted_sources": ["@modelcontextprotocol/*"]})",
     "p.json: at $.trusted_sources[0]: glob \"@modelcontextprotocol/*\" can never match: sources are written npx://PKG[@VER], uvx://PKG[@VER], docker://IMAGE[:TAG][@DIGEST] or command://PATH, e.g. \"npx://@modelcontextprotocol/*\""},
    {"name glob with an open bracket", false, R"({"rules": [{"condition": {"name": "srv-[ab"}, "action": "deny"}]})",
     "p.json: at $.rules[0].condition.name: glob \"srv-[ab\" has an unclosed '[' and can never match"},
    {"unknown source kind", false, R"({"rules": [{"condition": {"source": "pip"}, "action": "deny"}]})",
     "p.json: at $.rules[0].condition.source: unknown source kind \"pip\"; expected npx, uvx, docker or command"},
    {"empty all", false, R"({"rules": [{"condition": {"all": []}, "action": "deny"}]})",
     "p.json: at $.rules[0].condition.all: an empty \"all\" list is ambiguous; give at least one condition"},
    {"two keys in a condition", false, R"({"rules": [{"condition": {"source": "npx", "name": "x"}, "action": "deny"}]})",
     "p.json: at $.rules[0].condition: a condition object has exactly one key; combine several with {\"all\": [...]}"},
    {"missing profile file", false, R"({"rules": [{"condition": "always", "action": "isolate", "profile": "./nope.json"}]})",
     "read permission profile nope.json: No such file or directory (ENOENT) — named by p.json at $.rules[0].profile"},
    {"privileged profile", true, R"({"privileged": true})",
     "f.json: at $.privileged: privileged: true is refused — mcpcell never runs a server with host privileges; remove the key or set it to false"},
    {"wildcard host", true, R"({"network": {"outbound": {"allow_host": ["*.github.com"]}}})",
     "f.json: at $.network.outbound.allow_host[0]: wildcard host \"*.github.com\" can never match; write \".github.com\" for a domain and every name below it"},
    {"URL as host", true, R"({"network": {"outbound": {"allow_host": ["https://x.com/"]}}})",
     "f.json: at $.network.outbound.allow_host[0]: \"https://x.com/\" is not a host name, \".domain\" or IP address (no scheme, port or path: write \"example.com\", not \"https://example.com/\"; ports go in allow_port (only the host's loopback takes a port here: \"localhost:5432\"))"},
    {"port out of range", true, R"({"network": {"outbound": {"allow_port": [443, 70000]}}})",
     "f.json: at $.network.outbound.allow_port[1]: expected a port number 1-65535, got number 70000"},
    {"port as string", true, R"({"network": {"outbound": {"allow_port": ["443"]}}})",
     "f.json: at $.network.outbound.allow_port[0]: expected a port number 1-65535, got string \"443\""},
    {"allow all plus hosts", true, R"({"network": {"outbound": {"insecure_allow_all": true, "allow_host": ["a.com"]}}})",
     "f.json: at $.network.outbound: contradictory: insecure_allow_all allows every host and port, so allow_host/allow_port would be ignored; remove one or the other"},
    {"relative read path", true, R"({"read": ["data"]})",
     "f.json: at $.read[0]: \"data\": expected an absolute path \"/dir\" or \"/host/dir:/cell/dir\""},
    {"unknown profile key", true, R"({"network": {"outbound": {}}, "volumes": []})",
     "f.json: at $.volumes: unknown key \"volumes\" (allowed here: name, read, write, network, privileged, mcpcell)"},
    {"read as a string", true, R"({"read": "/data"})",
     "f.json: at $.read: expected an array of strings, got string \"/data\""},
    {"bad extension size", true, R"({"mcpcell": {"memory": "lots"}})",
     "f.json: at $.mcpcell.memory: \"lots\" is not a size (\"512m\", \"1g\")"},
    {"relative secret file", true, R"({"mcpcell": {"secrets": {"TOKEN": "token.txt"}}})",
     "f.json: at $.mcpcell.secrets.TOKEN: expected the absolute path of the host file holding the secret"},
    {"profile bad JSON", true, "{\"read\": [\"/a\"\n \"/b\"]}",
     "f.json:2:5: invalid JSON: syntax error while parsing array - unexpected string literal; expected ']'"},
};

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, IsRefusedWithItsMessage) {
  const BadCase& c = GetParam();
  std::string message;
  if (c.profile) {
    auto p = ParseProfile(c.text, "f.json");
    ASSERT_FALSE(p.ok()) << c.what;
    message = p.error().Message();
  } else {
    auto p = ParsePolicy(c.text, "p.json", ".");
    ASSERT_FALSE(p.ok()) << c.what;
    message = p.error().Message();
  }
  EXPECT_EQ(message, c.message) << c.what;
}

INSTANTIATE_TEST_SUITE_P(Table, BadInput, ::testing::ValuesIn(kCases));

TEST(BadInputTable, HasAtLeastFifteenCases) { EXPECT_GE(std::size(kCases), 15u); }

TEST(PolicyFile, MissingFileNamesThePath) {
  auto p = LoadPolicy("/nonexistent/policy.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().Message(), "read policy file /nonexistent/policy.json: No such file or directory (ENOENT)");
}

// A number beyond double's range is refused with the number, not thrown out
// of the parser (it ended mcpcell in std::terminate; found by fuzzing).
TEST(PolicyFile, NumberOverflowIsRefusedNotThrown) {
  auto p = ParsePolicy(R"({"version": 1e309})", "p.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().Message(), "p.json: invalid JSON: number overflow parsing '1e309'");
  auto q = ParseProfile(R"({"mcpcell": {"cpus": -65531e309}})", "prof.json");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().Message(), "prof.json: invalid JSON: number overflow parsing '-65531e309'");
}

// A file that never ends (or is huge) is refused, not read until memory runs
// out: a policy naming /dev/zero as a profile, as the policy fuzz target can.
TEST(PolicyFile, EndlessFilesAreRefusedNotRead) {
  auto p = LoadPolicy("/dev/zero");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().Message(), "read policy file /dev/zero: larger than 16 MiB; not read");
  auto q = ParsePolicy(R"({"rules": [{"condition": "always", "action": "isolate", "profile": "/dev/zero"}]})", "p.json");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().Message().find("read permission profile /dev/zero: larger than 16 MiB"), std::string::npos)
      << q.error().Message();
}

}  // namespace
}  // namespace mcpcell
