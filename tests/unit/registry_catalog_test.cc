// The bundled catalog parses, is big enough, is pinned, and ToolHive entries read.
#include <gtest/gtest.h>

#include <set>

#include "registry/catalog.h"

namespace mcpcell {
namespace {

TEST(Registry, BundledCatalogHasAtLeastTwentyPinnedServers) {
  auto cat = BundledCatalog();
  ASSERT_TRUE(cat.ok()) << cat.error().Message();
  EXPECT_GE(cat->entries().size(), 20u);
  std::set<std::string> tiers;
  for (const auto& e : cat->entries()) {
    EXPECT_TRUE(IsExactVersion(e.source.version)) << e.name << " is not pinned: " << e.source.version;
    EXPECT_FALSE(e.description.empty()) << e.name;
    EXPECT_FALSE(e.permissions.insecure_allow_all && !e.permissions.allow_host.empty()) << e.name;
    tiers.insert(e.tier);
  }
  EXPECT_TRUE(tiers.count("official"));
  EXPECT_NE(cat->Find("filesystem"), nullptr);
  EXPECT_EQ(cat->Find("nonexistent"), nullptr);
}

TEST(Registry, SecretsAreMarked) {
  auto cat = BundledCatalog();
  ASSERT_TRUE(cat.ok());
  const RegistryEntry* gh = cat->Find("github");
  ASSERT_NE(gh, nullptr);
  ASSERT_FALSE(gh->env_vars.empty());
  EXPECT_EQ(gh->env_vars[0].name, "GITHUB_PERSONAL_ACCESS_TOKEN");
  EXPECT_TRUE(gh->env_vars[0].secret);
  EXPECT_EQ(gh->permissions.allow_host, (std::vector<std::string>{"api.github.com", "github.com"}));
}

TEST(Registry, ReadsAToolHiveRegistryEntry) {
  // The shape of an entry in ToolHive's registry.json: image, capitalised tier, metadata.
  auto cat = ParseCatalog(R"({"version": "1.0.0", "last_updated": "2025-06-01T00:00:00Z", "servers": {
    "fetch": {"description": "Fetch web content", "image": "mcp/fetch:latest", "tier": "Official",
              "status": "Active", "transport": "stdio", "tools": ["fetch"],
              "metadata": {"stars": 1, "pulls": 2, "last_updated": "x"},
              "repository_url": "https://github.com/modelcontextprotocol/servers", "tags": ["web"],
              "permissions": {"network": {"outbound": {"insecure_allow_all": true}}},
              "env_vars": [{"name": "X", "description": "d", "required": false}]}}})",
                          "toolhive.json");
  ASSERT_TRUE(cat.ok()) << cat.error().Message();
  const RegistryEntry* e = cat->Find("fetch");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->source.kind, ServerRef::Kind::kDocker);
  EXPECT_EQ(e->source.package, "mcp/fetch");
  EXPECT_EQ(e->tier, "official");
  EXPECT_TRUE(e->permissions.insecure_allow_all);
}

TEST(Registry, BadEntriesNameThePath) {
  auto a = ParseCatalog(R"({"servers": {"x": {"source": "npx://ok@1.0.0", "tier": "gold"}}})", "cat.json");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().Message(), "cat.json: at $.servers.x.tier: expected official, verified or community");
  auto b = ParseCatalog(R"({"servers": {"x": {"source": "npx://ok@1.0.0", "colour": 1}}})", "cat.json");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().Message().find("$.servers.x.colour: unknown key"), std::string::npos);
}

// A member of the wrong type is refused with its path; json::value() threw
// type_error 302 out of the parser (found by the catalog fuzz target).
TEST(Registry, MembersOfTheWrongTypeNameThePath) {
  auto a = ParseCatalog(R"({"servers": {"x": {"source": "npx://ok@1.0.0", "transport": []}}})", "cat.json");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().Message().find("$.servers.x.transport"), std::string::npos) << a.error().Message();
  auto b = ParseCatalog(
      R"({"servers": {"x": {"source": "npx://ok@1.0.0", "env_vars": [{"name": "T", "secret": "yes"}]}}})", "cat.json");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().Message().find("$.servers.x.env_vars[0].secret"), std::string::npos) << b.error().Message();
}

// ToolHive's "args" and env_vars' "default" are used, not accepted and
// ignored; a default on a secret is refused (a value in the catalog is no secret).
TEST(Registry, ArgsDefaultsAndNoticeAreRead) {
  auto cat = ParseCatalog(R"({"servers": {"b": {"source": "npx://b@1.0.0", "args": ["--headless", "--x=1"],
    "notice": "its own sandbox is off",
    "env_vars": [{"name": "B_PATH", "default": "/usr/lib/b"}, {"name": "B_KEY", "secret": true}]}}})", "cat.json");
  ASSERT_TRUE(cat.ok()) << cat.error().Message();
  const RegistryEntry* e = cat->Find("b");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->args, (std::vector<std::string>{"--headless", "--x=1"}));
  EXPECT_EQ(e->notice, "its own sandbox is off");
  ASSERT_EQ(e->env_vars.size(), 2u);
  EXPECT_EQ(e->env_vars[0].default_value, std::optional<std::string>("/usr/lib/b"));
  EXPECT_FALSE(e->env_vars[1].default_value.has_value());

  auto secret = ParseCatalog(R"({"servers": {"b": {"source": "npx://b@1.0.0",
    "env_vars": [{"name": "B_KEY", "secret": true, "default": "sk-1"}]}}})", "cat.json");
  ASSERT_FALSE(secret.ok());
  EXPECT_NE(secret.error().Message().find("$.servers.b.env_vars[0].default: a secret cannot have a default"),
            std::string::npos) << secret.error().Message();
  auto bad_args = ParseCatalog(R"({"servers": {"b": {"source": "npx://b@1.0.0", "args": "--headless"}}})", "cat.json");
  ASSERT_FALSE(bad_args.ok());
  EXPECT_NE(bad_args.error().Message().find("$.servers.b.args"), std::string::npos) << bad_args.error().Message();
}

// Every browser entry runs Debian's Chromium without its own sandbox, and says so.
TEST(Registry, BrowserEntriesCarryWhatAChromiumNeedsInACell) {
  auto cat = BundledCatalog();
  ASSERT_TRUE(cat.ok()) << cat.error().Message();
  for (const char* name : {"playwright", "puppeteer", "chrome-devtools"}) {
    const RegistryEntry* e = cat->Find(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_NE(e->notice.find("sandbox off"), std::string::npos) << name;
    std::string carried;
    for (const auto& a : e->args) carried += a + " ";
    for (const auto& v : e->env_vars) carried += v.name + "=" + v.default_value.value_or("") + " ";
    EXPECT_NE(carried.find("/usr/lib/chromium/chromium"), std::string::npos) << name << ": " << carried;
    EXPECT_EQ(e->requires_paths, (std::vector<std::string>{"/usr/lib/chromium/chromium"})) << name;
    EXPECT_NE(e->requires_hint.find("apt-get install"), std::string::npos) << name;
  }
  auto relative = ParseCatalog(R"({"servers": {"b": {"source": "npx://b@1.0.0", "requires_paths": ["chromium"]}}})", "cat.json");
  ASSERT_FALSE(relative.ok());
  EXPECT_NE(relative.error().Message().find("$.servers.b.requires_paths: \"chromium\" is not an absolute path"),
            std::string::npos) << relative.error().Message();
}

}  // namespace
}  // namespace mcpcell
