// Each condition and action, first match, warn falling through, default,
// deny naming its rule, allow only by a rule.
#include <gtest/gtest.h>

#include "policy/evaluate.h"
#include "policy/policy.h"

namespace mcpcell {
namespace {

Policy P(const std::string& text) {
  auto p = ParsePolicy(text, "p.json");
  EXPECT_TRUE(p.ok()) << p.error().Message();
  return p.ok() ? *p : Policy{};
}

TrustFacts Npx(const std::string& name, const std::string& version = "") {
  TrustFacts f;
  f.kind = ServerRef::Kind::kNpx;
  f.name = name;
  f.version = version;
  f.pinned = !version.empty();
  f.source = "npx://" + name + (version.empty() ? "" : "@" + version);
  return f;
}

TrustFacts InRegistry(TrustFacts f, const std::string& entry, const std::string& tier, bool pinned) {
  f.in_registry = true;
  f.registry_name = entry;
  f.registry_tier = tier;
  f.registry_pinned = pinned;
  return f;
}

bool Holds(const std::string& condition, const TrustFacts& f, const std::string& extra = "") {
  Policy p = P("{" + extra + R"("rules": [{"condition": )" + condition + R"(, "action": "deny"}]})");
  return EvaluatePolicy(p, f).action == PolicyAction::Kind::kDeny;
}

// adv13: a version wildcard stands for exact versions only; npm resolves a
// range after the decision, to a version the glob never named.
TEST(PolicyEval, AVersionWildcardDoesNotTrustARange) {
  const std::string globs = R"("trusted_sources": ["npx://p@1.0.*", "npx://@s/q@2.*", "npx://r"],)";
  EXPECT_FALSE(Holds(R"("untrusted_source")", Npx("p", "1.0.7"), globs));
  TrustFacts range = Npx("p", "1.0.0||9.0.0");
  range.pinned = false;
  EXPECT_TRUE(Holds(R"("untrusted_source")", range, globs));
  TrustFacts scoped = Npx("@s/q", ">=2.0.0");
  scoped.pinned = false;
  EXPECT_TRUE(Holds(R"("untrusted_source")", scoped, globs));
  TrustFacts any = Npx("r", "^1.0.0");  // a glob without a version trusts every version of it
  any.pinned = false;
  EXPECT_FALSE(Holds(R"("untrusted_source")", any, globs));
  TrustFacts spelled = Npx("p", "1.0.x");  // the glob spells no range: the wildcard is not stretched
  spelled.pinned = false;
  EXPECT_FALSE(Holds(R"("untrusted_source")", spelled, R"("trusted_sources": ["npx://p@1.0.x"],)"));
}

TEST(PolicyEval, SeedPolicyIsolatesAnUntrustedSourceByRule0) {
  Policy p = P(R"({ "rules": [{ "condition": "untrusted_source", "action": "isolate" }] })");
  Decision d = EvaluatePolicy(p, Npx("@modelcontextprotocol/server-filesystem"));
  EXPECT_EQ(d.action, PolicyAction::Kind::kIsolate);
  EXPECT_EQ(d.rule_index, 0);
  EXPECT_EQ(d.rule, "rule 0");
  EXPECT_NE(d.reason.find("matches no trusted_sources glob"), std::string::npos) << d.reason;
}

TEST(PolicyEval, UntrustedSource) {
  EXPECT_TRUE(Holds(R"("untrusted_source")", Npx("@x/y")));
  EXPECT_FALSE(Holds(R"("untrusted_source")", Npx("@x/y"), R"("trusted_sources": ["npx://@x/*"],)"));
  EXPECT_TRUE(Holds(R"("untrusted_source")", Npx("@z/y"), R"("trusted_sources": ["npx://@x/*"],)"));
  // A pinned registry entry of a trusted tier is trusted; unpinned or the wrong tier is not.
  EXPECT_FALSE(Holds(R"("untrusted_source")", InRegistry(Npx("@x/y", "1.0.0"), "y", "official", true)));
  EXPECT_TRUE(Holds(R"("untrusted_source")", InRegistry(Npx("@x/y"), "y", "official", false)));
  EXPECT_TRUE(Holds(R"("untrusted_source")", InRegistry(Npx("@x/y", "1.0.0"), "y", "community", true)));
  EXPECT_FALSE(Holds(R"("untrusted_source")", InRegistry(Npx("@x/y", "1.0.0"), "y", "community", true),
                     R"("trusted_tiers": ["community"],)"));
}

TEST(PolicyEval, UnpinnedVersionNotInRegistryAndRequests) {
  EXPECT_TRUE(Holds(R"("unpinned_version")", Npx("a")));
  EXPECT_FALSE(Holds(R"("unpinned_version")", Npx("a", "1.2.3")));
  TrustFacts cmd;
  cmd.kind = ServerRef::Kind::kCommand;
  cmd.name = "/usr/bin/node";
  EXPECT_FALSE(Holds(R"("unpinned_version")", cmd));
  EXPECT_TRUE(Holds(R"("not_in_registry")", Npx("a")));
  EXPECT_FALSE(Holds(R"("not_in_registry")", InRegistry(Npx("a"), "a", "official", false)));
  TrustFacts net = Npx("a");
  EXPECT_FALSE(Holds(R"("requests_network")", net));
  net.requests_network = true;
  EXPECT_TRUE(Holds(R"("requests_network")", net));
  EXPECT_FALSE(Holds(R"("requests_write")", net));
  net.requests_write = true;
  EXPECT_TRUE(Holds(R"({"requests_write": true})", net));
  EXPECT_TRUE(Holds(R"("always")", net));
}

TEST(PolicyEval, SourceNameTier) {
  EXPECT_TRUE(Holds(R"({"source": "npx"})", Npx("a")));
  EXPECT_TRUE(Holds(R"({"source": ["docker", "npx"]})", Npx("a")));
  EXPECT_FALSE(Holds(R"({"source": "uvx"})", Npx("a")));
  EXPECT_TRUE(Holds(R"({"name": "@modelcontextprotocol/*"})", Npx("@modelcontextprotocol/server-memory")));
  EXPECT_FALSE(Holds(R"({"name": "@evil/*"})", Npx("@modelcontextprotocol/server-memory")));
  EXPECT_TRUE(Holds(R"({"name": "memory"})", InRegistry(Npx("@m/server-memory"), "memory", "official", false)));
  TrustFacts cmd;
  cmd.kind = ServerRef::Kind::kCommand;
  cmd.name = "/opt/srv/bin/my-server";
  EXPECT_TRUE(Holds(R"({"name": "my-*"})", cmd));
  EXPECT_TRUE(Holds(R"({"registry_tier": "official"})", InRegistry(Npx("a"), "a", "official", false)));
  EXPECT_FALSE(Holds(R"({"registry_tier": ["verified", "community"]})", InRegistry(Npx("a"), "a", "official", false)));
  EXPECT_FALSE(Holds(R"({"registry_tier": "official"})", Npx("a")));
}

TEST(PolicyEval, Combinators) {
  TrustFacts f = Npx("@x/y");
  EXPECT_TRUE(Holds(R"({"all": ["unpinned_version", {"source": "npx"}]})", f));
  EXPECT_FALSE(Holds(R"({"all": ["unpinned_version", {"source": "docker"}]})", f));
  EXPECT_TRUE(Holds(R"({"any": [{"source": "docker"}, "unpinned_version"]})", f));
  EXPECT_FALSE(Holds(R"({"any": [{"source": "docker"}, "requests_network"]})", f));
  EXPECT_TRUE(Holds(R"({"not": {"source": "docker"}})", f));
  EXPECT_FALSE(Holds(R"({"not": "always"})", f));
}

TEST(PolicyEval, FirstMatchDecidesAndLaterRulesAreNotReached) {
  Policy p = P(R"({"rules": [
      {"condition": {"source": "docker"}, "action": "deny"},
      {"name": "npx-in-cell", "condition": {"source": "npx"}, "action": "isolate", "level": "native", "profile": "network"},
      {"condition": "always", "action": "deny"}]})");
  Decision d = EvaluatePolicy(p, Npx("a"));
  EXPECT_EQ(d.action, PolicyAction::Kind::kIsolate);
  EXPECT_EQ(d.rule, "rule 1 \"npx-in-cell\"");
  EXPECT_EQ(d.level, "native");
  EXPECT_EQ(d.profile, std::optional<std::string>("network"));
  ASSERT_EQ(d.trace.size(), 3u);
  EXPECT_EQ(d.trace[0].state, RuleTrace::State::kNotHeld);
  EXPECT_EQ(d.trace[1].state, RuleTrace::State::kHeld);
  EXPECT_EQ(d.trace[2].state, RuleTrace::State::kNotReached);
}

TEST(PolicyEval, WarnRecordsAndFallsThrough) {
  Policy p = P(R"({"rules": [
      {"condition": "unpinned_version", "action": "warn", "message": "pin it"},
      {"condition": "always", "action": "isolate"}]})");
  Decision d = EvaluatePolicy(p, Npx("a"));
  EXPECT_EQ(d.action, PolicyAction::Kind::kIsolate);
  EXPECT_EQ(d.rule_index, 1);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0], "p.json rule 0: pin it");
}

TEST(PolicyEval, DefaultAppliesWhenNoRuleHolds) {
  Policy p = P(R"({"rules": [{"condition": {"source": "docker"}, "action": "allow"}], "default": "deny"})");
  Decision d = EvaluatePolicy(p, Npx("a"));
  EXPECT_EQ(d.action, PolicyAction::Kind::kDeny);
  EXPECT_EQ(d.rule, "default");
  EXPECT_EQ(d.rule_index, -1);
  Policy q = P(R"({"rules": []})");
  EXPECT_EQ(EvaluatePolicy(q, Npx("a")).action, PolicyAction::Kind::kIsolate);  // default default: isolate
}

TEST(PolicyEval, DenyNamesTheRule) {
  Policy p = P(R"({"rules": [{"name": "no-docker", "condition": {"source": "docker"}, "action": "deny",
                              "message": "images are not vetted here"}]})");
  TrustFacts f;
  f.kind = ServerRef::Kind::kDocker;
  f.name = "mcp/fetch";
  f.source = "docker://mcp/fetch";
  Decision d = EvaluatePolicy(p, f);
  EXPECT_EQ(d.action, PolicyAction::Kind::kDeny);
  EXPECT_EQ(d.rule, "rule 0 \"no-docker\"");
  EXPECT_NE(d.reason.find("p.json rule 0 \"no-docker\" (deny)"), std::string::npos) << d.reason;
  EXPECT_EQ(d.message, "images are not vetted here");
}

TEST(PolicyEval, AllowOnlyByARule) {
  Policy p = P(R"({"rules": [{"condition": {"name": "trusted-*"}, "action": "allow"}]})");
  EXPECT_EQ(EvaluatePolicy(p, Npx("trusted-one")).action, PolicyAction::Kind::kAllow);
  EXPECT_EQ(EvaluatePolicy(p, Npx("other")).action, PolicyAction::Kind::kIsolate);
  EXPECT_FALSE(ParsePolicy(R"({"default": "allow"})", "p.json").ok());
}

TEST(PolicyEval, BuiltInDefaultIsolatesEverything) {
  Policy p = DefaultPolicy();
  EXPECT_EQ(p.origin, "built-in default");
  for (const TrustFacts& f : {Npx("a"), Npx("b", "1.0.0"), InRegistry(Npx("c", "1.0.0"), "c", "official", true)}) {
    Decision d = EvaluatePolicy(p, f);
    EXPECT_EQ(d.action, PolicyAction::Kind::kIsolate) << f.source;
  }
  EXPECT_EQ(EvaluatePolicy(p, Npx("a")).warnings.size(), 1u);  // unpinned is noted
}

}  // namespace
}  // namespace mcpcell
