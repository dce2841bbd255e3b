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

}  // namespace
}  // namespace mcpcell
