// What an interpreter command runs, as the policy judges it (adv8: `node
// server.mjs` was judged as "node", so trusting one script trusted all).
#include <gtest/gtest.h>

#include "policy/evaluate.h"
#include "policy/policy.h"
#include "policy/trust_facts.h"
#include "source/interpreted_script.h"

namespace mcpcell {
namespace {

std::string SourceOf(const std::vector<std::string>& argv) {
  auto s = InterpretedScriptOf(argv, "/srv");
  return s ? s->source : "(not an interpreter)";
}

TEST(InterpretedScript, TheScriptIsTheSourceMadeAbsolute) {
  auto s = InterpretedScriptOf({"node", "server.mjs", "/data"}, "/srv");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->source, "command://node /srv/server.mjs");
  EXPECT_EQ(s->script, "server.mjs");
  EXPECT_EQ(s->script_path, "/srv/server.mjs");
  EXPECT_EQ(SourceOf({"/usr/bin/node", "../x/a.js"}), "command:///usr/bin/node /x/a.js");
  EXPECT_EQ(SourceOf({"python3.11", "-u", "/opt/s.py", "--port", "1"}), "command://python3.11 -u /opt/s.py");
  EXPECT_EQ(SourceOf({"bash", "-eu", "run.sh"}), "command://bash -eu /srv/run.sh");
  EXPECT_EQ(SourceOf({"deno", "run", "--allow-net=x.com", "main.ts"}), "command://deno run --allow-net=x.com /srv/main.ts");
  EXPECT_EQ(SourceOf({"node", "--", "-weird.js"}), "command://node -- /srv/-weird.js");
}

TEST(InterpretedScript, OptionsBeforeTheScriptArePartOfIt) {
  // -r runs hook.js first: not the same program as `node server.mjs`.
  EXPECT_EQ(SourceOf({"node", "-r", "./hook.js", "server.mjs"}), "command://node -r ./hook.js /srv/server.mjs");
  EXPECT_EQ(SourceOf({"node", "--import=./hook.mjs", "s.mjs"}), "command://node --import=./hook.mjs /srv/s.mjs");
  EXPECT_EQ(SourceOf({"python3", "-W", "ignore", "s.py"}), "command://python3 -W ignore /srv/s.py");
  EXPECT_EQ(SourceOf({"bash", "-o", "pipefail", "s.sh"}), "command://bash -o pipefail /srv/s.sh");
}

TEST(InterpretedScript, InlineCodeAndModulesEndTheSource) {
  EXPECT_EQ(SourceOf({"node", "-e", "go()", "arg"}), "command://node -e 'go()'");
  EXPECT_EQ(SourceOf({"bash", "-c", "exec x", "name"}), "command://bash -c 'exec x'");
  EXPECT_EQ(SourceOf({"python3", "-c", "import x"}), "command://python3 -c 'import x'");
  auto m = InterpretedScriptOf({"python3", "-m", "mcp_server_git", "--repo", "."}, "/srv");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->source, "command://python3 -m mcp_server_git");
  EXPECT_EQ(m->module, "mcp_server_git");
  EXPECT_TRUE(m->script.empty());
  EXPECT_EQ(InterpretedScriptOf({"python3", "-umpkg"}, "/srv")->module, "pkg");
}

TEST(InterpretedScript, WhatTheTableCannotReadIsTheWholeCommandLine) {
  // An unknown option might take the next word: never guess the script.
  EXPECT_EQ(SourceOf({"node", "--unknown", "a.js", "b.js"}), "command://node --unknown a.js b.js");
  EXPECT_EQ(SourceOf({"node", "-pe", "1"}), "command://node -pe 1");
  EXPECT_EQ(SourceOf({"node", "-e"}), "command://node -e");
  EXPECT_EQ(SourceOf({"node"}), "command://node");  // the REPL / stdin: no script
  EXPECT_EQ(SourceOf({"bash", "+x", "s.sh"}), "command://bash +x s.sh");  // '+' turns an option off
  EXPECT_EQ(SourceOf({"deno", "main.ts"}), "command://deno main.ts");
  // Launchers say nothing of what they start.
  EXPECT_EQ(SourceOf({"npx", "-y", "@x/server", "/data"}), "command://npx -y @x/server /data");
  EXPECT_EQ(SourceOf({"env", "A=1", "node", "s.js"}), "command://env A=1 node s.js");
  auto unread = InterpretedScriptOf({"node", "--unknown", "a.js"}, "/srv");
  ASSERT_TRUE(unread);
  EXPECT_TRUE(unread->script.empty());
  EXPECT_FALSE(InterpretedScriptOf({"/usr/local/bin/my-server", "x"}, "/srv"));
}

TEST(InterpretedScript, WordsAreQuotedSoTwoCommandLinesNeverShareASource) {
  EXPECT_NE(SourceOf({"node", "a b.js"}), SourceOf({"node", "a", "b.js"}));
  EXPECT_EQ(SourceOf({"node", "a b.js"}), "command://node '/srv/a b.js'");
}

Policy P(const std::string& text) {
  auto p = ParsePolicy(text, "p.json");
  EXPECT_TRUE(p.ok()) << p.error().Message();
  return p.ok() ? *p : Policy{};
}

TrustFacts Command(const std::vector<std::string>& argv) {
  ServerRef ref;
  ref.kind = ServerRef::Kind::kCommand;
  ref.original = ref.package = argv[0];
  ref.args = argv;
  return GatherTrustFacts(ref, nullptr);
}

TEST(InterpretedScript, TrustingOneNodeScriptTrustsNoOther) {
  std::string cwd = CurrentDirectory();
  Policy p = P(R"({"trusted_sources": ["command://node )" + cwd +
               R"(/good.mjs"], "rules": [{"condition": "untrusted_source", "action": "deny"}],
                   "default": "isolate"})");
  EXPECT_EQ(EvaluatePolicy(p, Command({"node", "good.mjs", "/data"})).action, PolicyAction::Kind::kIsolate);
  EXPECT_EQ(EvaluatePolicy(p, Command({"node", "evil.mjs"})).action, PolicyAction::Kind::kDeny);
  EXPECT_EQ(EvaluatePolicy(p, Command({"node", "-r", "./evil.js", "good.mjs"})).action, PolicyAction::Kind::kDeny);
  // The old spelling no longer trusts every script.
  Policy old = P(R"({"trusted_sources": ["command://node"], "rules": [{"condition": "untrusted_source", "action": "deny"}],
                     "default": "isolate"})");
  EXPECT_EQ(EvaluatePolicy(old, Command({"node", "good.mjs"})).action, PolicyAction::Kind::kDeny);
  EXPECT_EQ(EvaluatePolicy(old, Command({"node"})).action, PolicyAction::Kind::kIsolate);
}

TEST(InterpretedScript, ANameRuleSeesTheScript) {
  Policy p = P(R"({"rules": [{"condition": {"name": "server*"}, "action": "deny"}], "default": "isolate"})");
  EXPECT_EQ(EvaluatePolicy(p, Command({"node", "./lib/server.mjs"})).action, PolicyAction::Kind::kDeny);
  EXPECT_EQ(EvaluatePolicy(p, Command({"node", "client.mjs"})).action, PolicyAction::Kind::kIsolate);
  Policy mod = P(R"({"rules": [{"condition": {"name": "mcp_server_*"}, "action": "deny"}], "default": "isolate"})");
  EXPECT_EQ(EvaluatePolicy(mod, Command({"python3", "-m", "mcp_server_git"})).action, PolicyAction::Kind::kDeny);
  // The interpreter's own name still holds for every script it runs.
  Policy node = P(R"({"rules": [{"condition": {"name": "node"}, "action": "deny"}], "default": "isolate"})");
  EXPECT_EQ(EvaluatePolicy(node, Command({"/usr/bin/node", "a.js"})).action, PolicyAction::Kind::kDeny);
}

}  // namespace
}  // namespace mcpcell
