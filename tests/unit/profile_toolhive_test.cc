// ToolHive's documented profiles parse unchanged and lower to the expected CellSpec pieces.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "profile/lower.h"
#include "profile/permission_profile.h"
#include "temp_dir.h"

namespace mcpcell {
namespace {

TEST(ToolHiveProfiles, FetchExampleBecomesAnAllowListEnforcedByTheEgressProxy) {
  auto p = ParseProfile(R"({
    "network": {"outbound": {"insecure_allow_all": false,
                             "allow_host": ["localhost", ".acmecorp.com", "acmecorp.atlassian.net"],
                             "allow_port": [80, 443]}}})",
                        "fetch.json");
  ASSERT_TRUE(p.ok()) << p.error().Message();
  EXPECT_TRUE(p->RequestsNetwork());
  auto net = LowerNetwork(*p, {}, {});
  ASSERT_TRUE(net.ok());
  EXPECT_EQ(net->spec.mode, NetworkSpec::Mode::kAllowList);
  // "localhost" is the host's loopback (issue 14 item 3): paired with every
  // allow_port, as ToolHive pairs every host with every port, and kept out of
  // the host rules (it never names 127.0.0.1 for the address check).
  EXPECT_EQ(net->spec.allow_hosts, (std::vector<std::string>{".acmecorp.com", "acmecorp.atlassian.net"}));
  EXPECT_EQ(net->spec.allow_ports, (std::vector<std::uint16_t>{80, 443}));
  EXPECT_EQ(net->spec.host_ports, (std::vector<HostLoopbackPort>{{"localhost", 80}, {"localhost", 443}}));
  EXPECT_NE(net->enforced.find("the host's loopback on localhost:80, localhost:443 only"), std::string::npos)
      << net->enforced;
  EXPECT_TRUE(net->warnings.empty());
  EXPECT_NE(net->enforced.find("enforced: the cell's only way out is mcpcell's egress proxy"), std::string::npos)
      << net->enforced;
}

TEST(ToolHiveProfiles, GitHubEnterpriseWithLegacyTransportIsAcceptedWithAWarning) {
  auto p = ParseProfile(R"({"network": {"outbound": {"insecure_allow_all": false, "allow_transport": ["tcp"],
                                                       "allow_host": ["github.example.com"], "allow_port": [443]}}})",
                        "github-profile.json");
  ASSERT_TRUE(p.ok()) << p.error().Message();
  ASSERT_EQ(p->warnings.size(), 1u);
  EXPECT_NE(p->warnings[0].find("allow_transport is obsolete"), std::string::npos);
  auto net = LowerNetwork(*p, {}, {});
  ASSERT_TRUE(net.ok());
  EXPECT_EQ(net->spec.mode, NetworkSpec::Mode::kAllowList);
  EXPECT_EQ(net->spec.allow_hosts, std::vector<std::string>{"github.example.com"});
  EXPECT_EQ(net->spec.allow_ports, std::vector<std::uint16_t>{443});
}

TEST(ToolHiveProfiles, CustomProfileWithReadWriteLowersToBinds) {
  auto p = ParseProfile(R"({"read": ["/example/path1", "/example/path2"], "write": ["/example/path3"],
                            "network": {"outbound": {"insecure_allow_all": false, "allow_transport": ["tcp", "udp"],
                                                      "allow_host": ["localhost", ".google.com"], "allow_port": [80, 443]}}})",
                        "custom.json");
  ASSERT_TRUE(p.ok()) << p.error().Message();
  RunRequest req;
  req.read = {"/mine"};
  RunRequest merged = MergeProfile(*p, req);
  EXPECT_EQ(merged.read, (std::vector<std::string>{"/example/path1", "/example/path2", "/mine"}));
  EXPECT_EQ(merged.write, std::vector<std::string>{"/example/path3"});
  EXPECT_TRUE(p->RequestsWrite());
}

TEST(ToolHiveProfiles, BuiltInNoneAndNetwork) {
  auto none = LoadProfile("none");
  ASSERT_TRUE(none.ok());
  auto n = LowerNetwork(*none, {}, {});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->spec.mode, NetworkSpec::Mode::kNone);
  EXPECT_TRUE(n->warnings.empty());
  EXPECT_FALSE(none->RequestsNetwork());
  auto network = LoadProfile("network");
  ASSERT_TRUE(network.ok());
  auto o = LowerNetwork(*network, {}, {});
  ASSERT_TRUE(o.ok());
  // Audit-only: every host and port, but through the egress proxy, never the host's network.
  EXPECT_EQ(o->spec.mode, NetworkSpec::Mode::kAllowList);
  EXPECT_TRUE(o->spec.allow_all);
  ASSERT_FALSE(o->warnings.empty());
  EXPECT_NE(o->warnings[0].find("network is OPEN"), std::string::npos);
  // An empty outbound section is ToolHive's "deny all".
  auto empty = ParseProfile(R"({"network": {"outbound": {}}})", "e.json");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(LowerNetwork(*empty, {}, {})->spec.mode, NetworkSpec::Mode::kNone);
}

TEST(ToolHiveProfiles, FlagsAddHostsAndPortsAndAreChecked) {
  auto none = *BuiltinProfile("none");
  auto net = LowerNetwork(none, {"api.example.com"}, {"443"});
  ASSERT_TRUE(net.ok());
  EXPECT_EQ(net->spec.mode, NetworkSpec::Mode::kAllowList);
  EXPECT_FALSE(LowerNetwork(none, {"*.example.com"}, {}).ok());
  EXPECT_FALSE(LowerNetwork(none, {}, {"0"}).ok());
  EXPECT_FALSE(LowerNetwork(none, {}, {"443x"}).ok());
}

TEST(McpcellExtension, LimitsEnvSecretsAndToolsFoldIntoTheRequestFlagsWin) {
  auto p = ParseProfile(R"({"read": ["/data"], "mcpcell": {"memory": "256m", "pids": 64, "cpus": 0.5,
      "timeout": "30s", "env": {"LOG_LEVEL": "debug"}, "secrets": {"TOKEN": "/run/user/token"},
      "secret_env": {"TOKEN": "API_TOKEN"}, "tools": {"deny": ["delete_*"]}}})",
                        "ext.json");
  ASSERT_TRUE(p.ok()) << p.error().Message();
  RunRequest req;
  req.memory = "512m";
  req.env = {"LOG_LEVEL=info"};
  RunRequest m = MergeProfile(*p, req);
  EXPECT_EQ(m.memory, std::optional<std::string>("512m"));  // the flag wins
  EXPECT_EQ(m.pids, std::optional<std::string>("64"));
  EXPECT_EQ(m.cpus, std::optional<std::string>("0.5"));
  EXPECT_EQ(m.timeout, std::optional<std::string>("30s"));
  EXPECT_EQ(m.env, (std::vector<std::string>{"LOG_LEVEL=debug", "LOG_LEVEL=info"}));
  EXPECT_EQ(m.secrets, std::vector<std::string>{"TOKEN=/run/user/token"});
  EXPECT_EQ(m.secret_env, std::vector<std::string>{"TOKEN=API_TOKEN"});
  EXPECT_EQ(p->ext.tools_deny, std::vector<std::string>{"delete_*"});
}

TEST(Secrets, FilesBecomeSecretSpecsAndEnvOnlyWhenAsked) {
  testing::TempDir dir("profile-secret-test");
  std::string file = std::filesystem::path(dir.File("secret")).lexically_normal().string();
  std::ofstream(file) << "s3cr3t";
  auto s = LowerSecrets({"TOKEN=" + file}, {});
  ASSERT_TRUE(s.ok()) << s.error().Message();
  ASSERT_EQ(s->size(), 1u);
  EXPECT_EQ((*s)[0].name, "TOKEN");
  EXPECT_EQ((*s)[0].host_file, file);
  EXPECT_FALSE((*s)[0].env_name.has_value());
  auto e = LowerSecrets({"TOKEN=" + file}, {"TOKEN=GITHUB_TOKEN"});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)[0].env_name, std::optional<std::string>("GITHUB_TOKEN"));
  EXPECT_FALSE(LowerSecrets({"TOKEN"}, {}).ok());
  EXPECT_FALSE(LowerSecrets({"../x=" + file}, {}).ok());
  EXPECT_FALSE(LowerSecrets({"T=/nonexistent/file"}, {}).ok());
  auto unknown = LowerSecrets({}, {"NOPE"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().Message().find("no secret named 'NOPE'"), std::string::npos);
}

}  // namespace
}  // namespace mcpcell
