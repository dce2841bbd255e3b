// What an interpreter command runs, as the policy judges it (adv8: `node
// server.mjs` was judged as "node", so trusting one script trusted all;
// adv10: every way the source could name less than what runs).
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "policy/evaluate.h"
#include "policy/policy.h"
#include "policy/trust_facts.h"
#include "source/interpreted_script.h"
#include "util/path_search.h"

namespace mcpcell {
namespace {

/// A bare program as the source names it: the file PATH finds.
std::string Bin(const char* name) {
  std::string found = FindOnHostPath(name);
  return found.empty() ? name : found;
}

std::string SourceOf(const std::vector<std::string>& argv) {
  auto s = InterpretedScriptOf(argv, "/srv");
  return s ? s->source : "(not an interpreter)";
}

TEST(InterpretedScript, TheScriptIsTheSourceMadeAbsolute) {
  auto s = InterpretedScriptOf({"node", "server.mjs", "/data"}, "/srv");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->source, "command://" + Bin("node") + " /srv/server.mjs");
  EXPECT_EQ(s->script, "server.mjs");
  EXPECT_EQ(s->script_path, "/srv/server.mjs");
  EXPECT_TRUE(s->maybe_names.empty());
  EXPECT_EQ(SourceOf({"/usr/bin/node", "../x/a.js"}), "command:///usr/bin/node /x/a.js");
  EXPECT_EQ(SourceOf({"./bin/node", "a.js"}), "command:///srv/bin/node /srv/a.js");
  EXPECT_EQ(SourceOf({"python3.11", "-u", "/opt/s.py", "--port", "1"}), "command://" + Bin("python3.11") + " -u /opt/s.py");
  EXPECT_EQ(SourceOf({"bash", "-eu", "run.sh"}), "command://" + Bin("bash") + " -eu /srv/run.sh");
  EXPECT_EQ(SourceOf({"deno", "run", "--allow-net=x.com", "main.ts"}), "command://cd /srv && " + Bin("deno") + " run --allow-net=x.com /srv/main.ts");
  EXPECT_EQ(SourceOf({"node", "--", "-weird.js"}), "command://" + Bin("node") + " -- /srv/-weird.js");
  EXPECT_EQ(SourceOf({"php", "-n", "-f", "s.php", "x"}), "command://cd /srv && " + Bin("php") + " -n -f /srv/s.php");
}

TEST(InterpretedScript, OptionsBeforeTheScriptArePartOfItWithTheirPathsAbsolute) {
  // -r runs hook.js first: not the same program as `node server.mjs`.
  EXPECT_EQ(SourceOf({"node", "-r", "./hook.js", "server.mjs"}), "command://" + Bin("node") + " -r /srv/hook.js /srv/server.mjs");
  EXPECT_EQ(SourceOf({"node", "--import=./hook.mjs", "s.mjs"}), "command://" + Bin("node") + " --import=/srv/hook.mjs /srv/s.mjs");
  EXPECT_EQ(SourceOf({"python3", "-W", "ignore", "s.py"}), "command://" + Bin("python3") + " -W ignore /srv/s.py");
  EXPECT_EQ(SourceOf({"bash", "-o", "pipefail", "s.sh"}), "command://" + Bin("bash") + " -o pipefail /srv/s.sh");
  // A module name is found from the cwd's node_modules: the cwd is part of it.
  EXPECT_EQ(SourceOf({"node", "-r", "hook", "s.mjs"}), "command://cd /srv && " + Bin("node") + " -r hook /srv/s.mjs");
  // deno's --env-file and --lock take a value only after '='.
  EXPECT_EQ(SourceOf({"deno", "run", "--env-file", "main.ts"}), "command://cd /srv && " + Bin("deno") + " run --env-file /srv/main.ts");
}

// adv13: a URL specifier is not a path under the cwd. A file: URL is the
// path it names (percent-decoded, normalised); data: (inline code), node:
// and remote ones stay as written, so no path glob stands for them.
TEST(InterpretedScript, AUrlValueIsThePathItNamesOrStaysAsWritten) {
  const std::string node = "command://" + Bin("node");
  EXPECT_EQ(SourceOf({"node", "--import", "file:///app/../tmp/evil.mjs", "s.mjs"}), node + " --import /tmp/evil.mjs /srv/s.mjs");
  EXPECT_EQ(SourceOf({"node", "--import=file://localhost/tmp/%65vil.mjs", "s.mjs"}), node + " --import=/tmp/evil.mjs /srv/s.mjs");
  EXPECT_EQ(SourceOf({"node", "--loader", "file:/opt/l.mjs", "s.mjs"}), node + " --loader /opt/l.mjs /srv/s.mjs");
  EXPECT_EQ(SourceOf({"node", "--import", "data:text/javascript,1", "s.mjs"}), node + " --import data:text/javascript,1 /srv/s.mjs");
  EXPECT_EQ(SourceOf({"node", "--import", "https://x.example/a.mjs", "s.mjs"}), node + " --import https://x.example/a.mjs /srv/s.mjs");
  // A file: URL with another host is no local path: as written.
  EXPECT_EQ(SourceOf({"node", "--import", "file://host/a.mjs", "s.mjs"}), node + " --import file://host/a.mjs /srv/s.mjs");
}

TEST(InterpretedScript, WhatResolvesAgainstTheCwdPutsItInTheSource) {
  // python loads bytecode from a relative pycache_prefix (adv11).
  EXPECT_EQ(SourceOf({"python3", "-X", "pycache_prefix=pc", "s.py"}),
            "command://cd /srv && " + Bin("python3") + " -X pycache_prefix=pc /srv/s.py");
  EXPECT_EQ(SourceOf({"python3", "-X", "importtime", "s.py"}), "command://" + Bin("python3") + " -X importtime /srv/s.py");
  // tsx, bun, deno and php read a config of their own from the cwd.
  EXPECT_EQ(SourceOf({"tsx", "/opt/s.ts"}), "command://cd /srv && " + Bin("tsx") + " /opt/s.ts");
}

TEST(InterpretedScript, ADenyByNameSeesWhatOptionsAndInlineCodeRun) {
  auto hook = InterpretedScriptOf({"node", "-r", "./evil-hook.js", "s.mjs"}, "/srv");
  ASSERT_TRUE(hook);
  EXPECT_NE(std::find(hook->maybe_names.begin(), hook->maybe_names.end(), "evil-hook.js"), hook->maybe_names.end());
  auto code = InterpretedScriptOf({"bash", "-c", "./evil.sh --x"}, "/srv");
  ASSERT_TRUE(code);
  EXPECT_NE(std::find(code->maybe_names.begin(), code->maybe_names.end(), "evil.sh"), code->maybe_names.end());
  auto unread = InterpretedScriptOf({"node", "--require=./evil.js", "--x", "s.js"}, "/srv");
  ASSERT_TRUE(unread);
  EXPECT_NE(std::find(unread->maybe_names.begin(), unread->maybe_names.end(), "evil.js"), unread->maybe_names.end());
}

TEST(InterpretedScript, InlineCodeAndModulesEndTheSourceAndNeedTheCwd) {
  EXPECT_EQ(SourceOf({"node", "-e", "go()", "arg"}), "command://cd /srv && " + Bin("node") + " -e 'go()'");
  EXPECT_EQ(SourceOf({"bash", "-c", "exec x", "name"}), "command://cd /srv && " + Bin("bash") + " -c 'exec x'");
  auto m = InterpretedScriptOf({"python3", "-m", "mcp_server_git", "--repo", "."}, "/srv");
  ASSERT_TRUE(m);
  // Python puts the cwd first on sys.path: ./mcp_server_git.py would win.
  EXPECT_EQ(m->source, "command://cd /srv && " + Bin("python3") + " -m mcp_server_git");
  EXPECT_EQ(m->module, "mcp_server_git");
  EXPECT_TRUE(m->script.empty());
  EXPECT_EQ(InterpretedScriptOf({"python3", "-umpkg"}, "/srv")->module, "pkg");
}

TEST(InterpretedScript, WhatTheTableCannotReadIsTheWholeCommandLineInItsDirectory) {
  // An unknown option might take the next word: never guess the script.
  EXPECT_EQ(SourceOf({"node", "--unknown", "a.js", "b.js"}), "command://cd /srv && " + Bin("node") + " --unknown a.js b.js");
  EXPECT_EQ(SourceOf({"node", "-pe", "1"}), "command://cd /srv && " + Bin("node") + " -pe 1");
  EXPECT_EQ(SourceOf({"node", "-e"}), "command://cd /srv && " + Bin("node") + " -e");
  EXPECT_EQ(SourceOf({"node"}), "command://cd /srv && " + Bin("node"));  // the REPL / stdin: no script
  EXPECT_EQ(SourceOf({"bash", "+x", "s.sh"}), "command://cd /srv && " + Bin("bash") + " +x s.sh");  // '+' turns an option off
  EXPECT_EQ(SourceOf({"deno", "main.ts"}), "command://cd /srv && " + Bin("deno") + " main.ts");
  // Subcommands and chdir options: no script to name.
  EXPECT_EQ(SourceOf({"node", "inspect", "s.js"}), "command://cd /srv && " + Bin("node") + " inspect s.js");
  EXPECT_EQ(SourceOf({"tsx", "watch", "s.ts"}), "command://cd /srv && " + Bin("tsx") + " watch s.ts");
  EXPECT_EQ(SourceOf({"bun", "x", "pkg"}), "command://cd /srv && " + Bin("bun") + " x pkg");
  EXPECT_EQ(SourceOf({"ruby", "-C", "/x", "s.rb"}), "command://cd /srv && " + Bin("ruby") + " -C /x s.rb");
  EXPECT_EQ(SourceOf({"bun", "--cwd", "/x", "s.ts"}), "command://cd /srv && " + Bin("bun") + " --cwd /x s.ts");
  // Launchers say nothing of what they start.
  EXPECT_EQ(SourceOf({"npx", "-y", "@x/server", "/data"}), "command://cd /srv && " + Bin("npx") + " -y @x/server /data");
  EXPECT_EQ(SourceOf({"env", "A=1", "node", "s.js"}), "command://cd /srv && " + Bin("env") + " A=1 node s.js");
  EXPECT_EQ(SourceOf({"poetry", "run", "python", "x.py"}), "command://cd /srv && " + Bin("poetry") + " run python x.py");
  auto unread = InterpretedScriptOf({"node", "--unknown", "./lib/a.js"}, "/srv");
  ASSERT_TRUE(unread);
  EXPECT_TRUE(unread->script.empty());
  EXPECT_EQ(unread->maybe_names, (std::vector<std::string>{"./lib/a.js", "a.js", "/srv/lib/a.js"}));
  EXPECT_FALSE(InterpretedScriptOf({"/usr/local/bin/my-server", "x"}, "/srv"));
}

TEST(InterpretedScript, APlainCommandIsItsProgramMadeAbsolute) {
  EXPECT_EQ(PlainCommandSource("./server", "/srv"), "command:///srv/server");
  EXPECT_EQ(PlainCommandSource("/usr/bin/x", "/srv"), "command:///usr/bin/x");
  EXPECT_EQ(PlainCommandSource("mcpcell-no-such-program", "/srv"), "command://mcpcell-no-such-program");
  // A bare name is the file PATH finds: which `sh` runs is part of what is trusted.
  EXPECT_EQ(PlainCommandSource("sh", "/srv"), "command://" + FindOnHostPath("sh"));
}

TEST(InterpretedScript, WordsAreQuotedSoTwoCommandLinesNeverShareASource) {
  EXPECT_NE(SourceOf({"node", "a b.js"}), SourceOf({"node", "a", "b.js"}));
  EXPECT_EQ(SourceOf({"node", "a b.js"}), "command://" + Bin("node") + " '/srv/a b.js'");
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

PolicyAction::Kind Decide(const std::string& trusted, const std::vector<std::string>& argv) {
  Policy p = P(R"({"trusted_sources": [)" + trusted +
               R"(], "rules": [{"condition": "untrusted_source", "action": "deny"}], "default": "isolate"})");
  return EvaluatePolicy(p, Command(argv)).action;
}

TEST(InterpretedScript, TrustingOneNodeScriptTrustsNoOther) {
  const std::string good = "\"command://" + Bin("node") + " " + CurrentDirectory() + "/good.mjs\"";
  EXPECT_EQ(Decide(good, {"node", "good.mjs", "/data"}), PolicyAction::Kind::kIsolate);
  EXPECT_EQ(Decide(good, {"node", "evil.mjs"}), PolicyAction::Kind::kDeny);
  EXPECT_EQ(Decide(good, {"node", "-r", "./evil.js", "good.mjs"}), PolicyAction::Kind::kDeny);
  // The old spelling no longer trusts every script, nor the bare interpreter (the cwd is part of it).
  EXPECT_EQ(Decide("\"command://node\"", {"node", "good.mjs"}), PolicyAction::Kind::kDeny);
  EXPECT_EQ(Decide("\"command://node\"", {"node"}), PolicyAction::Kind::kDeny);
}

TEST(InterpretedScript, AGlobStarStaysWithinOneWord) {
  // "command:///usr/bin/*" trusts one program, not an interpreter with any code.
  EXPECT_EQ(Decide("\"command:///usr/bin/*\"", {"/usr/bin/true"}), PolicyAction::Kind::kIsolate);
  EXPECT_EQ(Decide("\"command:///usr/bin/*\"", {"/usr/bin/node", "-e", "x"}), PolicyAction::Kind::kDeny);
  EXPECT_EQ(Decide("\"command:///usr/bin/node /opt/*\"", {"/usr/bin/node", "/opt/s.js", "arg"}), PolicyAction::Kind::kIsolate);
  EXPECT_EQ(Decide("\"command:///usr/bin/node /opt/*\"", {"/usr/bin/node", "-r", "/tmp/h.js", "/opt/s.js"}),
            PolicyAction::Kind::kDeny);
  // adv13: a wildcard program trusts it bare; with arguments any may name
  // what runs (find -exec, sed e, setarch x sh -c): name the program.
  EXPECT_EQ(Decide("\"command:///usr/bin/*\"", {"/usr/bin/find", ".", "-exec", "sh", "{}", ";"}), PolicyAction::Kind::kDeny);
  EXPECT_EQ(Decide("\"command:///usr/bin/find\"", {"/usr/bin/find", ".", "-name", "x"}), PolicyAction::Kind::kIsolate);
  // A quoted word with a blank is one word in the glob too.
  EXPECT_EQ(Decide("\"command://" + Bin("node") + " '/opt/a b.js'\"", {"node", "/opt/a b.js"}), PolicyAction::Kind::kIsolate);
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

// adv13: an interpreter under a versioned or restricted name, or behind a
// symlink of another name, is read as the interpreter it is.
TEST(InterpretedScript, AnInterpreterUnderAnotherNameIsStillOne) {
  for (const char* name : {"perl5.36.0", "ruby3.1", "php8.2", "node20", "rbash"}) {
    auto s = InterpretedScriptOf({name, name[0] == 'r' && name[1] == 'b' ? "-c" : "-e", "code"}, "/srv");
    ASSERT_TRUE(s) << name;
    EXPECT_NE(s->source.find("cd /srv && "), std::string::npos) << name << ": " << s->source;
  }
  std::string dir = ::testing::TempDir() + "interp-link-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink("/bin/sh", dir + "/innocent");
  auto linked = InterpretedScriptOf({dir + "/innocent", "-c", "code"}, "/srv");
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(linked);
  EXPECT_NE(linked->source.find("-c code"), std::string::npos) << linked->source;
}

// adv13: an allow by the script's name does not hold while an option's file
// or code runs before it; the same script alone is still allowed.
TEST(InterpretedScript, AnAllowByNameDoesNotHoldWhilePreloadedCodeRuns) {
  Policy allow = P(R"({"rules": [{"condition": {"name": "/srv/*"}, "action": "allow"}], "default": "isolate"})");
  EXPECT_EQ(EvaluatePolicy(allow, Command({"node", "/srv/s.js"})).action, PolicyAction::Kind::kAllow);
  EXPECT_EQ(EvaluatePolicy(allow, Command({"node", "-r", "/tmp/evil.js", "/srv/s.js"})).action, PolicyAction::Kind::kIsolate);
  EXPECT_EQ(EvaluatePolicy(allow, Command({"node", "--import", "data:text/javascript,1", "/srv/s.js"})).action,
            PolicyAction::Kind::kIsolate);
}

TEST(InterpretedScript, AnUnreadLineMayBeAnyOfItsWordsForADenyButNotForAnAllow) {
  Policy deny = P(R"({"rules": [{"condition": {"name": "evil*"}, "action": "deny"}], "default": "isolate"})");
  EXPECT_EQ(EvaluatePolicy(deny, Command({"node", "--unknown", "evil.js"})).action, PolicyAction::Kind::kDeny);
  EXPECT_EQ(EvaluatePolicy(deny, Command({"env", "node", "/x/evil.js"})).action, PolicyAction::Kind::kDeny);
  Policy allow = P(R"({"rules": [{"condition": {"name": "mine*"}, "action": "allow"}], "default": "isolate"})");
  EXPECT_EQ(EvaluatePolicy(allow, Command({"node", "--unknown", "evil.js", "mine.txt"})).action,
            PolicyAction::Kind::kIsolate);
  // `not` swaps the sides: an allow of "not evil*" takes every word, a deny of it the sure names.
  Policy allow_not = P(R"({"rules": [{"condition": {"not": {"name": "evil*"}}, "action": "allow"}], "default": "isolate"})");
  EXPECT_EQ(EvaluatePolicy(allow_not, Command({"node", "--unknown", "evil.js"})).action, PolicyAction::Kind::kIsolate);
  Policy isolate = P(R"({"rules": [{"condition": {"name": "evil*"}, "action": "isolate"}], "default": "isolate"})");
  EXPECT_EQ(EvaluatePolicy(isolate, Command({"node", "--unknown", "evil.js"})).rule_index, -1);
}

TEST(InterpretedScript, AFileUrlIsThePathItNames) {
  EXPECT_EQ(FileUrlPath("file:///tmp/a%20b"), "/tmp/a b");
  EXPECT_EQ(FileUrlPath("file://localhost/x"), "/x");
  EXPECT_EQ(FileUrlPath("file:/x"), "/x");
  EXPECT_EQ(FileUrlPath("file://host/x"), std::nullopt) << "another host's file";
  EXPECT_EQ(FileUrlPath("file://"), std::nullopt);
  EXPECT_EQ(FileUrlPath("file:x"), std::nullopt);
  EXPECT_EQ(FileUrlPath("https:///x"), std::nullopt);
}

TEST(InterpretedScript, AUrlSchemeIsTwoOrMoreSchemeCharactersAndAColon) {
  for (const char* v : {"data:text/javascript,1", "https://x", "node:fs", "git+ssh:x", "a.b-c:"}) {
    EXPECT_TRUE(HasUrlScheme(v)) << v;
  }
  for (const char* v : {"c:/x", "./x:y", "1ab:x", "a b:x", "plain", ":x", ""}) {
    EXPECT_FALSE(HasUrlScheme(v)) << v;
  }
}

}  // namespace
}  // namespace mcpcell
