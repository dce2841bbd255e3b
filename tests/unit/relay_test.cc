// The relay's framing and decisions, message by message (src/relay/): the
// hostile-framing list of issue 17 — each case asserts what the server would
// see (nothing, or exactly the line) and what the client gets back.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "relay/envelope.h"
#include "relay/line_framer.h"
#include "relay/mcp_relay.h"
#include "util/units.h"

namespace mcpcell {
namespace {

using Forward = RelayAction::Forward;
using json = nlohmann::json;

// Feeds `bytes` to a framer `chunk` bytes at a time; returns the lines.
std::vector<LineFramer::Line> Frame(LineFramer* f, const std::string& bytes, std::size_t chunk,
                                    std::vector<std::string>* texts) {
  std::vector<LineFramer::Line> out;
  std::size_t at = 0;
  while (at < bytes.size()) {
    std::size_t room = 0;
    char* p = f->WritePtr(&room);
    std::size_t n = std::min({room, chunk, bytes.size() - at});
    std::copy_n(bytes.data() + at, n, p);
    f->Commit(n);
    at += n;
    while (auto l = f->Next()) {
      out.push_back(*l);
      texts->push_back(std::string(l->text));
    }
  }
  if (auto l = f->Finish()) {
    out.push_back(*l);
    texts->push_back(std::string(l->text));
  }
  return out;
}

TEST(LineFramer, SplitsLinesInOneByteReads) {
  LineFramer f(1024);
  std::vector<std::string> texts;
  auto lines = Frame(&f, "{\"a\":1}\n{\"b\":2}\r\n\nlast", 1, &texts);
  ASSERT_EQ(texts.size(), 4u);
  EXPECT_EQ(texts[0], "{\"a\":1}");
  EXPECT_EQ(texts[1], "{\"b\":2}\r");
  EXPECT_EQ(texts[2], "");
  EXPECT_EQ(texts[3], "last");
}

TEST(LineFramer, PassesA24MiBLineIntact) {
  LineFramer f(64u << 20);
  std::string big = "{\"x\":\"" + std::string(24u << 20, 'a') + "\"}";
  std::vector<std::string> texts;
  auto lines = Frame(&f, big + "\n{}\n", 65536, &texts);
  ASSERT_EQ(texts.size(), 2u);
  EXPECT_FALSE(lines[0].oversize);
  EXPECT_EQ(texts[0], big);
  EXPECT_EQ(texts[1], "{}");
}

TEST(LineFramer, AnOversizeLineKeepsOnlyItsPrefixAndTheNextLineSurvives) {
  LineFramer f(1000);
  std::string big = "{\"id\":7,\"x\":\"" + std::string(5000, 'a') + "\"}";
  std::vector<std::string> texts;
  auto lines = Frame(&f, big + "\n{\"ok\":1}\n", 100, &texts);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[0].oversize);
  EXPECT_EQ(lines[0].size, big.size());
  EXPECT_EQ(IdFromPrefix(texts[0]), "7");
  EXPECT_FALSE(lines[1].oversize);
  EXPECT_EQ(texts[1], "{\"ok\":1}");
}

TEST(IdFromPrefix, FindsOnlyAPlainTopLevelId) {
  EXPECT_EQ(IdFromPrefix(R"({"jsonrpc":"2.0","id":"a b","params":{"id":9)"), "\"a b\"");
  EXPECT_EQ(IdFromPrefix(R"({"params":{"id":9},"id":-3,"x":")"), "-3");
  EXPECT_EQ(IdFromPrefix(R"({"params":{"id":9,"x":")"), "null");
  EXPECT_EQ(IdFromPrefix(R"({"\u0069d":4,"x":")"), "null");
  EXPECT_EQ(IdFromPrefix(R"({"id":1.5,)"), "null");
  EXPECT_EQ(IdFromPrefix(R"([{"id":1},)"), "null");
}
// The oversize line's id scanner, attacked: it must find only the one
// top-level "id" the peer reads, fed a byte at a time, or say "null".
std::string ScanId(const std::string& text) {
  TopLevelIdScanner s;
  for (char c : text) s.Feed(std::string_view(&c, 1));
  TopLevelIdScanner t;
  t.Feed(text);
  EXPECT_EQ(std::string(s.Value()), std::string(t.Value())) << text;
  return std::string(s.Value());
}

TEST(TopLevelIdScanner, FindsTheOneTopLevelIdWhereverItIs) {
  EXPECT_EQ(ScanId(R"({"id":7,"method":"x"})"), "7");
  EXPECT_EQ(ScanId(R"({"result":{"id":1,"a":[{"id":2}]},"jsonrpc":"2.0","id":3})"), "3");
  EXPECT_EQ(ScanId(R"( { "method" : "x" , "id" : "a}b,c" } )"), R"("a}b,c")");
  EXPECT_EQ(ScanId(R"({"x":"\",\"id\":9,","id":-4})"), "-4");
  EXPECT_EQ(ScanId(R"({"x":"\\","id":5})"), "5");
  EXPECT_EQ(ScanId("{\"method\":\"x\",\r\n\"id\"\t:\t12\r\n}"), "12");
}

TEST(TopLevelIdScanner, SaysNullWhenThePeerMightReadAnotherId) {
  EXPECT_EQ(ScanId(R"({"id":1,"id":2})"), "null") << "two ids: the peer takes the last";
  EXPECT_EQ(ScanId(R"({"\u0069d":1})"), "null");
  EXPECT_EQ(ScanId(R"({"\"id":1})"), "null");
  EXPECT_EQ(ScanId(R"({"idx":1,"i":2})"), "null");
  EXPECT_EQ(ScanId(R"({"params":{"id":1}})"), "null");
  EXPECT_EQ(ScanId(R"([{"id":1}])"), "null");
  EXPECT_EQ(ScanId(R"(}{"id":1})"), "null");
  EXPECT_EQ(ScanId(R"({"id":")" + std::string(1025, 'a') + "\"}"), "null");
  EXPECT_EQ(ScanId(R"({"id":")" + std::string(1024, 'a') + "\"}"), "\"" + std::string(1024, 'a') + "\"");
  EXPECT_EQ(ScanId(R"({"method":"x","id":12)"), "null") << "cut before the value ended";
  EXPECT_EQ(IdFromValue("1.0"), "null");
  EXPECT_EQ(IdFromValue("-0"), "0") << "as Parse reads it (simdjson: the integer 0)";
  EXPECT_EQ(IdFromValue(R"("a\"b")"), "null");
  EXPECT_EQ(IdFromValue("{\"a\":1}"), "null");
}


// A relay with `deny` rules and an audit sink that keeps the records.
struct Harness {
  std::vector<json> records;
  McpRelay relay;
  explicit Harness(std::vector<std::string> deny = {"write_file", "move_*"}, std::vector<std::string> allow = {},
                   std::size_t max = 1u << 20)
      : relay(RelayConfig{"srv", ToolRules{std::move(allow), std::move(deny), "profile fs.json"}, max, 4096},
              [this](const json& e) -> Status { records.push_back(e); return {}; }) {}
  explicit Harness(RelayConfig config) : relay(std::move(config), [this](const json& e) -> Status { records.push_back(e); return {}; }) {}

  // simdjson reads past the end of a line; LineFramer guarantees the padding.
  RelayAction Send(bool from_client, const std::string& text) {
    padded_ = text + std::string(LineFramer::kPadding, ' ');
    LineFramer::Line l{std::string_view(padded_.data(), text.size()), false, text.size()};
    return from_client ? relay.FromClient(l) : relay.FromServer(l);
  }
  RelayAction Client(const std::string& t) { return Send(true, t); }
  RelayAction Server(const std::string& t) { return Send(false, t); }

 private:
  std::string padded_;
};

json Reply(const RelayAction& a) { return json::parse(a.reply); }

void ExpectRefused(const RelayAction& a, const json& id, int code = kInvalidRequest) {
  EXPECT_EQ(a.forward, Forward::kDrop);
  ASSERT_FALSE(a.reply.empty());
  json r = Reply(a);
  EXPECT_EQ(r["id"], id) << a.reply;
  EXPECT_EQ(r["error"]["code"], code) << a.reply;
}

TEST(McpRelay, PassesAnAllowedCallAndItsAnswerAndAuditsOneRecord) {
  Harness h;
  auto a = h.Client(R"({"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/x"}}})");
  EXPECT_EQ(a.forward, Forward::kAsIs);
  EXPECT_TRUE(a.reply.empty());
  auto b = h.Server(R"({"jsonrpc":"2.0","id":0,"result":{"content":[]}})");
  EXPECT_EQ(b.forward, Forward::kAsIs);
  ASSERT_EQ(h.records.size(), 1u);
  EXPECT_EQ(h.records[0]["event"], "tool_call");
  EXPECT_EQ(h.records[0]["tool"], "read_file");
  EXPECT_EQ(h.records[0]["outcome"], "ok");
  EXPECT_EQ(h.records[0]["arguments"]["keys"], json::array({"path"}));
  EXPECT_FALSE(h.records[0].dump().find("/x") != std::string::npos) << "arguments are redacted by default";
}

TEST(McpRelay, RefusesADeniedCallNamingTheRule) {
  Harness h;
  auto a = h.Client(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_file","arguments":{}}})");
  ExpectRefused(a, 5, kRefusedByPolicy);
  std::string msg = Reply(a)["error"]["message"];
  EXPECT_NE(msg.find("mcpcell.tools.deny[0]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("profile fs.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("remove that entry"), std::string::npos) << msg;
  ASSERT_EQ(h.records.size(), 1u);
  EXPECT_EQ(h.records[0]["outcome"], "denied");
  // The server never saw it, so its "answer" is forged.
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":5,"result":{}})").forward, Forward::kDrop);
  EXPECT_EQ(h.records.back()["event"], "forged_response");
}

TEST(McpRelay, DeniesAGlobAndDenyWinsOverAllow) {
  Harness h({"move_*"}, {"*"});
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"move_file"}})"), 1,
                kRefusedByPolicy);
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file"}})").forward,
            Forward::kAsIs);
}

TEST(McpRelay, AnAllowListDeniesEverythingElse) {
  Harness h({}, {"read_*"});
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file"}})"), 1,
                kRefusedByPolicy);
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text"}})").forward,
            Forward::kAsIs);
}

struct HostileCase {
  const char* name;
  const char* line;
  json id;  // the id the refusal carries
  int code;
};

class HostileClientLine : public ::testing::TestWithParam<HostileCase> {};

TEST_P(HostileClientLine, IsRefusedWithAnErrorAndNeverForwarded) {
  Harness h;
  const HostileCase& c = GetParam();
  ExpectRefused(h.Client(c.line), c.id, c.code);
  EXPECT_FALSE(h.records.empty()) << "every refusal is on the record";
}

const json kNull = nullptr;

INSTANTIATE_TEST_SUITE_P(
    Relay, HostileClientLine,
    ::testing::Values(
        HostileCase{"DuplicateMethod", R"({"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"write_file"}})", 1, kInvalidRequest},
        HostileCase{"DuplicateName", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","name":"write_file"}})", 1, kInvalidRequest},
        HostileCase{"DuplicateId", R"({"jsonrpc":"2.0","id":5,"id":null,"method":"tools/call","params":{"name":"write_file"}})", kNull, kInvalidRequest},
        HostileCase{"DuplicateArguments", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{},"arguments":{"a":1}}})", 1, kInvalidRequest},
        HostileCase{"DuplicateArgumentKey", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a","path":"b"}}})", 1, kInvalidRequest},
        HostileCase{"DuplicateDeepKey", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"a":[{"k":1,"k":2}]}}})", 1, kInvalidRequest},
        HostileCase{"DuplicateParams", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file"},"params":{"name":"write_file"}})", 1, kInvalidRequest},
        HostileCase{"UnicodeEscapedMethod", R"({"jsonrpc":"2.0","id":2,"method":"\u0074ools/call","params":{"name":"write_file"}})", 2, kRefusedByPolicy},
        HostileCase{"SlashEscapedMethod", R"({"jsonrpc":"2.0","id":2,"method":"tools\/call","params":{"name":"write_file"}})", 2, kRefusedByPolicy},
        HostileCase{"EscapedToolName", R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write\u005ffile"}})", 2, kRefusedByPolicy},
        HostileCase{"EscapedKeyName", R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"n\u0061me":"write_file"}})", 2, kRefusedByPolicy},
        HostileCase{"EscapedDuplicateKey", R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","n\u0061me":"write_file"}})", 2, kInvalidRequest},
        HostileCase{"NulInToolName", R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file\u0000x"}})", 2, kRefusedByPolicy},
        HostileCase{"NulInReadableName", R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file\u0000"}})", 2, kRefusedByPolicy},
        HostileCase{"BatchDenied", R"([{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file"}}])", kNull, kInvalidRequest},
        HostileCase{"BatchAllowed", R"([{"jsonrpc":"2.0","id":1,"method":"tools/list"}])", kNull, kInvalidRequest},
        HostileCase{"BatchMixed", R"([{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file"}}])", kNull, kInvalidRequest},
        HostileCase{"BatchEmpty", "[]", kNull, kInvalidRequest},
        HostileCase{"BatchLeadingWhitespace", "  \t [{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}]", kNull, kInvalidRequest},
        HostileCase{"InvalidJson", R"({"jsonrpc":"2.0","id":1,"method":"tools/call",)", kNull, kParseError},
        HostileCase{"InvalidUtf8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"write\xff_file\"}}", kNull, kParseError},
        HostileCase{"OverlongUtf8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"write\xc0\xdf\"}}", kNull, kParseError},
        HostileCase{"NullIdRequest", R"({"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"read_file"}})", kNull, kInvalidRequest},
        HostileCase{"FloatId", R"({"jsonrpc":"2.0","id":1.0,"method":"tools/list"})", kNull, kInvalidRequest},
        HostileCase{"HugeId", R"({"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"})", kNull, kInvalidRequest},
        HostileCase{"ObjectId", R"({"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"})", kNull, kInvalidRequest},
        HostileCase{"NoJsonrpc", R"({"id":1,"method":"tools/list"})", 1, kInvalidRequest},
        HostileCase{"MethodNotString", R"({"jsonrpc":"2.0","id":1,"method":["tools/call"]})", 1, kInvalidRequest},
        HostileCase{"MethodAndResult", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","result":{}})", 1, kInvalidRequest},
        HostileCase{"CallWithoutName", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}})", 1, kInvalidRequest},
        HostileCase{"CallNameNotString", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":["write_file"]}})", 1, kInvalidRequest},
        HostileCase{"ArgumentsNotObject", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":[1]}})", 1, kInvalidRequest},
        HostileCase{"ParamsArray", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":["write_file",{}]})", 1, kInvalidRequest},
        HostileCase{"ReadWithoutUri", R"({"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"url":"file:///etc/passwd"}})", 1, kInvalidRequest},
        HostileCase{"DenyIsCaseSensitiveButEscapesDecode", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u0077rite_file"}})", 1, kRefusedByPolicy},
        HostileCase{"ParamsString", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":"write_file"})", 1, kInvalidRequest},
        HostileCase{"HugeNumber", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"n":1e999999}}})", kNull, kParseError}),
    [](const ::testing::TestParamInfo<HostileCase>& i) { return std::string(i.param.name); });

// Lines that start with '{' or '[' after white space some peer might skip
// (MayBeMessage): each is judged, none is forwarded as plain text.
class WhiteSpaceBeforeMessage : public ::testing::TestWithParam<const char*> {};

TEST_P(WhiteSpaceBeforeMessage, IsJudgedNotPassedAsText) {
  Harness h;
  const std::string call = R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file"}})";
  auto a = h.Client(std::string(GetParam()) + call);
  EXPECT_EQ(a.forward, Forward::kDrop);
  ASSERT_FALSE(a.reply.empty());
  EXPECT_NE(Reply(a)["error"]["code"], 0);
  auto b = h.Client(std::string(GetParam()) + "[" + call + "]");
  EXPECT_EQ(b.forward, Forward::kDrop);
  EXPECT_FALSE(b.reply.empty());
}

INSTANTIATE_TEST_SUITE_P(Relay, WhiteSpaceBeforeMessage,
                         ::testing::Values("", " \t\r", "\xef\xbb\xbf", "\xc2\xa0", "\xc2\x85", "\x0b", "\x0c",
                                           "\x1c\x1d\x1e\x1f", "\x7f", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\x83",
                                           "\xe2\x80\x8b", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80",
                                           "\xe1\x9a\x80", "\xe1\xa0\x8e", "\xa0", "\x85", "\x01\xef\xbb\xbf \xc2\xa0"));

TEST(McpRelay, ABomBeforeACallIsRefusedNotPassed) {
  Harness h;
  // json.loads(bytes) skips the BOM and would run the call; simdjson does not
  // parse it, so the line is refused (fail closed), whatever the tool.
  ExpectRefused(h.Client("\xef\xbb\xbf" R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file"}})"),
                nullptr, kParseError);
}

// What cannot be a message to JSON.parse, json.loads or pydantic passes as it
// came (a plain program's output), counted in session_end.
TEST(McpRelay, PlainTextPassesUnjudgedAndIsCounted) {
  Harness h;
  for (const char* text : {"hello", "", "   ", "\t\r", "42", "\"tools/call\"", "null", "true", "PATH=/bin {x}",
                           "\xe2\x80\x8d{\"jsonrpc\":\"2.0\"}", "\xff\xfe", "]"}) {
    EXPECT_EQ(h.Client(text).forward, Forward::kAsIs) << text;
    EXPECT_EQ(h.Server(text).forward, Forward::kAsIs) << text;
  }
  EXPECT_TRUE(h.records.empty());
  h.relay.End();
  ASSERT_EQ(h.records.back()["event"], "session_end");
  EXPECT_EQ(h.records.back()["unjudged_lines"]["client"], 12);
  EXPECT_EQ(h.records.back()["unjudged_lines"]["server"], 12);
}

// A line the relay sees as plain text but a reader splits in two (Python's
// universal newlines split on a lone CR; str.splitlines() on more): the part
// after the break is judged too, so the whole line is refused.
class HiddenAfterABreak : public ::testing::TestWithParam<const char*> {};

TEST_P(HiddenAfterABreak, IsJudgedNotPassed) {
  Harness h;
  std::string line = std::string("hello") + GetParam() + R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file"}})";
  auto a = h.Client(line);
  EXPECT_EQ(a.forward, Forward::kDrop);
  EXPECT_FALSE(a.reply.empty());
}

INSTANTIATE_TEST_SUITE_P(Relay, HiddenAfterABreak,
                         ::testing::Values("\r", "\r ", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\xc2\x85", "\x85",
                                           "\xe2\x80\xa8", "\xe2\x80\xa9", "\r\xc2\xa0", "\x01"));

TEST(MayBeMessage, PlainTextWithBreaksButNoJsonAfterThemStaysText) {
  EXPECT_FALSE(MayBeMessage("a\rb"));
  EXPECT_FALSE(MayBeMessage("PATH=/bin {x}"));
  EXPECT_FALSE(MayBeMessage("a\r"));
  EXPECT_TRUE(MayBeMessage("a\r[1]"));
  // 16 MiB of controls and breaks: linear (a quadratic scan would not finish in the test's lifetime).
  std::string runs(16u << 20, '\r');
  for (std::size_t i = 0; i < runs.size(); i += 3) runs[i] = 'x';
  EXPECT_FALSE(MayBeMessage(runs));
  EXPECT_FALSE(MayBeMessage(std::string(16u << 20, '\x01')));
  EXPECT_TRUE(MayBeMessage(std::string(16u << 20, '\x01') + "{"));
}

TEST(MayBeMessage, MatchesTheStrictestReader) {
  EXPECT_TRUE(MayBeMessage("{"));
  EXPECT_TRUE(MayBeMessage("\xef\xbb\xbf\xef\xbb\xbf["));
  EXPECT_TRUE(MayBeMessage(std::string("\0{", 2)));
  EXPECT_FALSE(MayBeMessage("\xef\xbb"));          // a cut BOM, then nothing
  EXPECT_FALSE(MayBeMessage("\xe2\x80\x8c{"));  // U+200C is no white space to anyone
  EXPECT_FALSE(MayBeMessage("x{"));
  EXPECT_FALSE(MayBeMessage(" \t"));
}

TEST(McpRelay, ADuplicateKeyIsNamedByItsPath) {
  Harness h;
  auto a = h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"l":[0,{"k":1,"k":2}]}}})");
  std::string msg = Reply(a)["error"]["message"];
  EXPECT_NE(msg.find("\"params.arguments.l[1].k\""), std::string::npos) << msg;
}

TEST(McpRelay, DeepNestingIsRefusedNotRecursedInto) {
  Harness h;
  std::string deep = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"a":)" +
                     std::string(100000, '[') + std::string(100000, ']') + "}}}";
  ExpectRefused(h.Client(deep), nullptr, kParseError);
}

TEST(McpRelay, RawNulBytesAreRefused) {
  Harness h;
  std::string inside("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"write\0\"}}", 73);
  ExpectRefused(h.Client(inside), nullptr, kParseError);
  std::string after = R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})";
  after.push_back('\0');
  ExpectRefused(h.Client(after), nullptr, kParseError);
}

TEST(McpRelay, CrlfLineIsDecidedNormally) {
  Harness h;
  ExpectRefused(h.Client("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\"}}\r"), 3,
                kRefusedByPolicy);
}

TEST(McpRelay, IdsOneAndStringOneAreDifferentRequests) {
  Harness h;
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})").forward, Forward::kAsIs);
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":"1","method":"tools/list"})").forward, Forward::kAsIs);
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"), 1);  // 1 is still unanswered
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":"1","result":{"tools":[]}})").forward, Forward::kReplaced);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":"1","result":{"tools":[]}})").forward, Forward::kDrop)
      << "a second answer to the same id is forged";
  EXPECT_NE(h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})").forward, Forward::kDrop);
}

TEST(McpRelay, ACallWithoutIdIsDroppedAndAudited) {
  Harness h;
  auto a = h.Client(R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"read_file"}})");
  EXPECT_EQ(a.forward, Forward::kDrop);
  ASSERT_EQ(h.records.size(), 1u);
  EXPECT_EQ(h.records[0]["event"], "relay_refused");
}

TEST(McpRelay, NotificationsPass) {
  Harness h;
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").forward, Forward::kAsIs);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})").forward, Forward::kAsIs);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","method":"x"})").forward, Forward::kAsIs);
}

TEST(McpRelay, JudgedMethodsWithoutIdAreDroppedInEitherSpelling) {
  Harness h;
  for (const char* m : {"tools/call", "tools\\/call", "\\u0074ools/call", "resources/read", "prompts/get"}) {
    auto a = h.Client(std::string(R"({"jsonrpc":"2.0","method":")") + m + R"(","params":{"name":"write_file"}})");
    EXPECT_EQ(a.forward, Forward::kDrop) << m;
  }
  EXPECT_EQ(h.records.size(), 5u);
}

TEST(McpRelay, ForgedResponsesAreDroppedInBothDirections) {
  Harness h;
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":0,"result":{}})").forward, Forward::kDrop);
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":0,"result":{}})").forward, Forward::kDrop);
  EXPECT_EQ(h.records.size(), 2u);
  EXPECT_EQ(h.records[0]["event"], "forged_response");
  EXPECT_EQ(h.records[1]["from"], "client");
}

TEST(McpRelay, BothSidesNumberFromZeroWithoutMixingUp) {
  Harness h;
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}})").forward, Forward::kAsIs);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":0,"method":"roots/list"})").forward, Forward::kAsIs);
  // The client answers the server's roots/list 0; the client's initialize 0 is still open.
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":0,"result":{"roots":[]}})").forward, Forward::kAsIs);
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":0,"result":{"roots":[]}})").forward, Forward::kDrop);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"1"}}})").forward,
            Forward::kAsIs);
  EXPECT_EQ(h.records.back()["event"], "session_start");
  EXPECT_EQ(h.records.back()["protocol"], "2025-06-18");
}

TEST(McpRelay, ToolsListIsRewrittenWithoutDeniedToolsAndKeepsCacheHints) {
  Harness h;
  h.Client(R"({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"c"}})");
  auto a = h.Server(R"({"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"read_file","inputSchema":{"type":"object"}},)"
                    R"({"name":"write_file"},{"name":"move_file"},{"name":"write\u005ffile"},{"nope":1},"str"],)"
                    R"("nextCursor":"d","ttlMs":5000,"cacheScope":"session","resultType":"complete"}})");
  ASSERT_EQ(a.forward, Forward::kReplaced);
  json r = json::parse(a.replacement);
  EXPECT_EQ(r["id"], 4);
  ASSERT_EQ(r["result"]["tools"].size(), 1u) << a.replacement;
  EXPECT_EQ(r["result"]["tools"][0]["name"], "read_file");
  EXPECT_EQ(r["result"]["nextCursor"], "d");
  EXPECT_EQ(r["result"]["ttlMs"], 5000);
  EXPECT_EQ(r["result"]["cacheScope"], "session");
}

TEST(McpRelay, AToolsListWithDuplicateNamesInAToolIsRefused) {
  Harness h;
  h.Client(R"({"jsonrpc":"2.0","id":4,"method":"tools/list"})");
  auto a = h.Server(R"({"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"read_file","name":"write_file"}]}})");
  ASSERT_EQ(a.forward, Forward::kReplaced);
  EXPECT_EQ(json::parse(a.replacement)["error"]["code"], kInvalidRequest);
}

TEST(McpRelay, NewEraRequestsStandAloneAndRetriesAreJudgedAgain) {
  Harness h;
  const std::string meta = R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"})";
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask",)" + meta + "}}").forward,
            Forward::kAsIs);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}})").forward,
            Forward::kAsIs);
  EXPECT_TRUE(h.records.empty()) << "the call waits for its next round";
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","inputResponses":{},"requestState":"s",)" +
                         meta + "}}"),
                2, kRefusedByPolicy);
  h.relay.End();
  ASSERT_GE(h.records.size(), 3u);
  const json& left = h.records[h.records.size() - 2];
  EXPECT_EQ(left["tool"], "ask");
  EXPECT_EQ(left["outcome"], "input_required");
  EXPECT_EQ(left["protocol"], "2026-07-28");
}

TEST(McpRelay, OutcomesIsErrorAndError) {
  Harness h;
  h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}})");
  h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[]}})");
  EXPECT_EQ(h.records.back()["outcome"], "isError");
  h.Client(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}})");
  h.Server(R"({"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no"}})");
  EXPECT_EQ(h.records.back()["outcome"], "error");
  EXPECT_EQ(h.records.back()["error_code"], -32602);
}

TEST(McpRelay, AnOversizeRequestGetsAnErrorWithItsId) {
  Harness h({}, {}, 1000);
  std::string prefix = R"({"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"read_file","arguments":{"x":")";
  LineFramer::Line l{prefix, true, 5000};
  std::string padded = prefix + std::string(64, ' ');
  l.text = std::string_view(padded.data(), prefix.size());
  auto a = h.relay.FromClient(l);
  ExpectRefused(a, "big", kMessageTooLarge);
}

TEST(McpRelay, AnOversizeAnswerBecomesAnErrorForThatRequest) {
  Harness h({}, {}, 1000);
  h.Client(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file"}})");
  std::string prefix = R"({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":")";
  std::string padded = prefix + std::string(64, ' ');
  LineFramer::Line l{std::string_view(padded.data(), prefix.size()), true, 5000};
  auto a = h.relay.FromServer(l);
  ASSERT_EQ(a.forward, Forward::kReplaced);
  EXPECT_EQ(json::parse(a.replacement)["id"], 3);
  EXPECT_EQ(json::parse(a.replacement)["error"]["code"], kMessageTooLarge);
}

TEST(McpRelay, CancelledCallsAreRecordedOnceAndSessionEndCounts) {
  Harness h;
  h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}})");
  h.Client(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  EXPECT_EQ(h.records.back()["outcome"], "cancelled");
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":1,"result":{}})").forward, Forward::kAsIs);
  h.Client(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}})");
  std::size_t before = h.records.size();
  h.relay.End();
  ASSERT_EQ(h.records.size(), before + 2);
  EXPECT_EQ(h.records[before]["outcome"], "no_response");
  EXPECT_EQ(h.records.back()["event"], "session_end");
}

RelayConfig Limited(double rate, std::size_t burst, std::size_t inflight, std::chrono::milliseconds timeout) {
  RelayConfig c{"srv", ToolRules{{}, {"write_file"}, "profile fs.json"}, 1u << 20, 4096};
  c.call_rate = rate;
  c.call_burst = burst;
  c.max_inflight = inflight;
  c.call_timeout = timeout;
  return c;
}

std::string Call(int id, const char* tool = "read_file") {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" + tool + R"("}})";
}

TEST(RelayLimits, TheCallRateRefusesPastTheBurstWithTheIdAndOnTheRecord) {
  Harness h(Limited(1.0 / 3600, 2, 0, {}));  // 2 calls, then one an hour
  EXPECT_EQ(h.Client(Call(1)).forward, Forward::kAsIs);
  EXPECT_EQ(h.Client(Call(2)).forward, Forward::kAsIs);
  auto a = h.Client(Call(3));
  ExpectRefused(a, 3, kLimitReached);
  EXPECT_NE(Reply(a)["error"]["message"].get<std::string>().find("--call-rate"), std::string::npos);
  EXPECT_EQ(h.records.back()["outcome"], "limited");
  EXPECT_EQ(h.records.back()["limit"], "call_rate");
  EXPECT_EQ(h.records.back()["id"], 3);
  // Other requests are not calls: they pass.
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":4,"method":"tools/list"})").forward, Forward::kAsIs);
  // resources/read and prompts/get draw on the same bucket.
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"file:///a"}})"), 5,
                kLimitReached);
  EXPECT_EQ(h.records.back()["uri"], "file:///a");
}

TEST(RelayLimits, ADeniedCallStaysDeniedAndUsesNoToken) {
  Harness h(Limited(1.0 / 3600, 1, 0, {}));
  ExpectRefused(h.Client(Call(1, "write_file")), 1, kRefusedByPolicy);
  EXPECT_EQ(h.Client(Call(2)).forward, Forward::kAsIs);
  ExpectRefused(h.Client(Call(3, "write_file")), 3, kRefusedByPolicy);
}

TEST(RelayLimits, InFlightCountsUnansweredCallsAndCancelledOnesUntilAnswered) {
  Harness h(Limited(0, 0, 2, {}));
  EXPECT_EQ(h.Client(Call(1)).forward, Forward::kAsIs);
  EXPECT_EQ(h.Client(Call(2)).forward, Forward::kAsIs);
  ExpectRefused(h.Client(Call(3)), 3, kLimitReached);
  EXPECT_EQ(h.records.back()["limit"], "max_inflight");
  // Cancelling does not free a slot: the server may still be running the call.
  h.Client(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  ExpectRefused(h.Client(Call(4)), 4, kLimitReached);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":1,"result":{}})").forward, Forward::kAsIs);
  EXPECT_EQ(h.Client(Call(5)).forward, Forward::kAsIs);
  // Requests from the server (sampling) and the server's own ids are not the client's calls.
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}})").forward, Forward::kAsIs);
}

TEST(RelayLimits, ATimedOutCallIsAnsweredCancelledAndItsLateAnswerDropped) {
  Harness h(Limited(0, 0, 1, std::chrono::milliseconds(1)));
  EXPECT_EQ(h.relay.MsToNextDeadline(), -1);
  EXPECT_EQ(h.Client(Call(7)).forward, Forward::kAsIs);
  EXPECT_GE(h.relay.MsToNextDeadline(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // well past the 1 ms deadline
  EXPECT_EQ(h.relay.MsToNextDeadline(), 0);
  auto expired = h.relay.Expire();
  ASSERT_EQ(expired.size(), 1u);
  ExpectRefused(RelayAction{Forward::kDrop, {}, expired[0].reply}, 7, kLimitReached);
  json cancel = json::parse(expired[0].replacement);
  EXPECT_EQ(cancel["method"], "notifications/cancelled");
  EXPECT_EQ(cancel["params"]["requestId"], 7);
  EXPECT_EQ(h.records.back()["outcome"], "timeout");
  EXPECT_TRUE(h.relay.Expire().empty()) << "expired once";
  EXPECT_EQ(h.relay.MsToNextDeadline(), -1);
  // The slot is free again; the late answer is not passed (the client was answered).
  EXPECT_EQ(h.Client(Call(8)).forward, Forward::kAsIs);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":7,"result":{}})").forward, Forward::kDrop);
  // An expired id is taken until its late answer comes (adv7: reused, that
  // answer would pass as the new call's); then it may be used again.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(h.relay.Expire().size(), 1u);
  EXPECT_EQ(h.Client(Call(8)).forward, Forward::kDrop);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":8,"result":{}})").forward, Forward::kDrop);
  EXPECT_EQ(h.Client(Call(8)).forward, Forward::kAsIs);
  h.relay.End();
  EXPECT_EQ(h.records.back()["limited"], 2);
  EXPECT_EQ(h.records.back()["late_answers_dropped"], 2);
}

TEST(AuditContent, RedactedByDefaultToKeysKindsSizeAndDigest) {
  Harness h;
  h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"path":"/secret","n":3,"o":{"k":"v"}}}})");
  h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"TOPSECRET"}]}})");
  const json& r = h.records.back();
  EXPECT_EQ(r["arguments"]["kinds"], json({{"path", "string"}, {"n", "number"}, {"o", "object"}}));
  EXPECT_EQ(r["arguments"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_FALSE(r["arguments"].contains("content"));
  EXPECT_FALSE(r["result"].contains("content"));
  std::string text = r.dump();
  EXPECT_EQ(text.find("/secret"), std::string::npos);
  EXPECT_EQ(text.find("TOPSECRET"), std::string::npos);
}

TEST(AuditContent, CapturesArgumentsAndResultsWhenAsked) {
  RelayConfig c{"srv", ToolRules{{}, {"write_file"}, "profile fs.json"}, 1u << 20, 4096};
  c.audit_content = true;
  Harness h(std::move(c));
  h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"path":"/secret"}}})");
  h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"TOPSECRET"}]}})");
  const json& r = h.records.back();
  EXPECT_EQ(r["arguments"]["content"], json({{"path", "/secret"}}));
  EXPECT_EQ(r["result"]["content"]["content"][0]["text"], "TOPSECRET");
  // A denied call's arguments too (what was attempted).
  h.Client(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"p":"x"}}})");
  EXPECT_EQ(h.records.back()["outcome"], "denied");
  EXPECT_EQ(h.records.back()["arguments"]["content"], json({{"p", "x"}}));
  // An error answer is captured as the error object.
  h.Client(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a"}})");
  h.Server(R"({"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}})");
  EXPECT_EQ(h.records.back()["result"]["content"]["message"], "bad");
}

const std::string kV2Meta = R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"})";

std::string V2Call(int id, const std::string& tool, const std::string& extra = "") {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" + tool +
         R"(","arguments":{"a":1},)" + extra + kV2Meta + "}}";
}

std::string InputRequired(int id, const std::string& state) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{}}},"requestState":")" +
         state + R"("}})";
}

TEST(Rounds, ACallOverThreeRoundsIsOneRecordWithItsRoundsCounted) {
  Harness h;
  EXPECT_EQ(h.Client(V2Call(1, "ask")).forward, Forward::kAsIs);
  EXPECT_EQ(h.Server(InputRequired(1, "st-1")).forward, Forward::kAsIs);
  EXPECT_TRUE(h.records.empty()) << "the call is not over yet";
  EXPECT_EQ(h.Client(V2Call(2, "ask", R"("inputResponses":{"q":{"action":"accept"}},"requestState":"st-1",)")).forward,
            Forward::kAsIs);
  EXPECT_EQ(h.Server(InputRequired(2, "st-2")).forward, Forward::kAsIs);
  EXPECT_EQ(h.Client(V2Call(3, "ask", R"("inputResponses":{"q":{"action":"accept"}},"requestState":"st-2",)")).forward,
            Forward::kAsIs);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}})").forward, Forward::kAsIs);
  ASSERT_EQ(h.records.size(), 1u);
  const json& r = h.records[0];
  EXPECT_EQ(r["outcome"], "ok");
  EXPECT_EQ(r["rounds"], 3);
  EXPECT_EQ(r["round_ids"], json::array({1, 2}));
  EXPECT_EQ(r["id"], 3);
  EXPECT_EQ(r["protocol"], "2026-07-28");
  EXPECT_EQ(r["input_responses"]["keys"], json::array({"q"}));
  EXPECT_FALSE(r.contains("unknown_request_state"));
}

// A server picks the requestState's size, and up to max_pending calls wait
// for their next round: the relay keys them by a digest, so a 600 KiB state
// still links the retry, and is not what is kept.
TEST(Rounds, AHugeRequestStateStillLinksItsRetry) {
  Harness h;
  std::string state(600u << 10, 's');  // under the harness's 1 MiB maximum
  h.Client(V2Call(1, "ask"));
  EXPECT_EQ(h.Server(InputRequired(1, state)).forward, Forward::kAsIs);
  h.Client(V2Call(2, "ask", R"("inputResponses":{"q":{"action":"accept"}},"requestState":")" + state + R"(",)"));
  h.Server(R"({"jsonrpc":"2.0","id":2,"result":{"content":[]}})");
  ASSERT_EQ(h.records.size(), 1u);
  EXPECT_EQ(h.records[0]["rounds"], 2);
  EXPECT_FALSE(h.records[0].contains("unknown_request_state"));
  EXPECT_LT(h.records[0].dump().size(), 4096u);
}

// The name kept for an unanswered call's record is cut at 1 KiB; the rules
// still judge the whole name.
TEST(McpRelay, ALongToolNameIsJudgedWholeAndKeptCut) {
  Harness h(std::vector<std::string>{"*_file"});
  std::string name = std::string(3000, 'a') + "_file";
  auto a = h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":")" + name + R"("}})");
  ExpectRefused(a, 1, kRefusedByPolicy);
  std::string allowed = std::string(3000, 'a') + "_dir";
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":")" + allowed + R"("}})").forward,
            Forward::kAsIs);
  h.Server(R"({"jsonrpc":"2.0","id":2,"result":{"content":[]}})");
  std::string kept = h.records.back()["tool"];
  EXPECT_LT(kept.size(), 1100u);
  EXPECT_NE(kept.find("(3004 bytes)"), std::string::npos) << kept;
}

TEST(Rounds, ARetryNamingADeniedToolIsDeniedWhateverTheStateSays) {
  Harness h;
  h.Client(V2Call(1, "ask"));
  h.Server(InputRequired(1, "st-1"));
  ExpectRefused(h.Client(V2Call(2, "write_file", R"("inputResponses":{},"requestState":"st-1",)")), 2, kRefusedByPolicy);
  EXPECT_EQ(h.records.back()["outcome"], "denied");
  EXPECT_EQ(h.records.back()["rounds"], 2);
  // A denied tool's own retry (a state the client made up) is denied too.
  ExpectRefused(h.Client(V2Call(3, "write_file", R"("inputResponses":{},"requestState":"forged",)")), 3, kRefusedByPolicy);
  ExpectRefused(h.Client(V2Call(4, "move_file", R"("requestState":"st-1",)")), 4, kRefusedByPolicy);
}

TEST(Rounds, EachRoundCountsAgainstTheCallRate) {
  Harness h(Limited(1.0 / 3600, 2, 0, {}));
  h.Client(V2Call(1, "ask"));
  h.Server(InputRequired(1, "st-1"));
  h.Client(V2Call(2, "ask", R"("requestState":"st-1",)"));
  h.Server(InputRequired(2, "st-2"));
  ExpectRefused(h.Client(V2Call(3, "ask", R"("requestState":"st-2",)")), 3, kLimitReached);
}

TEST(Rounds, ACallLeftAtInputRequiredIsRecordedAsSuchAtSessionEnd) {
  Harness h;
  h.Client(V2Call(1, "ask"));
  h.Server(InputRequired(1, "st-1"));
  h.Client(V2Call(2, "ask", R"("requestState":"never-given",)"));
  h.Server(R"({"jsonrpc":"2.0","id":2,"result":{"content":[]}})");
  EXPECT_EQ(h.records.back()["unknown_request_state"], true);
  EXPECT_EQ(h.records.back()["rounds"], 1);
  h.relay.End();
  ASSERT_GE(h.records.size(), 3u);
  const json& left = h.records[h.records.size() - 2];
  EXPECT_EQ(left["outcome"], "input_required");
  EXPECT_EQ(left["id"], 1);
  EXPECT_EQ(h.records.back()["event"], "session_end");
}

TEST(Rounds, CacheHintsAndResultTypePassUnchangedThroughAFilteredList) {
  Harness h;
  h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{)" + kV2Meta + "}}");
  auto a = h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"write_file"},{"name":"ask"}],"ttlMs":60000,"cacheScope":"session","resultType":"complete"}})");
  ASSERT_EQ(a.forward, Forward::kReplaced);
  json r = json::parse(a.replacement)["result"];
  EXPECT_EQ(r["ttlMs"], 60000);
  EXPECT_EQ(r["cacheScope"], "session");
  EXPECT_EQ(r["resultType"], "complete");
  EXPECT_EQ(r["tools"].size(), 1u);
}

TEST(Rounds, DiscoverThenFallBackToInitialize) {
  Harness h;
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{}})").forward,
            Forward::kAsIs);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":"server-discover-probe-1","error":{"code":-32601,"message":"Method not found"}})").forward,
            Forward::kAsIs);
  EXPECT_TRUE(h.records.empty()) << "a failed probe starts no session";
  h.Client(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}}})");
  h.Server(R"({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"2"}}})");
  ASSERT_EQ(h.records.size(), 1u);
  EXPECT_EQ(h.records[0]["event"], "session_start");
  EXPECT_EQ(h.records[0]["protocol"], "2025-11-25");
  EXPECT_EQ(h.records[0]["client_info"]["name"], "c");
}

// The filter-bypass suite (issue 17): a call the rules deny must not reach
// the server in any spelling the server would read as that tool.
struct BypassCase {
  const char* name;
  std::vector<std::string> deny;
  std::vector<std::string> allow;
  std::string line;
};

class FilterBypass : public ::testing::TestWithParam<BypassCase> {};

TEST_P(FilterBypass, TheCallNeverReachesTheServer) {
  const BypassCase& c = GetParam();
  Harness h(c.deny, c.allow);
  auto a = h.Client(c.line);
  EXPECT_EQ(a.forward, Forward::kDrop) << c.line;
  if (!a.reply.empty()) {
    EXPECT_NE(Reply(a)["error"]["code"], 0);
  }
  EXPECT_FALSE(h.records.empty()) << "on the record";
}

std::string CallNamed(const std::string& raw_name, const std::string& extra = "") {
  return R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":)" + raw_name + extra + "}}";
}

const std::vector<std::string> kDenyWrite = {"write_file", "move_*"};
const std::vector<std::string> kAllowRead = {"read_*"};

INSTANTIATE_TEST_SUITE_P(
    Relay, FilterBypass,
    ::testing::Values(
        BypassCase{"Plain", kDenyWrite, {}, CallNamed(R"("write_file")")},
        BypassCase{"GlobMatch", kDenyWrite, {}, CallNamed(R"("move_file")")},
        BypassCase{"GlobMatchAnything", kDenyWrite, {}, CallNamed(R"("move_")")},
        BypassCase{"EscapedFirstLetter", kDenyWrite, {}, CallNamed(R"("\u0077rite_file")")},
        BypassCase{"EscapedUnderscore", kDenyWrite, {}, CallNamed(R"("write\u005ffile")")},
        BypassCase{"EscapedUpperHex", kDenyWrite, {}, CallNamed(R"("write\u005Ffile")")},
        BypassCase{"AllEscaped", kDenyWrite, {}, CallNamed(R"("\u0077\u0072\u0069\u0074\u0065\u005f\u0066\u0069\u006c\u0065")")},
        BypassCase{"TrailingNul", kDenyWrite, {}, CallNamed(R"("write_file\u0000")")},
        BypassCase{"LeadingNul", kDenyWrite, {}, CallNamed(R"("\u0000write_file")")},
        BypassCase{"TrailingNewline", kDenyWrite, {}, CallNamed(R"("write_file\n")")},
        BypassCase{"TrailingTab", kDenyWrite, {}, CallNamed(R"("write_file\t")")},
        BypassCase{"TrailingDel", kDenyWrite, {}, CallNamed(R"("write_file\u007f")")},
        BypassCase{"DuplicateNameLastWins", kDenyWrite, {}, CallNamed(R"("read_file","name":"write_file")")},
        BypassCase{"EscapedDuplicateKey", kDenyWrite, {}, CallNamed(R"("read_file","n\u0061me":"write_file")")},
        BypassCase{"NameNotString", kDenyWrite, {}, CallNamed(R"(["write_file"])")},
        BypassCase{"NameObject", kDenyWrite, {}, CallNamed(R"({"toString":"write_file"})")},
        BypassCase{"EscapedMethod", kDenyWrite, {}, R"({"jsonrpc":"2.0","id":9,"method":"tools\/call","params":{"name":"write_file"}})"},
        BypassCase{"UnicodeEscapedMethod", kDenyWrite, {}, R"({"jsonrpc":"2.0","id":9,"method":"\u0074\u006f\u006f\u006c\u0073/call","params":{"name":"write_file"}})"},
        BypassCase{"BatchOfOne", kDenyWrite, {}, R"([{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"write_file"}}])"},
        BypassCase{"BatchBehindNbsp", kDenyWrite, {}, "\xc2\xa0" R"([{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"write_file"}}])"},
        BypassCase{"NoId", kDenyWrite, {}, R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"write_file"}})"},
        BypassCase{"NullId", kDenyWrite, {}, R"({"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"write_file"}})"},
        BypassCase{"RetryWithAnotherCallsState", kDenyWrite, {}, CallNamed(R"("write_file")", R"(,"inputResponses":{},"requestState":"s")")},
        BypassCase{"AllowListCyrillicLookAlike", {}, kAllowRead, CallNamed(R"("re\u0430d_file")")},
        BypassCase{"AllowListFullwidth", {}, kAllowRead, CallNamed(R"("\uff52ead_file")")},
        BypassCase{"AllowListCaseVariant", {}, kAllowRead, CallNamed(R"("READ_file")")},
        BypassCase{"AllowListEmptyName", {}, kAllowRead, CallNamed(R"("")")},
        BypassCase{"AllowListPrefixThenNul", {}, kAllowRead, CallNamed(R"("read_\u0000x")")},
        BypassCase{"DenyWinsOverAllow", {"read_secret"}, kAllowRead, CallNamed(R"("read_secret")")}),
    [](const ::testing::TestParamInfo<BypassCase>& i) { return std::string(i.param.name); });

TEST(FilterBypassList, EveryPageIsFilteredOnItsOwn) {
  Harness h;
  for (int page = 0; page < 3; ++page) {
    h.Client(R"({"jsonrpc":"2.0","id":)" + std::to_string(page) + R"(,"method":"tools/list","params":{"cursor":"c"}})");
    auto a = h.Server(R"({"jsonrpc":"2.0","id":)" + std::to_string(page) +
                      R"(,"result":{"tools":[{"name":"write_file"},{"name":"read_file"},{"name":"write_file"},{"name":"move_x"}],"nextCursor":"n"}})");
    ASSERT_EQ(a.forward, Forward::kReplaced);
    json r = json::parse(a.replacement)["result"];
    EXPECT_EQ(r["tools"], json::parse(R"([{"name":"read_file"}])"));
    EXPECT_EQ(r["nextCursor"], "n");
  }
}

TEST(FilterBypassList, EscapedNamesNamelessEntriesAndNonStringNamesAreHidden) {
  Harness h;
  h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  auto a = h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"write\u005ffile"},{"title":"x"},{"name":1},{"name":"ok"}]}})");
  ASSERT_EQ(a.forward, Forward::kReplaced);
  EXPECT_EQ(json::parse(a.replacement)["result"]["tools"], json::parse(R"([{"name":"ok"}])"));
}

TEST(FilterBypassList, AListWithoutAToolsArrayOrWithADuplicateToolsKeyIsRefused) {
  Harness h;
  h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  auto a = h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"tools":{"name":"write_file"}}})");
  ASSERT_EQ(a.forward, Forward::kReplaced);
  EXPECT_TRUE(json::parse(a.replacement).contains("error"));
  h.Client(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  auto b = h.Server(R"({"jsonrpc":"2.0","id":2,"result":{"tools":[],"tools":[{"name":"write_file"}]}})");
  ASSERT_EQ(b.forward, Forward::kReplaced);
  EXPECT_TRUE(json::parse(b.replacement).contains("error"));
}

TEST(FilterBypassList, AListNoOneAskedForIsDroppedNotPassed) {
  Harness h;
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"write_file"}]}})").forward, Forward::kDrop);
}

TEST(FilterBypassList, ListChangedMidSessionAndACallWhileTheListIsInFlight) {
  Harness h;
  h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  ExpectRefused(h.Client(CallNamed(R"("write_file")")), 9, kRefusedByPolicy);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})").forward, Forward::kAsIs);
  auto a = h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"write_file"},{"name":"new_tool"}]}})");
  EXPECT_EQ(json::parse(a.replacement)["result"]["tools"], json::parse(R"([{"name":"new_tool"}])"));
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"write_file"}})"), 10,
                kRefusedByPolicy);
}

TEST(RelayLimits, ParseRate) {
  EXPECT_EQ(ParseRate("10/s")->burst, 10u);
  EXPECT_DOUBLE_EQ(ParseRate("600/m")->per_second, 10.0);
  EXPECT_DOUBLE_EQ(ParseRate("36/h")->per_second, 0.01);
  for (const char* bad : {"", "10", "0/s", "-1/s", "1.5/s", "10/d", "10/", "/s", "10/ss", "99999999999999999999/s"}) {
    EXPECT_FALSE(ParseRate(bad).ok()) << bad;
  }
}

// Attacks (adv) that did not get through, pinned. Each line is one the
// TypeScript SDK's ReadBuffer (split at '\n', strip one '\r', JSON.parse,
// zod) or Python's TextIOWrapper (universal newlines: '\r' also ends a
// line) might read differently from the relay; the relay must refuse it, or
// decide on exactly what the server will run.
INSTANTIATE_TEST_SUITE_P(
    AdvEncodings, HostileClientLine,
    ::testing::Values(
        HostileCase{"Bom", "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\"}}", kNull, kParseError},
        HostileCase{"TwoMessagesOnALine", R"({"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file"}})", kNull, kParseError},
        HostileCase{"PythonSplitsAtCr", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\"}}", kNull, kParseError},
        HostileCase{"RawCrInsideAString", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\",\"arguments\":{\"a\":\"x\r{\\\"jsonrpc\\\":\\\"2.0\\\"}\"}}}", kNull, kParseError},
        HostileCase{"IdOnePointZero", R"({"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"write_file"}})", kNull, kInvalidRequest},
        HostileCase{"IdOneEZero", R"({"jsonrpc":"2.0","id":1e0,"method":"tools/call","params":{"name":"read_file"}})", kNull, kInvalidRequest},
        HostileCase{"IdTrue", R"({"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"read_file"}})", kNull, kInvalidRequest},
        HostileCase{"DuplicateJsonrpc", R"({"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file"}})", 1, kInvalidRequest},
        HostileCase{"DuplicateToolsKeyInMeta", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","_meta":{"a":1,"\u0061":2}}})", 1, kInvalidRequest},
        HostileCase{"ProtoKeyCarriesTheName", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{"name":"write_file"}}})", 1, kInvalidRequest},
        HostileCase{"EscapedSlashInName", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"move_\/x","x":0}})", 1, kRefusedByPolicy},
        HostileCase{"SurrogatePairEscapes", R"({"jsonrpc":"2.0","id":"\ud83d\ude00","method":"tools/call","params":{"name":"\u0077\u0072\u0069\u0074\u0065\u005f\u0066\u0069\u006c\u0065"}})", "\xf0\x9f\x98\x80", kRefusedByPolicy},
        HostileCase{"MoveGlobEscaped", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u006dove_anything"}})", 1, kRefusedByPolicy},
        // Python's TextIOWrapper (the Python MCP SDK's stdio reader) also ends a
        // line at a lone CR, and str.splitlines() at U+2028: the second piece is a
        // denied call, so a line that does not start with '{' is not harmless text.
        HostileCase{"TextThenCrThenDeniedCall", "x\r{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\"}}", kNull, kParseError},
        HostileCase{"StringThenCrThenDeniedCall", "\"x\"\r{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\"}}", kNull, kParseError},
        HostileCase{"NumberThenCrThenDeniedCall", "1\r{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\"}}", kNull, kParseError},
        HostileCase{"TextThenLineSeparatorThenDeniedCall", "x\xe2\x80\xa8{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\"}}", kNull, kParseError},
        HostileCase{"DelInName", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\\u007f\"}}", 1, kRefusedByPolicy}),
    [](const ::testing::TestParamInfo<HostileCase>& i) { return std::string(i.param.name); });

TEST(McpRelay, AdvIdReusedWhilePendingIsRefusedAndTheFirstCallStillGetsItsAnswer) {
  Harness h;
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file"}})").forward, Forward::kAsIs);
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_text"}})"), 1);
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file"}})"), 1);
  // "1" is another id; the server answering "1" or 1.0 for 1 is forged or refused, never passed.
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":"1","result":{}})").forward, Forward::kDrop);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":1.0,"result":{}})").forward, Forward::kDrop);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"content":[]}})").forward, Forward::kAsIs);
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"content":[]}})").forward, Forward::kDrop)
      << "a second answer to one request is forged";
}

TEST(McpRelay, AdvAServerCannotListADeniedToolInAnyEncodingOrPage) {
  Harness h;
  h.Client(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  auto a = h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"write\u005ffile"},{"name":"write\/file"},)"
                    R"({"name":"read_file"},{"name":"m\u006fve_file"},{"name":"write_file\u0000"},{"nam\u0065":"write_file"},)"
                    R"({"title":"write_file"}],"nextCursor":"c2"}})");
  ASSERT_EQ(a.forward, Forward::kReplaced);
  json r = json::parse(a.replacement);
  std::vector<std::string> names;
  for (const auto& t : r["result"]["tools"]) names.push_back(t.value("name", std::string("<none>")));
  EXPECT_EQ(names, (std::vector<std::string>{"write/file", "read_file"})) << a.replacement;
  EXPECT_EQ(r["result"]["nextCursor"], "c2");
  // The next page is judged on its own, and so is a list after list_changed.
  h.Client(R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"c2"}})");
  auto b = h.Server(R"({"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"move_x"}]}})");
  EXPECT_EQ(json::parse(b.replacement)["result"]["tools"], json::array());
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})").forward, Forward::kAsIs);
  // A tools list sent as the answer to another request is not a tools list to the client.
  h.Client(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  auto c = h.Server(R"({"jsonrpc":"2.0","id":3,"result":{"t\u006fols":[{"name":"write_file"}]}})");
  EXPECT_EQ(json::parse(c.replacement)["result"]["tools"], json::array()) << c.replacement;
  // A list whose tools are not an array cannot be judged, so it does not pass.
  h.Client(R"({"jsonrpc":"2.0","id":4,"method":"tools/list"})");
  auto d = h.Server(R"({"jsonrpc":"2.0","id":4,"result":{"tools":{"0":{"name":"write_file"}}}})");
  EXPECT_EQ(json::parse(d.replacement)["error"]["code"], kInvalidRequest);
}

TEST(McpRelay, AdvAServerAnsweringBeforeTheClientAskedIsForged) {
  Harness h;
  // The server guesses the id of the client's next tools/list and answers first.
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":0,"result":{"tools":[{"name":"write_file"}]}})").forward, Forward::kDrop);
  EXPECT_EQ(h.records.back()["event"], "forged_response");
  h.Client(R"({"jsonrpc":"2.0","id":0,"method":"tools/list"})");
  auto a = h.Server(R"({"jsonrpc":"2.0","id":0,"result":{"tools":[{"name":"write_file"}]}})");
  EXPECT_EQ(json::parse(a.replacement)["result"]["tools"], json::array());
}

// Attack (adv): a server writing forged answers and garbage in a loop wrote
// one audit record per line, without limit. Now the first 100 per session
// are recorded and the rest counted; the client's own calls are all recorded.
TEST(McpRelay, AdvAServerCannotFloodTheAuditLog) {
  Harness h;
  for (int i = 0; i < 150; ++i) {
    EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":)" + std::to_string(1000 + i) + R"(,"result":{}})").forward, Forward::kDrop);
    EXPECT_EQ(h.Server("{\"jsonrpc\":\"2.0\",\"id\":1,").forward, Forward::kDrop);
  }
  for (int i = 0; i < 150; ++i) {
    ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":"tools/call","params":{"name":"write_file"}})"),
                  i, kRefusedByPolicy);
  }
  h.relay.End();
  std::size_t noise = 0, denied = 0;
  for (const auto& r : h.records) {
    if (r["event"] == "forged_response" || r["event"] == "relay_refused") ++noise;
    if (r["event"] == "tool_call" && r["outcome"] == "denied") ++denied;
  }
  EXPECT_EQ(noise, 100u);
  EXPECT_EQ(denied, 150u);
  ASSERT_EQ(h.records.back()["event"], "session_end");
  EXPECT_EQ(h.records.back()["forged"], 150);
  EXPECT_EQ(h.records.back()["refused"], 150);
  EXPECT_EQ(h.records.back()["held_back"], 200);
}

// Attack (adv): every unanswered id is kept, so a server sending requests the
// client does not answer yet (elicitation/create waits for a person) with
// 1 MiB string ids grew the supervisor by 1 MiB each: 2000 took it to 2 GB.
TEST(McpRelay, AdvLongIdsAreRefusedNotKept) {
  Harness h;
  std::string id(1025, 'i');
  auto a = h.Server(R"({"jsonrpc":"2.0","id":")" + id + R"(","method":"elicitation/create","params":{}})");
  EXPECT_EQ(a.forward, Forward::kDrop);
  EXPECT_NE(h.records.back()["reason"].get<std::string>().find("1025 bytes"), std::string::npos) << h.records.back();
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":")" + id + R"(","method":"tools/list"})"), nullptr);
  id.pop_back();
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":")" + id + R"(","method":"elicitation/create","params":{}})").forward,
            Forward::kAsIs);
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","id":")" + id + R"(","result":{"action":"decline"}})").forward, Forward::kAsIs);
}

// The same with the method: a request's method is kept while it is unanswered.
TEST(McpRelay, AdvLongMethodsAreRefusedNotKept) {
  Harness h;
  std::string m(1025, 'm');
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":1,"method":")" + m + R"("})").forward, Forward::kDrop);
  EXPECT_NE(h.records.back()["reason"].get<std::string>().find("1025 bytes"), std::string::npos) << h.records.back();
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":2,"method":")" + m + R"("})"), 2);
  m.pop_back();
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":1,"method":")" + m + R"("})").forward, Forward::kAsIs);
}

// Attack (adv): the TypeScript SDK writes a request as {method, params,
// jsonrpc, id} and a response as {result, jsonrpc, id} (shared/protocol.js),
// so in an oversize message from a real SDK peer the id comes after the
// payload, far past the kept prefix. The refusal must still carry it, or the
// client waits for an answer that never comes.
TEST(McpRelay, AnOversizeSdkRequestWithItsIdLastGetsAnErrorWithItsId) {
  Harness h({}, {}, 4096);
  LineFramer f(4096);
  std::string line = R"({"method":"tools/call","params":{"name":"read_file","arguments":{"x":")" +
                     std::string(200000, 'a') + R"("}},"jsonrpc":"2.0","id":7})" + "\n";
  std::size_t seen = 0;
  for (std::size_t chunk : {std::size_t{1} << 16, std::size_t{4093}}) {
    std::size_t at = 0;
    while (at < line.size()) {
      std::size_t room = 0;
      char* p = f.WritePtr(&room);
      std::size_t n = std::min({room, chunk, line.size() - at});
      std::copy_n(line.data() + at, n, p);
      f.Commit(n);
      at += n;
      while (auto l = f.Next()) {
        ++seen;
        ASSERT_TRUE(l->oversize);
        ExpectRefused(h.relay.FromClient(*l), 7, kMessageTooLarge);
      }
    }
  }
  EXPECT_EQ(seen, 2u);
}

TEST(McpRelay, AnOversizeSdkAnswerWithItsIdLastBecomesAnErrorForThatRequest) {
  Harness h({}, {}, 4096);
  h.Client(R"({"method":"tools/call","params":{"name":"read_file"},"jsonrpc":"2.0","id":3})");
  LineFramer f(4096);
  std::string line = R"({"result":{"content":[{"type":"text","text":")" + std::string(300000, 'b') +
                     R"("}]},"jsonrpc":"2.0","id":3})";  // the last line: no newline, Finish() hands it out
  std::vector<std::string> texts;
  auto lines = Frame(&f, line, 1 << 16, &texts);
  ASSERT_EQ(lines.size(), 1u);
  auto a = h.relay.FromServer(lines[0]);
  ASSERT_EQ(a.forward, Forward::kReplaced) << "the client would wait for request 3 forever";
  EXPECT_EQ(json::parse(a.replacement)["id"], 3);
  EXPECT_EQ(json::parse(a.replacement)["error"]["code"], kMessageTooLarge);
}


// Audit write errors fail closed: once a record cannot be written, no call
// runs and no answer whose record was lost reaches the client.
struct FailingAudit {
  std::vector<json> records;
  int room = 0;  ///< records written before the log "fills up"
  McpRelay relay{RelayConfig{"srv", ToolRules{{}, {"write_file"}, "profile fs.json"}, 1u << 20, 4096},
                 [this](const json& e) -> Status {
                   if (room-- <= 0) return Error{"write audit log", "/logs/calls.jsonl", ENOSPC, ""};
                   records.push_back(e);
                   return {};
                 }};
  std::string padded;
  RelayAction Send(bool from_client, const std::string& text) {
    padded = text + std::string(LineFramer::kPadding, ' ');
    LineFramer::Line l{std::string_view(padded.data(), text.size()), false, text.size()};
    return from_client ? relay.FromClient(l) : relay.FromServer(l);
  }
};

std::string Call(int id, const char* method, const char* params) {
  return fmt::format(R"({{"jsonrpc":"2.0","id":{},"method":"{}","params":{}}})", id, method, params);
}

TEST(McpRelay, AnAnswerWhoseRecordIsLostIsWithheldAndLaterCallsAreRefused) {
  FailingAudit h;
  h.room = 1;
  EXPECT_EQ(h.Send(true, Call(1, "tools/call", R"({"name":"a"})")).forward, Forward::kAsIs);
  EXPECT_EQ(h.Send(false, R"({"jsonrpc":"2.0","id":1,"result":{"content":[]}})").forward, Forward::kAsIs);
  ASSERT_EQ(h.records.size(), 1u) << "the first call's record fit";
  EXPECT_EQ(h.Send(true, Call(2, "tools/call", R"({"name":"a"})")).forward, Forward::kAsIs);
  auto answer = h.Send(false, R"({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"s3cret"}]}})");
  ASSERT_EQ(answer.forward, Forward::kReplaced) << "the result went out unrecorded";
  json withheld = json::parse(answer.replacement);
  EXPECT_EQ(withheld["id"], 2);
  EXPECT_EQ(withheld["error"]["code"], kAuditUnavailable);
  std::string msg = withheld["error"]["message"];
  EXPECT_NE(msg.find("/logs/calls.jsonl"), std::string::npos) << msg;
  EXPECT_NE(msg.find("No space left on device"), std::string::npos) << msg;
  EXPECT_EQ(answer.replacement.find("s3cret"), std::string::npos);
  for (const char* method : {"tools/call", "resources/read", "prompts/get"}) {
    const char* params = std::string_view(method) == "resources/read" ? R"({"uri":"file:///x"})" : R"({"name":"a"})";
    auto a = h.Send(true, Call(3, method, params));
    ExpectRefused(a, 3, kAuditUnavailable);
    std::string why = Reply(a)["error"]["message"];
    EXPECT_NE(why.find(method), std::string::npos) << why;
    EXPECT_NE(why.find("audit log cannot be written"), std::string::npos) << why;
  }
  // What is no call passes: the client can still list, ping and shut down.
  EXPECT_EQ(h.Send(true, Call(4, "tools/list", "{}")).forward, Forward::kAsIs);
  EXPECT_EQ(h.Send(false, R"({"jsonrpc":"2.0","id":4,"result":{"tools":[]}})").forward, Forward::kReplaced)
      << "filtered as usual";
}

TEST(McpRelay, AFailedRecordBeforeAnyCallRefusesTheFirstCall) {
  FailingAudit h;  // no room at all: session_start's record already fails
  EXPECT_EQ(h.Send(true, Call(0, "initialize", R"({"protocolVersion":"2025-06-18"})")).forward, Forward::kAsIs);
  EXPECT_EQ(h.Send(false, R"({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}})").forward,
            Forward::kAsIs);
  ExpectRefused(h.Send(true, Call(1, "tools/call", R"({"name":"a"})")), 1, kAuditUnavailable);
}

TEST(McpRelay, AnInputRequiredRoundIsWithheldOnceTheLogFails) {
  FailingAudit h;
  EXPECT_EQ(h.Send(true, Call(1, "tools/call", R"({"name":"a"})")).forward, Forward::kAsIs);
  h.Send(false, R"({"jsonrpc":"2.0","id":9,"result":{}})");  // a forged answer: its record fails
  auto a = h.Send(false, R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}})");
  EXPECT_EQ(a.forward, Forward::kReplaced) << "its next round would be refused anyway";
}

// mcpcell.prompts and mcpcell.resources: like tools — hidden from every list
// page, get/read refused naming the rule, deny wins; and the variants tried
// against them (escapes, duplicate keys, batches, no id, case, URI tricks).
RelayConfig ContentRules() {
  RelayConfig c{"srv", ToolRules{}, 1u << 20, 4096};
  c.prompts = ToolRules{{"*"}, {"secret_*"}, "profile p.json", "prompt", "mcpcell.prompts"};
  c.resources = ToolRules{{"file:///srv/*", "file:///etc/*"}, {"file:///etc/*"}, "profile p.json", "resource",
                          "mcpcell.resources"};
  return c;
}

std::string Get(int id, const std::string& name) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"prompts/get","params":{"name":")" + name + R"("}})";
}
std::string Read(int id, const std::string& uri) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"resources/read","params":{"uri":")" + uri + R"("}})";
}

TEST(ContentFilter, ADeniedPromptIsRefusedNamingTheRuleAndAnAllowedOnePasses) {
  Harness h(ContentRules());
  auto a = h.Client(Get(1, "secret_plan"));
  ExpectRefused(a, 1, kRefusedByPolicy);
  std::string msg = Reply(a)["error"]["message"];
  EXPECT_NE(msg.find("prompt \"secret_plan\" is denied by mcpcell.prompts.deny[0]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("profile p.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("remove that entry"), std::string::npos) << msg;
  EXPECT_EQ(h.records.back()["event"], "prompt_get");
  EXPECT_EQ(h.records.back()["outcome"], "denied");
  EXPECT_EQ(h.Client(Get(2, "summary")).forward, Forward::kAsIs);
}

TEST(ContentFilter, ADeniedResourceIsRefusedAndDenyWinsOverAllow) {
  Harness h(ContentRules());
  auto a = h.Client(Read(1, "file:///etc/passwd"));
  ExpectRefused(a, 1, kRefusedByPolicy);
  std::string msg = Reply(a)["error"]["message"];
  EXPECT_NE(msg.find("mcpcell.resources.deny[0]"), std::string::npos) << msg;
  EXPECT_EQ(h.Client(Read(2, "file:///srv/a.txt")).forward, Forward::kAsIs);
  auto other = h.Client(Read(3, "https://example.com/"));
  ExpectRefused(other, 3, kRefusedByPolicy);
  EXPECT_NE(Reply(other)["error"]["message"].get<std::string>().find("matches no entry of mcpcell.resources.allow"),
            std::string::npos);
}

TEST(ContentFilter, EscapesAreDecodedBeforeJudging) {
  Harness h(ContentRules());
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"s\u0065cret_plan"}})"), 1,
                kRefusedByPolicy);
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:\/\/\/etc\/passwd"}})"),
                2, kRefusedByPolicy);
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":3,"method":"prompts\/get","params":{"name":"secret_plan"}})"), 3,
                kRefusedByPolicy);
}

TEST(ContentFilter, DuplicateKeysBatchesAndMissingIdsAreRefused) {
  Harness h(ContentRules());
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"summary","name":"secret_plan"}})"), 1);
  ExpectRefused(h.Client(R"({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///srv/a","uri":"file:///etc/passwd"}})"), 2);
  ExpectRefused(h.Client("[" + Get(3, "secret_plan") + "]"), nullptr);
  ExpectRefused(h.Client(" [" + Read(4, "file:///etc/passwd") + "," + Read(5, "file:///srv/a") + "]"), nullptr);
  EXPECT_EQ(h.Client(R"({"jsonrpc":"2.0","method":"prompts/get","params":{"name":"secret_plan"}})").forward,
            Forward::kDrop) << "a get without an id is neither judged nor passed";
}

TEST(ContentFilter, ResourceUrisTheGlobsCannotDecideAreRefused) {
  Harness h(ContentRules());
  for (const char* uri : {"FILE:///ETC/passwd", "file:///%65tc/passwd", "file:///srv/../etc/passwd",
                          "file:///srv/./a", "file:///srv\\\\..\\\\etc\\\\passwd", "file:///srv/a\\u0001"}) {
    auto a = h.Client(Read(7, uri));
    ExpectRefused(a, 7, kRefusedByPolicy);
  }
  EXPECT_EQ(h.Client(Read(8, "file:///srv/a..b/c.txt")).forward, Forward::kAsIs) << "'..' inside a name is no segment";
}

TEST(ContentFilter, ListsHideWhatIsDeniedOnEveryPageAndKeepTheRest) {
  Harness h(ContentRules());
  h.Client(R"({"jsonrpc":"2.0","id":1,"method":"prompts/list"})");
  auto a = h.Server(R"({"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"secret_plan"},{"name":"summary"},{"name":"s\u0065cret_x"},{"title":"no name"},{"name":"summary"}],"nextCursor":"c2"}})");
  ASSERT_EQ(a.forward, Forward::kReplaced);
  json r = json::parse(a.replacement);
  EXPECT_EQ(r["id"], 1);
  EXPECT_EQ(r["result"]["prompts"], json::parse(R"([{"name":"summary"},{"name":"summary"}])"));
  EXPECT_EQ(r["result"]["nextCursor"], "c2");
  h.Client(R"({"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"cursor":"c2"}})");
  auto b = h.Server(R"({"jsonrpc":"2.0","id":2,"result":{"resources":[{"uri":"file:///etc/shadow","name":"s"},{"uri":"file:///srv/a","name":"a"},{"uri":"file:///srv/%2e%2e/etc/x","name":"x"}]}})");
  ASSERT_EQ(b.forward, Forward::kReplaced);
  EXPECT_EQ(json::parse(b.replacement)["result"]["resources"], json::parse(R"([{"uri":"file:///srv/a","name":"a"}])"));
  h.Client(R"({"jsonrpc":"2.0","id":3,"method":"resources/list"})");
  auto c = h.Server(R"({"jsonrpc":"2.0","id":3,"result":{"resources":"none"}})");
  ASSERT_EQ(c.forward, Forward::kReplaced);
  EXPECT_EQ(json::parse(c.replacement)["error"]["code"], kInvalidRequest) << "no array: cannot be filtered, refused";
}

TEST(ContentFilter, WithoutRulesListsAndCallsPassUntouched) {
  Harness h;
  EXPECT_EQ(h.Client(Get(1, "secret_plan")).forward, Forward::kAsIs);
  h.Client(R"({"jsonrpc":"2.0","id":2,"method":"prompts/list"})");
  EXPECT_EQ(h.Server(R"({"jsonrpc":"2.0","id":2,"result":{"prompts":[{"name":"secret_plan"}]}})").forward, Forward::kAsIs);
}

}  // namespace
}  // namespace mcpcell
