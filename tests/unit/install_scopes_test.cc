// ScopesForInstall (source/install_scopes.h): which of the user's scoped
// registries an npx:// install may use (adv9).
#include "source/install_scopes.h"

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

NpmConfig Config() {
  NpmConfig c;
  c.registry = "https://registry.npmjs.org/";
  c.scopes = {{"@corp", "https://npm.corp.example/api/npm/"},
              {"@corp2", "https://npm.corp.example/api/npm"},
              {"@mirror", "HTTPS://registry.npmjs.org/"}};
  return c;
}

std::string Or(const Result<std::string>& r) { return r.ok() ? *r : "?"; }

TEST(InstallScopesTest, APublicPackageGetsEveryForeignScopePointedAtThePublicRegistry) {
  auto s = ScopesForInstall(Config(), "server-x");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->own, "https://registry.npmjs.org/");
  EXPECT_EQ(s->Env(), (std::vector<std::string>{"npm_config_@corp:registry=https://registry.npmjs.org/",
                                                "npm_config_@corp2:registry=https://registry.npmjs.org/"}));
  EXPECT_EQ(Or(s->ProjectNpmrc()), "");
  std::string hint = s->Hint("server-x");
  EXPECT_NE(hint.find("@corp (https://npm.corp.example)"), std::string::npos) << hint;
  EXPECT_EQ(hint.find("/api/npm"), std::string::npos) << "a path may hold a token: " << hint;
}

TEST(InstallScopesTest, TheScopeAskedForKeepsItsRegistryAndSoDoScopesOfTheSameRegistry) {
  auto s = ScopesForInstall(Config(), "@corp/server");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->own, "https://npm.corp.example/api/npm/");
  // @corp2 names the same registry (no trailing slash): kept; @mirror is another: pointed here.
  EXPECT_EQ(s->Env(), (std::vector<std::string>{"npm_config_@mirror:registry=https://npm.corp.example/api/npm/"}));
}

TEST(InstallScopesTest, NothingToRedirectGivesNoFlagAndNoHint) {
  NpmConfig c;
  c.registry = "https://registry.npmjs.org/";
  auto s = ScopesForInstall(c, "@anything/server");  // an unmapped scope uses the default registry
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->own, "https://registry.npmjs.org/");
  EXPECT_EQ(Or(s->ProjectNpmrc()), "");
  EXPECT_TRUE(s->Env().empty());
  EXPECT_EQ(s->Hint("@anything/server"), "");
}

TEST(InstallScopesTest, AnUnreadableScopeUrlIsRedirectedAndAnUnreadableOwnRegistryRefused) {
  NpmConfig c = Config();
  c.scopes["@odd"] = "ftp://x/";
  auto s = ScopesForInstall(c, "x");
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->Hint("x").find("@odd (a URL mcpcell cannot read)"), std::string::npos);
  EXPECT_FALSE(ScopesForInstall(c, "@odd/server").ok());
  c.registry = "file:///etc/";
  EXPECT_FALSE(ScopesForInstall(c, "x").ok());
}

// npm reads npm_config_@my_org:registry as "@my-org:registry": such a
// scope is pointed away in the install prefix's .npmrc instead — not by a
// flag, which put the registry URL (a path token and all) on npm's command
// line and in mcpcell's failure message (adv14).
TEST(InstallScopesTest, AScopeWithAnUnderscoreGoesInTheProjectNpmrcNotAVariableOrAFlag) {
  NpmConfig c = Config();
  c.scopes["@my_org"] = "https://npm.corp.example/x/";
  auto s = ScopesForInstall(c, "server-x");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Or(s->ProjectNpmrc()), "@my_org:registry=https://registry.npmjs.org/\n");
  EXPECT_EQ(s->Env().size(), 2u);
}

// npm's ini reader ends a value at ';' or '#' and expands ${VAR}.
TEST(InstallScopesTest, TheProjectNpmrcValueIsEscapedForNpmsIniReaderOrRefused) {
  InstallScopes s{"https://npm.example/a;b#c\\d/", {{"@a_b", "https://elsewhere.example/"}}};
  EXPECT_EQ(Or(s.ProjectNpmrc()), "@a_b:registry=https://npm.example/a\\;b\\#c\\\\d/\n");
  s.own = "https://npm.example/${HOME}/";
  EXPECT_FALSE(s.ProjectNpmrc().ok());
  s.own = "https://npm.example/a\nb/";
  EXPECT_FALSE(s.ProjectNpmrc().ok());
  s.redirect[0].scope = "@ab";  // no '_': no file, nothing to refuse
  EXPECT_EQ(Or(s.ProjectNpmrc()), "");
}

}  // namespace
}  // namespace mcpcell
