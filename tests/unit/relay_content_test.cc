// The prompt and resource rules beyond the three calls (relay/content_rules.h):
// URI templates hidden from resources/templates/list, subscribe and
// unsubscribe to a denied URI refused, a denied resource's updates dropped,
// completions of a denied prompt or template refused — each refusal naming
// the rule and how to allow it, each on the record.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "relay/envelope.h"
#include "relay/line_framer.h"
#include "relay/mcp_relay.h"

namespace mcpcell {
namespace {

using json = nlohmann::json;
using Forward = RelayAction::Forward;

RelayConfig Rules() {
  RelayConfig c{"srv", ToolRules{}, 1u << 20, 4096};
  c.prompts = ToolRules{{}, {"secret_*"}, "profile p.json", "prompt", "mcpcell.prompts"};
  c.resources = ToolRules{{"demo://*"}, {"demo://private/*"}, "profile p.json", "resource", "mcpcell.resources"};
  return c;
}

struct Relay {
  std::vector<json> records;
  McpRelay relay;
  explicit Relay(RelayConfig c = Rules())
      : relay(std::move(c), [this](const json& e) -> Status { records.push_back(e); return {}; }) {}
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

std::string Request(int id, const std::string& method, const std::string& params) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":)" + params + "}";
}
std::string Subscribe(int id, const std::string& uri, const char* method = "resources/subscribe") {
  return Request(id, method, R"({"uri":")" + uri + R"("})");
}

// The client's error for `a`, checked to be a policy refusal naming the rule and the fix.
std::string PolicyRefusal(const RelayAction& a, int id) {
  EXPECT_EQ(a.forward, Forward::kDrop);
  if (a.reply.empty()) return "";
  json r = json::parse(a.reply);
  EXPECT_EQ(r["id"], id) << a.reply;
  EXPECT_EQ(r["error"]["code"], kRefusedByPolicy) << a.reply;
  std::string msg = r["error"]["message"];
  EXPECT_NE(msg.find("profile p.json"), std::string::npos) << msg;
  return msg;
}

TEST(TemplateList, DeniedTemplatesAreHiddenAsTheUriTheyAreWrittenAs) {
  Relay r;
  r.Client(R"({"jsonrpc":"2.0","id":1,"method":"resources/templates/list"})");
  auto a = r.Server(R"({"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[)"
                    R"({"uriTemplate":"demo://private/{id}","name":"p"},)"
                    R"({"uriTemplate":"demo://public/{id}","name":"ok"},)"
                    R"({"uriTemplate":"demo:\/\/priv\u0061te\/{x}","name":"escaped"},)"
                    R"({"uriTemplate":"DEMO://PRIVATE/{id}","name":"case"},)"
                    R"({"uriTemplate":"file:///{path}","name":"not allowed"},)"
                    R"({"uriTemplate":"demo://public/%7Bid%7D","name":"pct"},)"
                    R"({"uriTemplate":"demo://public/../private/{id}","name":"dots"},)"
                    R"({"name":"no template"},{"uriTemplate":7,"name":"number"}],"nextCursor":"n","ttlMs":5}})");
  ASSERT_EQ(a.forward, Forward::kReplaced);
  json out = json::parse(a.replacement);
  EXPECT_EQ(out["id"], 1);
  EXPECT_EQ(out["result"]["resourceTemplates"], json::parse(R"([{"uriTemplate":"demo://public/{id}","name":"ok"}])"));
  EXPECT_EQ(out["result"]["nextCursor"], "n");
  EXPECT_EQ(out["result"]["ttlMs"], 5);
}

TEST(TemplateList, AResultWithoutTheArrayIsRefusedAndWithoutRulesPassesAsItCame) {
  Relay r;
  r.Client(R"({"jsonrpc":"2.0","id":2,"method":"resources/templates/list"})");
  auto a = r.Server(R"({"jsonrpc":"2.0","id":2,"result":{"templates":[]}})");
  ASSERT_EQ(a.forward, Forward::kReplaced);
  json e = json::parse(a.replacement);
  EXPECT_EQ(e["error"]["code"], kInvalidRequest);
  EXPECT_NE(e["error"]["message"].get<std::string>().find("no resourceTemplates array"), std::string::npos);
  Relay plain(RelayConfig{"srv", ToolRules{}, 1u << 20, 4096});
  plain.Client(R"({"jsonrpc":"2.0","id":3,"method":"resources/templates/list"})");
  EXPECT_EQ(plain.Server(R"({"jsonrpc":"2.0","id":3,"result":{"resourceTemplates":[{"uriTemplate":"demo://private/{id}"}]}})").forward,
            Forward::kAsIs);
}

TEST(Subscribe, ADeniedUriIsRefusedNamingTheRuleAndAudited) {
  Relay r;
  auto a = r.Client(Subscribe(4, "demo://private/1"));
  std::string msg = PolicyRefusal(a, 4);
  EXPECT_NE(msg.find("resource \"demo://private/1\" is denied by mcpcell.resources.deny[0]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("remove that entry to allow it"), std::string::npos) << msg;
  ASSERT_FALSE(r.records.empty());
  EXPECT_EQ(r.records.back()["event"], "resource_subscribe");
  EXPECT_EQ(r.records.back()["uri"], "demo://private/1");
  EXPECT_EQ(r.records.back()["outcome"], "denied");
  // The server never saw it, so an answer to it is forged.
  EXPECT_EQ(r.Server(R"({"jsonrpc":"2.0","id":4,"result":{}})").forward, Forward::kDrop);
  EXPECT_EQ(r.records.back()["event"], "forged_response");

  auto u = r.Client(Subscribe(5, "demo://private/1", "resources/unsubscribe"));
  PolicyRefusal(u, 5);
  EXPECT_EQ(r.records.back()["event"], "resource_unsubscribe");
  std::string other = PolicyRefusal(r.Client(Subscribe(6, "file:///etc/passwd")), 6);
  EXPECT_NE(other.find("matches no entry of mcpcell.resources.allow"), std::string::npos) << other;
  EXPECT_NE(other.find("add it there to allow it"), std::string::npos) << other;
}

TEST(Subscribe, AnAllowedUriPassesAndItsAnswerToo) {
  Relay r;
  EXPECT_EQ(r.Client(Subscribe(7, "demo://public/1")).forward, Forward::kAsIs);
  EXPECT_EQ(r.Server(R"({"jsonrpc":"2.0","id":7,"result":{}})").forward, Forward::kAsIs);
  EXPECT_EQ(r.Client(Subscribe(8, "demo://public/1", "resources/unsubscribe")).forward, Forward::kAsIs);
}

// Every way to spell a denied URI that a server may read as one.
class SubscribeBypass : public ::testing::TestWithParam<std::string> {};

TEST_P(SubscribeBypass, NeverReachesTheServer) {
  Relay r;
  auto a = r.Client(GetParam());
  EXPECT_EQ(a.forward, Forward::kDrop) << GetParam();
  if (!a.reply.empty()) {
    EXPECT_NE(json::parse(a.reply)["error"]["code"], 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Relay, SubscribeBypass,
    ::testing::Values(
        Subscribe(1, "demo://%70rivate/1"),                 // percent-encoded 'p'
        Subscribe(1, "demo://public/%2e%2e/private/1"),     // encoded dot segment
        Subscribe(1, "demo://public/../private/1"),         // dot segment
        Subscribe(1, "demo://public\\\\..\\\\private/1"),   // backslashes
        Subscribe(1, "DEMO://PRIVATE/1"),                   // case
        Subscribe(1, "demo:\\/\\/priv\\u0061te\\/1"),       // JSON escapes
        Subscribe(1, "demo://private/1\\u0000x"),           // NUL inside
        Request(1, "resources/subscribe", R"({"uri":"demo://public/1","uri":"demo://private/1"})"),  // duplicate key
        Request(1, "resources/subscribe", R"({"uri":["demo://private/1"]})"),  // not a string
        Request(1, "resources/subscribe", R"({})"),         // no uri
        Request(1, "resources/subscribe", R"("demo://private/1")"),  // params not an object
        Request(1, "resources\\/subscribe", R"({"uri":"demo://private/1"})"),  // escaped method
        "[" + Subscribe(1, "demo://private/1") + "]",       // batch
        R"({"jsonrpc":"2.0","method":"resources/subscribe","params":{"uri":"demo://private/1"}})"));  // no id

TEST(ResourceUpdates, ADeniedResourcesUpdateIsDroppedOnTheRecordAndAnAllowedOnePasses) {
  Relay r;
  auto a = r.Server(R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://private/1"}})");
  EXPECT_EQ(a.forward, Forward::kDrop);
  ASSERT_FALSE(r.records.empty());
  EXPECT_EQ(r.records.back()["event"], "relay_refused");
  EXPECT_EQ(r.records.back()["from"], "server");
  EXPECT_NE(r.records.back()["reason"].get<std::string>().find("mcpcell.resources.deny[0]"), std::string::npos);
  EXPECT_EQ(r.Server(R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://public/1"}})").forward,
            Forward::kAsIs);
  EXPECT_EQ(r.Server(R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://%70rivate/1"}})").forward,
            Forward::kDrop);
  EXPECT_EQ(r.Server(R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{}})").forward,
            Forward::kDrop);
  // Without resource rules, updates pass as they came.
  Relay plain(RelayConfig{"srv", ToolRules{}, 1u << 20, 4096});
  EXPECT_EQ(plain.Server(R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"demo://private/1"}})").forward,
            Forward::kAsIs);
}

TEST(Completion, OfADeniedPromptOrTemplateIsRefusedAndOfAnAllowedOnePasses) {
  Relay r;
  auto p = r.Client(Request(9, "completion/complete",
                            R"({"ref":{"type":"ref/prompt","name":"secret_plan"},"argument":{"name":"a","value":""}})"));
  std::string msg = PolicyRefusal(p, 9);
  EXPECT_NE(msg.find("mcpcell.prompts.deny[0]"), std::string::npos) << msg;
  EXPECT_EQ(r.records.back()["event"], "completion");
  auto t = r.Client(Request(10, "completion/complete",
                            R"({"ref":{"type":"ref/resource","uri":"demo://private/{id}"},"argument":{"name":"id","value":""}})"));
  PolicyRefusal(t, 10);
  EXPECT_EQ(r.Client(Request(11, "completion/complete",
                             R"({"ref":{"type":"ref/prompt","name":"summary"},"argument":{"name":"a","value":""}})")).forward,
            Forward::kAsIs);
  EXPECT_EQ(r.Client(Request(12, "completion/complete",
                             R"({"ref":{"type":"ref/resource","uri":"demo://public/{id}"},"argument":{"name":"id","value":""}})")).forward,
            Forward::kAsIs);
  EXPECT_EQ(r.Client(Request(13, "completion/complete", R"({"ref":{"type":"ref/prompt","name":5}})")).forward,
            Forward::kDrop) << "a name the rules cannot read is refused";
}

TEST(EmbeddedResources, ADeniedResourceInAPromptOrToolAnswerIsWithheldNamingTheRule) {
  Relay r;
  r.Client(Request(20, "prompts/get", R"({"name":"resource-prompt"})"));
  auto a = r.Server(R"({"jsonrpc":"2.0","id":20,"result":{"description":"d","messages":[)"
                    R"({"role":"user","content":{"type":"text","text":"see:"}},)"
                    R"({"role":"user","content":{"type":"resource","resource":{"uri":"demo://priv\u0061te/1","text":"SECRET-BODY"}}},)"
                    R"({"role":"user","content":{"type":"resource","resource":{"uri":"demo://public/1","text":"fine"}}}]}})");
  ASSERT_EQ(a.forward, Forward::kReplaced);
  EXPECT_EQ(a.replacement.find("SECRET-BODY"), std::string::npos) << a.replacement;
  json out = json::parse(a.replacement);
  EXPECT_EQ(out["id"], 20);
  EXPECT_EQ(out["result"]["description"], "d");
  auto& m = out["result"]["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0]["content"]["text"], "see:");
  EXPECT_EQ(m[1]["content"]["type"], "text");
  std::string text = m[1]["content"]["text"];
  EXPECT_NE(text.find("mcpcell.resources.deny[0]"), std::string::npos) << text;
  EXPECT_NE(text.find("remove that entry to allow it"), std::string::npos) << text;
  EXPECT_EQ(m[2]["content"]["resource"]["text"], "fine");
  auto withheld = [&r] {
    json found = json::array();
    for (const auto& e : r.records) {
      if (e["event"] == "resource_withheld") found.push_back(e);
    }
    return found;
  };
  ASSERT_EQ(withheld().size(), 1u);
  EXPECT_EQ(withheld()[0]["uris"], json::array({"demo://private/1"}));
  EXPECT_EQ(r.records.back()["event"], "prompt_get") << "the call is recorded as ever";

  r.Client(Request(21, "tools/call", R"({"name":"get-resource-links"})"));
  auto b = r.Server(R"({"jsonrpc":"2.0","id":21,"result":{"content":[)"
                    R"({"type":"resource_link","uri":"DEMO://PRIVATE/2","name":"x"},)"
                    R"({"type":"resource","resource":{"uri":"file:///etc/passwd","blob":"cm9vdA=="}},)"
                    R"({"type":"resource_link","uri":"demo://public/2","name":"ok"}]}})");
  ASSERT_EQ(b.forward, Forward::kReplaced);
  EXPECT_EQ(b.replacement.find("cm9vdA=="), std::string::npos);
  json c = json::parse(b.replacement)["result"]["content"];
  EXPECT_EQ(c[0]["type"], "text");
  EXPECT_EQ(c[1]["type"], "text") << "not on the allow list";
  EXPECT_EQ(c[2]["uri"], "demo://public/2");
  ASSERT_EQ(withheld().size(), 2u);
  EXPECT_EQ(withheld()[1]["count"], 2);
}

TEST(EmbeddedResources, AnswersWithoutDeniedResourcesAndRunsWithoutRulesPassAsTheyCame) {
  Relay r;
  r.Client(Request(22, "tools/call", R"({"name":"t"})"));
  EXPECT_EQ(r.Server(R"({"jsonrpc":"2.0","id":22,"result":{"content":[{"type":"resource","resource":{"uri":"demo://public/1","text":"x"}},{"type":"resource"},{"type":"resource_link"}]}})").forward,
            Forward::kAsIs);
  Relay plain(RelayConfig{"srv", ToolRules{}, 1u << 20, 4096});
  plain.Client(Request(23, "prompts/get", R"({"name":"p"})"));
  EXPECT_EQ(plain.Server(R"({"jsonrpc":"2.0","id":23,"result":{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"demo://private/1","text":"x"}}}]}})").forward,
            Forward::kAsIs);
}

}  // namespace
}  // namespace mcpcell
