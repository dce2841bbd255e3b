// The client config edit (src/client/): JSONC handling, the wrap rules, and
// the attacks tried on them — option injection through env names, package
// or image names, duplicate keys, comment and URL look-alikes in strings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "client/config_edit.h"
#include "client/env_file_names.h"
#include "client/jsonc.h"
#include "client/toml_edit.h"
#include "client/yaml_edit.h"
#include "client/wrap_entry.h"
#include "util/code_injecting_env.h"

namespace mcpcell {
namespace {

using nlohmann::ordered_json;

const WrapOptions kOpts{"/usr/local/bin/mcpcell", std::nullopt};

std::vector<std::string> Args(const WrapOutcome& w) { return w.entry["args"].get<std::vector<std::string>>(); }

TEST(Jsonc, BlanksCommentsAndTrailingCommasKeepingOffsetsAndStrings) {
  std::string text = "{ // c\n \"a\": \"http://x/*y*/\", /* b */ \"b\": [1,2,],\n}";
  auto plain = BlankJsoncExtras(text);
  ASSERT_TRUE(plain.ok()) << plain.error().Message();
  EXPECT_EQ(plain->size(), text.size());
  auto j = nlohmann::json::parse(*plain);
  EXPECT_EQ(j["a"], "http://x/*y*/");  // a comment look-alike inside a string is the string's
  EXPECT_EQ(j["b"].size(), 2u);
}

TEST(Jsonc, UnterminatedCommentIsAnErrorNamingTheLine) {
  auto r = BlankJsoncExtras("{\n\"a\": 1 /* never closed\n}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().detail.find("line 2"), std::string::npos) << r.error().detail;
}

TEST(Jsonc, MembersDecodeEscapedKeys) {
  std::string json = R"({"mcp\u0053ervers": {"x": 1}})";
  auto m = ObjectMembers(json, 0);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].key, "mcpServers");  // as JSON.parse in the client reads it
}

TEST(WrapEntry, NpxBecomesASourceWithArgumentsExact) {
  auto w = WrapEntry(ordered_json::parse(R"J({"command": "npx", "args": ["-y", "@s/p@1.2", "$(id)", "a b", "--"]})J"), kOpts);
  ASSERT_EQ(w.kind, WrapOutcome::Kind::kWrapped) << w.note;
  EXPECT_EQ(w.entry["command"], "/usr/local/bin/mcpcell");
  EXPECT_EQ(Args(w), (std::vector<std::string>{"run", "npx://@s/p@1.2", "--", "$(id)", "a b", "--"}));
}

TEST(WrapEntry, EnvNamesBecomeEnvOptionsAndValuesStayInTheEntry) {
  auto w = WrapEntry(ordered_json::parse(R"({"command": "npx", "args": ["pkg"], "env": {"API_KEY": "s3cret", "B": ""}})"),
                     WrapOptions{"/m/mcpcell", std::string("/p.json")});
  ASSERT_EQ(w.kind, WrapOutcome::Kind::kWrapped) << w.note;
  EXPECT_EQ(Args(w), (std::vector<std::string>{"run", "--policy=/p.json", "--env=API_KEY", "--env=B", "npx://pkg"}));
  EXPECT_EQ(w.entry["env"]["API_KEY"], "s3cret");
}

TEST(WrapEntry, AnEnvNameThatLooksLikeAnOptionIsRefused) {
  for (const char* name : {"--write=/", "-v", "A=B", "A B", "", "1X"}) {
    ordered_json e = ordered_json::parse(R"({"command": "node", "args": ["s.js"]})");
    e["env"][name] = "x";
    auto w = WrapEntry(e, kOpts);
    EXPECT_EQ(w.kind, WrapOutcome::Kind::kLeft) << name;
    EXPECT_NE(w.note.find("not a plain NAME"), std::string::npos) << name << ": " << w.note;
  }
}

TEST(WrapEntry, UvxBecomesASourceWithItsPinAndArguments) {
  auto w = WrapEntry(ordered_json::parse(R"J({"command": "uvx", "args": ["mcp-server-fetch==2025.4.7", "--ua", "$(id)"]})J"),
                     kOpts);
  ASSERT_EQ(w.kind, WrapOutcome::Kind::kWrapped) << w.note;
  EXPECT_EQ(Args(w), (std::vector<std::string>{"run", "uvx://mcp-server-fetch@2025.4.7", "--", "--ua", "$(id)"}));
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"command": "/usr/bin/uvx", "args": ["x;id"]})"), kOpts).kind,
            WrapOutcome::Kind::kLeft);
}

TEST(WrapEntry, NpxOptionsAndBadPackageNamesAreLeft) {
  for (const char* args : {R"(["-p", "x", "y"])", R"(["--package=x", "y"])", R"(["-y"])", R"(["-c", "rm -rf ~"])",
                           R"(["../x"])", R"(["x;rm"])", R"(["X"])"}) {
    auto w = WrapEntry(ordered_json::parse(std::string(R"({"command": "npx", "args": )") + args + "}"), kOpts);
    EXPECT_EQ(w.kind, WrapOutcome::Kind::kLeft) << args;
  }
}

TEST(WrapEntry, DockerRunMapsOnlyWhenNothingButStdioAndEnvIsAsked) {
  auto w = WrapEntry(ordered_json::parse(R"({"command": "docker", "args": ["run", "-i", "--rm", "-e", "K", "--env=L=v", "img:1", "a"]})"), kOpts);
  ASSERT_EQ(w.kind, WrapOutcome::Kind::kWrapped) << w.note;
  EXPECT_EQ(Args(w), (std::vector<std::string>{"run", "--env=K", "--env=L=v", "docker://img:1", "--", "a"}));
  for (const char* args : {R"(["run", "-i", "--privileged", "img"])", R"(["run", "-v", "/:/h", "img"])",
                           R"(["run", "--network=host", "img"])", R"(["exec", "c"])", R"(["run", "-i"])",
                           R"(["run", "-e", "--x", "img"])"}) {
    auto left = WrapEntry(ordered_json::parse(std::string(R"({"command": "docker", "args": )") + args + "}"), kOpts);
    EXPECT_EQ(left.kind, WrapOutcome::Kind::kLeft) << args;
  }
}

TEST(WrapEntry, PlainCommandRunsIsolatedAfterTheSeparator) {
  auto w = WrapEntry(ordered_json::parse(R"({"command": "--policy=/evil", "args": ["x"]})"), kOpts);
  ASSERT_EQ(w.kind, WrapOutcome::Kind::kWrapped);
  // After "--" every word is the server's: the command cannot pose as an option.
  EXPECT_EQ(Args(w), (std::vector<std::string>{"run", "--isolate", "--", "--policy=/evil", "x"}));
}

TEST(WrapEntry, RemoteWrappedUvxAndMalformedEntriesAreLeftWithAReason) {
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"serverUrl": "https://x"})"), kOpts).kind, WrapOutcome::Kind::kRemote);
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"type": "sse", "url": "https://x"})"), kOpts).kind, WrapOutcome::Kind::kRemote);
  auto again = WrapEntry(ordered_json::parse(R"({"command": "/opt/mcpcell", "args": ["run"]})"), kOpts);
  EXPECT_EQ(again.kind, WrapOutcome::Kind::kAlready);
  EXPECT_NE(again.note.find("not this one"), std::string::npos) << again.note;
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"command": "uvx", "args": ["--from", "x", "y"]})"), kOpts).kind,
            WrapOutcome::Kind::kLeft);
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"command": "uvx", "args": ["x[extra]"]})"), kOpts).kind,
            WrapOutcome::Kind::kLeft);
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"command": "node", "args": "s.js"})"), kOpts).kind, WrapOutcome::Kind::kLeft);
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"command": "node", "args": [1]})"), kOpts).kind, WrapOutcome::Kind::kLeft);
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"command": {"path": "x"}})"), kOpts).kind, WrapOutcome::Kind::kLeft);
}

// uvx reads UV_* (its index settings), the host pip behind uvx:// reads
// PIP_* instead: wrapped, the package would come from another index
// (dependency confusion, adv_uvx.test.mjs). Left, with what to do.
TEST(WrapEntry, UvxWithAnIndexSettingInItsEnvIsLeftSayingWhy) {
  for (const char* key : {"UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "PIP_INDEX_URL"}) {
    ordered_json e = ordered_json::parse(R"({"command": "uvx", "args": ["internal-tool"]})");
    e["env"][key] = "https://pypi.internal/simple";
    auto w = WrapEntry(e, kOpts);
    EXPECT_EQ(w.kind, WrapOutcome::Kind::kLeft) << key;
    EXPECT_NE(w.note.find(key), std::string::npos) << w.note;
    EXPECT_NE(w.note.find("pip.conf"), std::string::npos) << w.note;
  }
  // Other variables are the server's own: still wrapped.
  auto w = WrapEntry(ordered_json::parse(R"({"command": "uvx", "args": ["x"], "env": {"API_KEY": "k"}})"), kOpts);
  EXPECT_EQ(w.kind, WrapOutcome::Kind::kWrapped);
  // npx with a UV_ variable is not uvx: unaffected.
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"command": "npx", "args": ["x"], "env": {"UV_INDEX_URL": "u"}})"), kOpts).kind,
            WrapOutcome::Kind::kWrapped);
}

// A uv.toml that names an index: uvx entries are left, naming the file.
TEST(WrapEntry, UvxIsLeftWhenAUvConfigSetsAnIndex) {
  WrapOptions opts = kOpts;
  opts.uv_index_config = "/home/a/.config/uv/uv.toml";
  auto w = WrapEntry(ordered_json::parse(R"({"command": "uvx", "args": ["x"]})"), opts);
  EXPECT_EQ(w.kind, WrapOutcome::Kind::kLeft);
  EXPECT_NE(w.note.find("/home/a/.config/uv/uv.toml"), std::string::npos) << w.note;
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"command": "npx", "args": ["x"]})"), opts).kind, WrapOutcome::Kind::kWrapped);
}

TEST(ConfigEdit, WrapKeepsEverythingOutsideTheEntriesAndUnwrapRestoresBytes) {
  std::string text = "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\"command\": \"node\", /* x */ \"args\": [\"s.js\"]},\n"
                     "    \"r\": {\"url\": \"https://h/mcp\"},\n  },\n  \"z\": 1,\n}\n";
  auto w = WrapConfig(text, "mcpServers", kOpts, {});
  ASSERT_TRUE(w.ok()) << w.error().Message();
  EXPECT_NE(w->text.find("// mine"), std::string::npos);
  EXPECT_NE(w->text.find("\"z\": 1,\n}"), std::string::npos);
  EXPECT_EQ(w->originals.size(), 1u);
  auto again = WrapConfig(w->text, "mcpServers", kOpts, w->originals);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->text, w->text);
  auto un = UnwrapConfig(w->text, "mcpServers", w->originals);
  ASSERT_TRUE(un.ok()) << un.error().Message();
  EXPECT_EQ(un->text, text);
  EXPECT_TRUE(un->originals.empty());
}

TEST(ConfigEdit, DuplicateServersKeyOrServerNameIsRefused) {
  auto twice = WrapConfig(R"({"mcpServers": {}, "mcpServers": {"a": {"command": "x"}}})", "mcpServers", kOpts, {});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().detail.find("twice"), std::string::npos);
  auto dup = WrapConfig(R"({"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}})", "mcpServers", kOpts, {});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().detail.find("appears twice"), std::string::npos);
}

TEST(ConfigEdit, NoServersKeyMeansNothingToDoAndBrokenJsonIsAnError) {
  auto none = WrapConfig("{\"theme\": 1}", "mcpServers", kOpts, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->entries.empty());
  EXPECT_FALSE(WrapConfig("{\"mcpServers\": {\"a\": }", "mcpServers", kOpts, {}).ok());
  EXPECT_FALSE(WrapConfig("[1]", "mcpServers", kOpts, {}).ok());
  EXPECT_FALSE(WrapConfig("{\"mcpServers\": []}", "mcpServers", kOpts, {}).ok());
  std::string deep(100000, '[');
  EXPECT_FALSE(WrapConfig("{\"x\": " + deep + "}", "mcpServers", kOpts, {}).ok());  // bounded, no stack overflow
}

TEST(ConfigEdit, UnwrapLeavesAHandWrappedEntryWithoutAnOriginal) {
  auto un = UnwrapConfig(R"({"mcpServers": {"a": {"command": "mcpcell", "args": ["run"]}}})", "mcpServers", {});
  ASSERT_TRUE(un.ok());
  ASSERT_EQ(un->entries.size(), 1u);
  EXPECT_FALSE(un->entries[0].changed);
  EXPECT_NE(un->entries[0].note.find("no original"), std::string::npos);
}

}  // namespace
}  // namespace mcpcell

namespace mcpcell {
namespace {

const WrapOptions kToolOpts{"/m/mcpcell", std::nullopt};

TEST(TomlEdit, WrapsTablesAndInlineTablesInPlaceAndUnwrapRestores) {
  std::string text = "# c\n[mcp_servers.a]\ncommand = \"npx\" # k\nargs = [\n  \"-y\", # why\n  \"p@1.0.0\",\n]\n"
                     "[mcp_servers.b]\ncommand = 'node'\n[x]\nmcp_servers = 1\n";
  auto w = WrapTomlConfig(text, "mcp_servers", kToolOpts, {});
  ASSERT_TRUE(w.ok()) << w.error().Message();
  EXPECT_EQ(w->text, "# c\n[mcp_servers.a]\ncommand = \"/m/mcpcell\" # k\nargs = [\"run\", \"npx://p@1.0.0\"]\n"
                     "[mcp_servers.b]\ncommand = \"/m/mcpcell\"\nargs = [\"run\", \"--isolate\", \"--\", \"node\"]\n[x]\nmcp_servers = 1\n");
  auto un = UnwrapTomlConfig(w->text, "mcp_servers", w->originals);
  ASSERT_TRUE(un.ok()) << un.error().Message();
  EXPECT_EQ(un->text, text);

  std::string inl = "mcp_servers = { s = { command = \"node\", env = { K = \"v\" } } }\n";
  auto wi = WrapTomlConfig(inl, "mcp_servers", kToolOpts, {});
  ASSERT_TRUE(wi.ok()) << wi.error().Message();
  EXPECT_EQ(wi->text, "mcp_servers = { s = { command = \"/m/mcpcell\", args = [\"run\", \"--isolate\", \"--env=K\", \"--\", \"node\"], env = { K = \"v\" } } }\n");
  auto ui = UnwrapTomlConfig(wi->text, "mcp_servers", wi->originals);
  ASSERT_TRUE(ui.ok());
  EXPECT_EQ(ui->text, inl);
}

TEST(TomlEdit, DottedCommandWithoutArgsIsLeftAndStrangeStringsAreEscaped) {
  auto d = WrapTomlConfig("mcp_servers.s.command = \"node\"\n", "mcp_servers", kToolOpts, {});
  ASSERT_TRUE(d.ok()) << d.error().Message();
  EXPECT_FALSE(d->entries.at(0).changed);
  // A DEL, a quote, a newline and a backslash in an argument come back as the same string.
  std::string text = "[mcp_servers.s]\ncommand = \"node\"\nargs = [\"a\\u007Fb\\\"c\\nd\\\\e\"]\n";
  auto w = WrapTomlConfig(text, "mcp_servers", kToolOpts, {});
  ASSERT_TRUE(w.ok()) << w.error().Message();
  EXPECT_NE(w->text.find("\"a\\u007Fb\\\"c\\nd\\\\e\""), std::string::npos) << w->text;
  EXPECT_FALSE(WrapTomlConfig("[mcp_servers.s\ncommand = 1", "mcp_servers", kToolOpts, {}).ok());
  EXPECT_FALSE(WrapTomlConfig("mcp_servers = 3\n", "mcp_servers", kToolOpts, {}).ok());
}

}  // namespace
}  // namespace mcpcell

namespace mcpcell {
namespace {

TEST(ConfigEdit, AByteOrderMarkIsKeptAndIgnored) {
  std::string text = "\xEF\xBB\xBF{\"mcpServers\": {\"a\": {\"command\": \"node\"}}}";
  auto w = WrapConfig(text, "mcpServers", WrapOptions{"/m/mcpcell", std::nullopt}, {});
  ASSERT_TRUE(w.ok()) << w.error().Message();
  EXPECT_EQ(w->text.rfind("\xEF\xBB\xBF{", 0), 0u);
  EXPECT_TRUE(w->entries.at(0).changed);
}

}  // namespace
}  // namespace mcpcell

namespace mcpcell {
namespace {

const WrapOptions kYamlOpts{"/m/mcpcell", std::nullopt};

TEST(YamlEdit, WrapsBlockAndFlowExtensionsInPlaceAndUnwrapRestores) {
  std::string text = "# g\nextensions:\n  a:\n    type: stdio\n    cmd: npx # c\n    args:\n      - -y\n      - p@1.0.0\n"
                     "    # after\n    envs: {K: v}\n  b: {type: stdio, cmd: 'é'}\n  c:\n    type: builtin\nX: 1\n";
  auto w = WrapYamlConfig(text, "extensions", kYamlOpts, {});
  ASSERT_TRUE(w.ok()) << w.error().Message();
  EXPECT_EQ(w->text, "# g\nextensions:\n  a:\n    type: stdio\n    cmd: \"/m/mcpcell\" # c\n    args:\n"
                     "      [\"run\", \"--env=K\", \"npx://p@1.0.0\"]\n    # after\n    envs: {K: v}\n"
                     "  b: {type: stdio, cmd: \"/m/mcpcell\", args: [\"run\", \"--isolate\", \"--\", \"é\"]}\n"
                     "  c:\n    type: builtin\nX: 1\n");
  auto again = WrapYamlConfig(w->text, "extensions", kYamlOpts, w->originals);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->text, w->text);
  auto un = UnwrapYamlConfig(w->text, "extensions", w->originals);
  ASSERT_TRUE(un.ok()) << un.error().Message();
  EXPECT_EQ(un->text, text);
}

TEST(YamlEdit, AnchorsDuplicatesAndStrangeInputAreRefusedOrLeft) {
  auto anchors = WrapYamlConfig("extensions:\n  a: &x\n    cmd: node\n  b:\n    cmd: *x\n", "extensions", kYamlOpts, {});
  ASSERT_TRUE(anchors.ok()) << anchors.error().Message();
  for (const auto& e : anchors->entries) EXPECT_FALSE(e.changed) << e.name << ": " << e.note;
  EXPECT_FALSE(WrapYamlConfig("extensions:\n  a: {cmd: x}\n  a: {cmd: y}\n", "extensions", kYamlOpts, {}).ok());
  EXPECT_FALSE(WrapYamlConfig("extensions: {}\nextensions: {a: {cmd: y}}\n", "extensions", kYamlOpts, {}).ok());
  EXPECT_FALSE(WrapYamlConfig("\xEF\xBB\xBF" "extensions: {}\n", "extensions", kYamlOpts, {}).ok());
  EXPECT_FALSE(WrapYamlConfig("extensions: [\n", "extensions", kYamlOpts, {}).ok());
  EXPECT_FALSE(WrapYamlConfig("x: " + std::string(5000, '['), "extensions", kYamlOpts, {}).ok());  // bounded depth
  auto del = WrapYamlConfig("extensions:\n  a:\n    cmd: node\n    args: [\"a\\x7Fb\\u0085c\"]\n", "extensions", kYamlOpts, {});
  ASSERT_TRUE(del.ok()) << del.error().Message();
  EXPECT_NE(del->text.find("\"a\\u007Fb\\u0085c\""), std::string::npos) << del->text;
}

}  // namespace
}  // namespace mcpcell

namespace mcpcell {
namespace {

// The command/args edit TOML and YAML share (client/command_args_edit.h), run
// through both formats: what the diff shows, what list says, and an args
// key that is no longer where wrapping put it.
struct CommandArgsCase {
  const char* format;
  std::string text;         ///< one stdio server "s" without args, under "k"
  std::string shown_after;  ///< the wrap's `after` display
  Result<std::vector<EntryChange>> (*list)(const std::string&, const std::string&);
  Result<ConfigEdit> (*wrap)(const std::string&, const std::string&, const WrapOptions&, std::map<std::string, std::string>);
  Result<ConfigEdit> (*unwrap)(const std::string&, const std::string&, std::map<std::string, std::string>);
  std::string moved_args;   ///< replaces the inserted separator so args no longer follow the command
};

std::vector<CommandArgsCase> CommandArgsCases() {
  return {{"toml", "[k.s]\ncommand = \"node\"\n", "command = \"/m/mcpcell\"\nargs = [\"run\", \"--isolate\", \"--\", \"node\"]",
           ListTomlServers, WrapTomlConfig, UnwrapTomlConfig, "\n\nargs = "},
          {"yaml", "k:\n  s:\n    cmd: node\n", "cmd: \"/m/mcpcell\"\nargs: [\"run\", \"--isolate\", \"--\", \"node\"]",
           ListYamlServers, WrapYamlConfig, UnwrapYamlConfig, "\n\n    args: "}};
}

TEST(CommandArgsEdit, ListWrapShowAndUnwrapAlikeInBothFormats) {
  for (const auto& c : CommandArgsCases()) {
    SCOPED_TRACE(c.format);
    auto listed = c.list(c.text, "k");
    ASSERT_TRUE(listed.ok()) << listed.error().Message();
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_EQ(listed->at(0).note, "stdio: node");
    EXPECT_EQ(listed->at(0).line, c.format == std::string("toml") ? 2 : 3);
    auto w = c.wrap(c.text, "k", kToolOpts, {});
    ASSERT_TRUE(w.ok()) << w.error().Message();
    EXPECT_EQ(w->entries.at(0).after, c.shown_after);
    ASSERT_EQ(w->originals.count("s"), 1u);
    EXPECT_EQ(c.list(w->text, "k")->at(0).note, "wrapped");
    auto un = c.unwrap(w->text, "k", w->originals);
    ASSERT_TRUE(un.ok()) << un.error().Message();
    EXPECT_EQ(un->text, c.text);
    EXPECT_EQ(un->entries.at(0).note, "restored");
    EXPECT_TRUE(un->originals.empty());
  }
}

TEST(CommandArgsEdit, InsertedArgsMovedSinceAreLeftAndUnwrappedTwiceIsNotWrapped) {
  for (const auto& c : CommandArgsCases()) {
    SCOPED_TRACE(c.format);
    auto w = c.wrap(c.text, "k", kToolOpts, {});
    ASSERT_TRUE(w.ok()) << w.error().Message();
    std::string sep = c.moved_args.substr(1);  // what wrapping inserted
    std::string moved = w->text;
    ASSERT_NE(moved.find(sep), std::string::npos) << moved;
    moved.replace(moved.find(sep), sep.size(), c.moved_args);
    auto un = c.unwrap(moved, "k", w->originals);
    ASSERT_TRUE(un.ok()) << un.error().Message();
    EXPECT_EQ(un->text, moved);
    EXPECT_NE(un->entries.at(0).note.find("not where mcpcell put them"), std::string::npos) << un->entries.at(0).note;
    EXPECT_EQ(un->originals.size(), 1u);  // kept for a later try
    auto plain = c.unwrap(c.text, "k", w->originals);
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(plain->entries.at(0).note, "not wrapped");
  }
}

TEST(Splice, ReplacesFromTheLastSpanSoEarlierOffsetsHold) {
  EXPECT_EQ(Splice("abcdef", {{Span{0, 1}, "XYZ"}, {Span{4, 6}, ""}, {Span{2, 2}, "-"}}), "XYZb-cd");
  EXPECT_EQ(Splice("abc", {}), "abc");
}

TEST(ConfigEdit, ClaudeCodeProjectScopesAreWrappedUnderTheirOwnNames) {
  std::string text = R"({"mcpServers": {"a": {"command": "node"}},
 "projects": {"/home/me/site": {"allowedTools": [], "mcpServers": {"a": {"command": "npx", "args": ["-y", "p@1.0.0"]}}},
              "/tmp/x": {"history": []}}})";
  WrapOptions opts{"/m/mcpcell", std::nullopt};
  auto w = WrapConfig(text, "mcpServers", opts, {}, true);
  ASSERT_TRUE(w.ok()) << w.error().Message();
  ASSERT_EQ(w->entries.size(), 2u);
  EXPECT_EQ(w->entries[1].name, "/home/me/site: a");
  EXPECT_TRUE(w->entries[1].changed);
  EXPECT_EQ(w->originals.size(), 2u);
  EXPECT_NE(w->text.find("\"npx://p@1.0.0\""), std::string::npos);
  auto un = UnwrapConfig(w->text, "mcpServers", w->originals, true);
  ASSERT_TRUE(un.ok()) << un.error().Message();
  EXPECT_EQ(un->text, text);
  // Without project scopes (every other client) the projects key is not read.
  auto plain = WrapConfig(text, "mcpServers", opts, {}, false);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->entries.size(), 1u);
}

// adv10: an entry with a "command" is local whatever else it has: VS Code
// starts "command" for "type": "stdio", and a stray "url" must not leave it
// running with no cell. Wrapped, saying so.
TEST(WrapEntry, AnEntryWithACommandIsWrappedEvenWithAUrlOrARemoteType) {
  for (const char* text : {R"({"type": "stdio", "command": "node", "args": ["s.js"], "url": "http://x/"})",
                           R"({"command": "node", "serverUrl": "http://x/"})", R"({"type": "sse", "command": "x"})"}) {
    auto w = WrapEntry(ordered_json::parse(text), kOpts);
    EXPECT_EQ(w.kind, WrapOutcome::Kind::kWrapped) << text;
  }
  auto w = WrapEntry(ordered_json::parse(R"({"command": "node", "url": "http://x/"})"), kOpts);
  EXPECT_NE(w.note.find("\"url\""), std::string::npos) << w.note;
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"type": "stdio", "url": "http://x/"})"), kOpts).kind,
            WrapOutcome::Kind::kRemote);
}

// adv10: an entry that already runs mcpcell is "unchanged" only when it
// carries what was asked; in wrap's own shape its --policy is replaced;
// with options wrap never writes it is left, naming them.
TEST(WrapEntry, APreWrappedEntryCarriesTheAskedPolicyOrIsRewrappedOrLeft) {
  WrapOptions opts{"/m/mcpcell", std::string("/mine.json")};
  auto same = WrapEntry(ordered_json::parse(R"({"command": "/m/mcpcell", "args": ["run", "--policy=/mine.json", "npx://p"]})"), opts);
  EXPECT_EQ(same.kind, WrapOutcome::Kind::kAlready) << same.note;
  auto other = WrapEntry(ordered_json::parse(
      R"({"command": "mcpcell", "args": ["run", "--isolate", "--policy", "/all.json", "--env=K", "--", "node", "--policy=x"]})"), opts);
  ASSERT_EQ(other.kind, WrapOutcome::Kind::kWrapped) << other.note;
  EXPECT_EQ(Args(other), (std::vector<std::string>{"run", "--isolate", "--policy=/mine.json", "--env=K", "--", "node", "--policy=x"}));
  EXPECT_EQ(other.entry["command"], "mcpcell");
  EXPECT_NE(other.note.find("/all.json"), std::string::npos) << other.note;
  auto none = WrapEntry(ordered_json::parse(R"({"command": "mcpcell", "args": ["run", "npx://p"]})"), opts);
  ASSERT_EQ(none.kind, WrapOutcome::Kind::kWrapped) << none.note;
  EXPECT_EQ(Args(none), (std::vector<std::string>{"run", "--policy=/mine.json", "npx://p"}));
  auto odd = WrapEntry(ordered_json::parse(R"({"command": "mcpcell", "args": ["run", "npx://p", "--relay=off"]})"), opts);
  EXPECT_EQ(odd.kind, WrapOutcome::Kind::kLeft);
  EXPECT_NE(odd.note.find("--relay=off"), std::string::npos) << odd.note;
  EXPECT_NE(odd.note.find("/mine.json"), std::string::npos) << odd.note;
  // "--policy" right before "--" has no value: not wrap's shape, left.
  auto dangling = WrapEntry(ordered_json::parse(R"({"command": "mcpcell", "args": ["run", "--policy", "--", "node"]})"), opts);
  EXPECT_EQ(dangling.kind, WrapOutcome::Kind::kLeft) << dangling.note;
  auto notrun = WrapEntry(ordered_json::parse(R"({"command": "mcpcell", "args": ["proxy"]})"), opts);
  EXPECT_EQ(notrun.kind, WrapOutcome::Kind::kLeft);
  // No --policy asked: an entry's own is kept, and said.
  auto kept = WrapEntry(ordered_json::parse(R"({"command": "mcpcell", "args": ["run", "--policy=/all.json", "npx://p"]})"), kOpts);
  EXPECT_EQ(kept.kind, WrapOutcome::Kind::kAlready);
  EXPECT_NE(kept.note.find("/all.json"), std::string::npos) << kept.note;
}

// Wrapping again with another --policy keeps the original of the first wrap for unwrap.
TEST(ClientWrapConfig, RewrappingKeepsTheFirstOriginal) {
  std::string text = "{\"mcpServers\": {\"a\": {\"command\": \"node\", \"args\": [\"s.js\"]}}}";
  auto first = WrapConfig(text, "mcpServers", kOpts, {});
  ASSERT_TRUE(first.ok());
  auto second = WrapConfig(first->text, "mcpServers", WrapOptions{"/usr/local/bin/mcpcell", std::string("/p.json")},
                           first->originals);
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(second->entries[0].changed) << second->entries[0].note;
  EXPECT_EQ(second->originals["a"], first->originals["a"]);
  auto back = UnwrapConfig(second->text, "mcpServers", second->originals);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->text, text);
}

// adv10: the client sets an entry's env on mcpcell itself. A variable that
// makes a program run other code moves into args (set in the cell only),
// leaving the env block; where it cannot move, the entry is left naming it.
TEST(WrapEntry, CodeInjectingEnvMovesIntoArgsOrLeavesTheEntry) {
  auto w = WrapEntry(ordered_json::parse(
      R"({"command": "node", "args": ["s.js"], "env": {"LD_PRELOAD": "/x.so", "API_KEY": "k", "NODE_OPTIONS": "--max-old-space-size=64"}})"), kOpts);
  ASSERT_EQ(w.kind, WrapOutcome::Kind::kWrapped) << w.note;
  EXPECT_EQ(Args(w), (std::vector<std::string>{"run", "--isolate", "--env=LD_PRELOAD=/x.so", "--env=API_KEY",
                                               "--env=NODE_OPTIONS=--max-old-space-size=64", "--", "node", "s.js"}));
  EXPECT_EQ(w.entry["env"], ordered_json::parse(R"({"API_KEY": "k"})"));
  EXPECT_NE(w.note.find("LD_PRELOAD, NODE_OPTIONS"), std::string::npos) << w.note;
  auto only = WrapEntry(ordered_json::parse(R"({"command": "node", "env": {"PYTHONPATH": "/p"}})"), kOpts);
  ASSERT_EQ(only.kind, WrapOutcome::Kind::kWrapped);
  EXPECT_FALSE(only.entry.contains("env"));
  for (const char* text : {R"({"command": "node", "env": {"BASH_ENV": "${input:x}"}})", R"({"command": "node", "env": {"ENV": 1}})"}) {
    auto left = WrapEntry(ordered_json::parse(text), kOpts);
    EXPECT_EQ(left.kind, WrapOutcome::Kind::kLeft) << text;
    EXPECT_NE(left.note.find("--env="), std::string::npos) << left.note;
  }
  auto secret = WrapEntry(ordered_json::parse(R"({"command": "node", "env": {"npm_config__authToken": "t"}})"), kOpts);
  EXPECT_EQ(secret.kind, WrapOutcome::Kind::kLeft);
  EXPECT_NE(secret.note.find("secret"), std::string::npos) << secret.note;
  WrapOptions names_only = kOpts;
  names_only.env_values = false;
  auto toml = WrapEntry(ordered_json::parse(R"({"command": "node", "env": {"GIT_SSH_COMMAND": ""}})"), names_only);
  EXPECT_EQ(toml.kind, WrapOutcome::Kind::kLeft);
  EXPECT_NE(toml.note.find("GIT_SSH_COMMAND"), std::string::npos) << toml.note;
}

// HOME, PATH and the XDG bases in the env block would pick mcpcell's own
// ~/.npmrc and host npm, outside any cell: moved into args like the
// code-injecting names, and an envFile naming one is left.
TEST(WrapEntry, EnvThatChoosesWhatRunsMovesIntoArgsOrLeavesTheEntry) {
  auto w = WrapEntry(ordered_json::parse(
      R"({"command": "node", "args": ["s.js"], "env": {"HOME": "/h", "API_KEY": "k", "PATH": "/p/bin"}})"), kOpts);
  ASSERT_EQ(w.kind, WrapOutcome::Kind::kWrapped) << w.note;
  EXPECT_EQ(Args(w), (std::vector<std::string>{"run", "--isolate", "--env=HOME=/h", "--env=API_KEY",
                                               "--env=PATH=/p/bin", "--", "node", "s.js"}));
  EXPECT_EQ(w.entry["env"], ordered_json::parse(R"({"API_KEY": "k"})"));
  EXPECT_NE(w.note.find("HOME, PATH"), std::string::npos) << w.note;
  auto left = WrapEntry(ordered_json::parse(R"({"command": "node", "env": {"XDG_CONFIG_HOME": "${env:X}"}})"), kOpts);
  EXPECT_EQ(left.kind, WrapOutcome::Kind::kLeft);
  EXPECT_NE(left.note.find("--env=XDG_CONFIG_HOME=VALUE"), std::string::npos) << left.note;
  WrapOptions opts = kOpts;
  opts.env_file_names = [](const std::string&) -> Result<std::vector<std::string>> {
    return std::vector<std::string>{"A", "HOME"};
  };
  auto file = WrapEntry(ordered_json::parse(R"({"command": "node", "envFile": "/e/home.env"})"), opts);
  EXPECT_EQ(file.kind, WrapOutcome::Kind::kLeft);
  EXPECT_NE(file.note.find("sets HOME"), std::string::npos) << file.note;
}

// adv10: npm_config_* in an npx entry's env changes where mcpcell's npm
// fetches the package the policy judges by name: left, like uvx's UV_*.
TEST(WrapEntry, NpxWithAnNpmConfigSettingIsLeftSayingWhy) {
  for (const char* key : {"npm_config_registry", "NPM_CONFIG_REGISTRY", "npm_config_userconfig"}) {
    ordered_json e = ordered_json::parse(R"({"command": "npx", "args": ["-y", "pkg@1.0.0"]})");
    e["env"][key] = "http://127.0.0.1:9/";
    auto w = WrapEntry(e, kOpts);
    EXPECT_EQ(w.kind, WrapOutcome::Kind::kLeft) << key;
    EXPECT_NE(w.note.find(key), std::string::npos) << w.note;
  }
}

// adv10: VS Code's envFile: its names are passed like the env block's, or
// the entry is left saying why.
TEST(WrapEntry, EnvFileNamesArePassedByNameOrTheEntryIsLeft) {
  WrapOptions opts = kOpts;
  opts.env_file_names = [](const std::string& path) -> Result<std::vector<std::string>> {
    if (path == "/e/ok.env") return std::vector<std::string>{"A", "B"};
    if (path == "/e/bad.env") return std::vector<std::string>{"A", "LD_AUDIT"};
    return MakeError("read", path, "no such file");
  };
  auto w = WrapEntry(ordered_json::parse(R"({"command": "node", "envFile": "/e/ok.env", "env": {"B": "1"}})"), opts);
  ASSERT_EQ(w.kind, WrapOutcome::Kind::kWrapped) << w.note;
  EXPECT_EQ(Args(w), (std::vector<std::string>{"run", "--isolate", "--env=B", "--env=A", "--", "node"}));
  EXPECT_NE(w.note.find("envFile"), std::string::npos) << w.note;
  for (const char* f : {"/e/bad.env", "/e/none.env", "${workspaceFolder}/.env", "rel.env"}) {
    ordered_json e = ordered_json::parse(R"({"command": "node"})");
    e["envFile"] = f;
    auto left = WrapEntry(e, opts);
    EXPECT_EQ(left.kind, WrapOutcome::Kind::kLeft) << f;
    EXPECT_NE(left.note.find("envFile"), std::string::npos) << left.note;
  }
  EXPECT_EQ(WrapEntry(ordered_json::parse(R"({"command": "node", "envFile": "/e/ok.env"})"), kOpts).kind,
            WrapOutcome::Kind::kLeft);
}

TEST(ClientEnvFile, NamesAreReadAndABadNameIsRefusedByLine) {
  auto names = EnvFileNames("# c\nA=1\n\nexport B = x=y\nnot a line\nA=2\n");
  ASSERT_TRUE(names.ok()) << names.error().Message();
  EXPECT_EQ(*names, (std::vector<std::string>{"A", "B"}));
  auto bad = EnvFileNames("A=1\n--x=2\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().detail.find("line 2"), std::string::npos) << bad.error().detail;
}

// adv10: the note says "in a cell" only where that is true for the policy given.
TEST(WrapEntry, TheNoteOfASourceNamesThePolicyThatDecidesIt) {
  auto w = WrapEntry(ordered_json::parse(R"({"command": "npx", "args": ["pkg@1.0.0"]})"),
                     WrapOptions{"/m/mcpcell", std::string("/all.json")});
  ASSERT_EQ(w.kind, WrapOutcome::Kind::kWrapped);
  EXPECT_EQ(w.note.find("npx://pkg@1.0.0 in a cell"), std::string::npos) << w.note;
  EXPECT_NE(w.note.find("unless"), std::string::npos) << w.note;
}

TEST(ClientCodeInjectingEnv, TheFamiliesAreKnownAndPlainNamesAreNot) {
  for (const char* n : {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "NODE_OPTIONS", "NODE_PATH", "PYTHONSTARTUP",
                        "PYTHONPATH", "PYTHONHOME", "BASH_ENV", "ENV", "PERL5OPT", "PERL5LIB", "RUBYOPT",
                        "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_CONFIG_KEY_0", "GIT_DIR", "npm_config_node_options", "NPM_CONFIG_SCRIPT_SHELL",
                        "GCONV_PATH", "JAVA_TOOL_OPTIONS",
                        // adv13: a repository's shared config, programs run by name, package managers
                        "GIT_COMMON_DIR", "BROWSER", "EDITOR", "PAGER", "LESSOPEN", "COREPACK_HOME",
                        "COREPACK_NPM_REGISTRY", "YARN_YARN_PATH", "DENO_DIR", "BUN_INSTALL"}) {
    EXPECT_TRUE(InjectsCode(n)) << n;
  }
  for (const char* n : {"API_KEY", "HOME", "PATH", "GITHUB_TOKEN", "GIT_TOKEN", "NODE_ENV", "ENVIRONMENT", "LANG"}) {
    EXPECT_FALSE(InjectsCode(n)) << n;
  }
}

TEST(ClientCodeInjectingEnv, ChoosesWhatRunsNamesTheHomeThePathAndTheXdgBases) {
  for (const char* n : {"HOME", "PATH", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_HOME", "XDG_DATA_DIRS",
                        "XDG_CACHE_HOME", "XDG_STATE_HOME", "ZDOTDIR", "INPUTRC"}) {
    EXPECT_TRUE(ChoosesWhatRuns(n)) << n;
  }
  for (const char* n : {"API_KEY", "HOMEPAGE", "path", "XDG_RUNTIME_DIR", "LD_PRELOAD", "LANG"}) {
    EXPECT_FALSE(ChoosesWhatRuns(n)) << n;
  }
}

TEST(ClientCodeInjectingEnv, EveryCaVariableChoosesWhatRuns) {
  std::vector<std::string_view> names;
  for (const CaVariable& ca : CaVariables()) names.push_back(ca.name);
  EXPECT_EQ(names, (std::vector<std::string_view>{"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE",
                                                  "CURL_CA_BUNDLE", "SSL_CERT_DIR"}));
  for (std::string_view n : names) EXPECT_TRUE(ChoosesWhatRuns(n)) << n;
}

TEST(ClientCodeInjectingEnv, PicksPackageIndexIsEveryPipAndUvSetting) {
  for (const char* n : {"PIP_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_NO_INDEX", "PIP_FIND_LINKS", "UV_INDEX",
                        "UV_DEFAULT_INDEX", "UV_CACHE_DIR"}) {
    EXPECT_TRUE(PicksPackageIndex(n)) << n;
  }
  for (const char* n : {"pip_index_url", "PIPX_HOME", "UVICORN_PORT", "PIP", "API_KEY"}) {
    EXPECT_FALSE(PicksPackageIndex(n)) << n;
  }
}

}  // namespace
}  // namespace mcpcell
