// The relay's secret scan, message by message (src/relay/mcp_relay_secrets.cc):
// what each mode does in each direction, that no refusal or record holds the
// secret, and that a blocked answer still answers its request.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "audit/sha256.h"
#include "relay/envelope.h"
#include "relay/mcp_relay.h"

namespace mcpcell {
namespace {

using nlohmann::json;
using Forward = RelayAction::Forward;

const std::string kToken = "xoxb-123456789012-1234567890123-" "AbCdEfGhIjKlMnOpQrStUvWx";

struct Relay {
  std::vector<json> records;
  McpRelay relay;
  explicit Relay(SecretMode to_server = SecretMode::kRedact, SecretMode to_client = SecretMode::kRedact)
      : relay(Config(to_server, to_client), [this](const json& e) -> Status { records.push_back(e); return {}; }) {}
  static RelayConfig Config(SecretMode s, SecretMode c) {
    RelayConfig cfg;
    cfg.server = "srv";
    cfg.secrets.to_server = s;
    cfg.secrets.to_client = c;
    cfg.secrets.origin = "profile p.json";
    return cfg;
  }
  RelayAction Send(bool from_client, const std::string& text) {
    padded_ = text + std::string(LineFramer::kPadding, ' ');
    LineFramer::Line l{std::string_view(padded_.data(), text.size()), false, text.size()};
    return from_client ? relay.FromClient(l) : relay.FromServer(l);
  }
  std::string Call(int id, const std::string& value) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
                {"params", {{"name", "t"}, {"arguments", {{"v", value}}}}}}.dump();
  }
  std::string Result(int id, const std::string& text) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", {{"content", {{{"type", "text"}, {"text", text}}}}}}}.dump();
  }
  std::vector<json> Secrets() const {
    std::vector<json> out;
    for (const auto& r : records) {
      if (r["event"] == "secret") out.push_back(r);
    }
    return out;
  }

 private:
  std::string padded_;
};

void ExpectClean(const RelayAction& a) {
  EXPECT_EQ(a.replacement.find(kToken.substr(10)), std::string::npos) << a.replacement;
  EXPECT_EQ(a.reply.find(kToken.substr(10)), std::string::npos) << a.reply;
}

TEST(RelaySecrets, TheDefaultRedactsBothWays) {
  Relay r;
  RelayAction call = r.Send(true, r.Call(1, "token " + kToken));
  ASSERT_EQ(call.forward, Forward::kReplaced);
  EXPECT_EQ(json::parse(call.replacement)["params"]["arguments"]["v"], "token [REDACTED:slack-bot-token]");
  RelayAction res = r.Send(false, r.Result(1, kToken));
  ASSERT_EQ(res.forward, Forward::kReplaced);
  EXPECT_EQ(json::parse(res.replacement)["result"]["content"][0]["text"], "[REDACTED:slack-bot-token]");
  ASSERT_EQ(r.Secrets().size(), 2u);
  EXPECT_EQ(r.Secrets()[0]["findings"][0]["sha256"], Sha256Hex(kToken));
  for (const auto& rec : r.records) EXPECT_EQ(rec.dump().find(kToken), std::string::npos) << rec.dump();
}

TEST(RelaySecrets, ACleanMessagePassesAsIs) {
  Relay r;
  EXPECT_EQ(r.Send(true, r.Call(1, "hello")).forward, Forward::kAsIs);
  EXPECT_EQ(r.Send(false, r.Result(1, "world")).forward, Forward::kAsIs);
  EXPECT_TRUE(r.Secrets().empty());
}

// The relay's own lines as the fast path (json_strings_raw.h) meets them: a
// long line with escapes in a short string, and the token hidden by an
// escape inside it, in a key, or across two text blocks with an escaped
// "text" key: each is masked, the output is valid JSON and holds no part of it.
TEST(RelaySecrets, TheFastPathNeverPassesAHiddenToken) {
  std::string pad(2000, 'w');
  std::string esc = kToken.substr(0, 3) + "\\u00" + "62" + kToken.substr(4);  // kToken[3] is 'b'
  ASSERT_EQ(kToken[3], 'b');
  std::string half1 = kToken.substr(0, 20), half2 = kToken.substr(20);
  const std::vector<std::string> lines = {
      R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"see )" + esc + R"("}],"_meta":{"p":")" + pad +
          R"("}}})",
      R"({"jsonrpc":"2.0","id":1,"result":{"structuredContent":{")" + esc + R"(":1,"p":")" + pad + R"("}}})",
      R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":")" + pad + " " + half1 +
          R"("},{"type":"text","te\u0078t":")" + half2 + R"("}]}})",
  };
  for (const std::string& line : lines) {
    Relay r;
    ASSERT_EQ(r.Send(true, r.Call(1, "read")).forward, Forward::kAsIs);
    RelayAction a = r.Send(false, line);
    ASSERT_EQ(a.forward, Forward::kReplaced) << line;
    ASSERT_TRUE(json::accept(a.replacement)) << a.replacement;
    EXPECT_EQ(a.replacement.find(half2), std::string::npos) << a.replacement;
    EXPECT_EQ(a.replacement.find(kToken.substr(4)), std::string::npos) << a.replacement;
    EXPECT_NE(a.replacement.find("[REDACTED:slack-bot-token]"), std::string::npos) << a.replacement;
    EXPECT_EQ(r.Secrets().size(), 1u) << line;
  }
  // And the clean long line with escapes passes as it came.
  Relay r;
  ASSERT_EQ(r.Send(true, r.Call(1, "read")).forward, Forward::kAsIs);
  EXPECT_EQ(r.Send(false, R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\nb )" + pad + R"("}]}})").forward,
            Forward::kAsIs);
}

TEST(RelaySecrets, BlockRefusesACallWithoutPassingOrRecordingIt) {
  Relay r(SecretMode::kBlock, SecretMode::kBlock);
  RelayAction a = r.Send(true, r.Call(5, kToken));
  EXPECT_EQ(a.forward, Forward::kDrop);
  json reply = json::parse(a.reply);
  EXPECT_EQ(reply["id"], 5);
  EXPECT_EQ(reply["error"]["code"], kRefusedByPolicy);
  EXPECT_NE(a.reply.find("slack-bot-token"), std::string::npos);
  EXPECT_NE(a.reply.find("profile p.json"), std::string::npos);
  ExpectClean(a);
  // Not pending: an answer to it from the server is a forgery.
  EXPECT_EQ(r.Send(false, r.Result(5, "x")).forward, Forward::kDrop);
}

TEST(RelaySecrets, BlockTurnsALeakingToolResultIntoIsError) {
  Relay r(SecretMode::kBlock, SecretMode::kBlock);
  ASSERT_EQ(r.Send(true, r.Call(2, "hi")).forward, Forward::kAsIs);
  RelayAction a = r.Send(false, r.Result(2, "here: " + kToken));
  ASSERT_EQ(a.forward, Forward::kReplaced);
  json out = json::parse(a.replacement);
  EXPECT_EQ(out["id"], 2);
  EXPECT_EQ(out["result"]["isError"], true);
  ExpectClean(a);
  EXPECT_EQ(r.Secrets().at(0)["action"], "blocked");
}

TEST(RelaySecrets, BlockAnswersOtherRequestsWithAnError) {
  Relay r(SecretMode::kBlock, SecretMode::kBlock);
  ASSERT_EQ(r.Send(true, R"({"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///x"}})").forward,
            Forward::kAsIs);
  std::string leak = json{{"jsonrpc", "2.0"}, {"id", 3}, {"result", {{"contents", {{{"uri", "file:///x"}, {"text", kToken}}}}}}}.dump();
  RelayAction a = r.Send(false, leak);
  ASSERT_EQ(a.forward, Forward::kReplaced);
  EXPECT_EQ(json::parse(a.replacement)["error"]["code"], kRefusedByPolicy);
  ExpectClean(a);
}

TEST(RelaySecrets, BlockDropsNotificationsAndRefusesServerRequests) {
  Relay r(SecretMode::kBlock, SecretMode::kBlock);
  std::string note = json{{"jsonrpc", "2.0"}, {"method", "notifications/message"}, {"params", {{"data", kToken}}}}.dump();
  RelayAction n = r.Send(false, note);
  EXPECT_EQ(n.forward, Forward::kDrop);
  EXPECT_TRUE(n.reply.empty());
  std::string sampling = json{{"jsonrpc", "2.0"}, {"id", 9}, {"method", "sampling/createMessage"},
                              {"params", {{"messages", {{{"role", "user"}, {"content", {{"type", "text"}, {"text", kToken}}}}}}}}}.dump();
  RelayAction s = r.Send(false, sampling);
  EXPECT_EQ(s.forward, Forward::kDrop);
  EXPECT_EQ(json::parse(s.reply)["id"], 9);
  ExpectClean(s);
}

TEST(RelaySecrets, AuditModePassesAndRecords) {
  Relay r(SecretMode::kAudit, SecretMode::kAudit);
  EXPECT_EQ(r.Send(true, r.Call(1, kToken)).forward, Forward::kAsIs);
  ASSERT_EQ(r.Secrets().size(), 1u);
  EXPECT_EQ(r.Secrets()[0]["action"], "passed");
  EXPECT_EQ(r.Secrets()[0]["from"], "client");
}

TEST(RelaySecrets, DirectionsAreIndependent) {
  Relay r(SecretMode::kOff, SecretMode::kBlock);
  EXPECT_EQ(r.Send(true, r.Call(1, kToken)).forward, Forward::kAsIs);
  EXPECT_EQ(r.Send(false, r.Result(1, kToken)).forward, Forward::kReplaced);
}

TEST(RelaySecrets, ARuleThatDoesNotCompileRefusesEverything) {
  RelayConfig cfg;
  SecretRule broken;
  broken.name = "broken";
  broken.regex = "((";
  cfg.secrets.rules.push_back(broken);
  std::vector<json> records;
  McpRelay relay(cfg, [&](const json& e) -> Status { records.push_back(e); return {}; });
  std::string line = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  std::string padded = line + std::string(LineFramer::kPadding, ' ');
  RelayAction a = relay.FromClient(LineFramer::Line{std::string_view(padded.data(), line.size()), false, line.size()});
  EXPECT_EQ(a.forward, Forward::kDrop);
  EXPECT_NE(a.reply.find("secret scan cannot start"), std::string::npos) << a.reply;
  EXPECT_NE(a.reply.find("broken"), std::string::npos) << a.reply;
}

TEST(RelaySecrets, RedactBlocksWhatNoMaskCanMakeClean) {
  RelayConfig cfg = Relay::Config(SecretMode::kRedact, SecretMode::kRedact);
  SecretRule nul;
  nul.name = "nul";
  nul.regex = "\\x00";  // matches between two strings: no mask can remove it
  nul.bounded = false;
  cfg.secrets.rules.push_back(nul);
  std::vector<json> records;
  McpRelay relay(cfg, [&](const json& e) -> Status { records.push_back(e); return {}; });
  std::string line = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}})";
  std::string padded = line + std::string(LineFramer::kPadding, ' ');
  RelayAction a = relay.FromClient(LineFramer::Line{std::string_view(padded.data(), line.size()), false, line.size()});
  EXPECT_EQ(a.forward, Forward::kDrop);
  EXPECT_NE(a.reply.find("carries a secret (nul)"), std::string::npos) << a.reply;
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back()["action"], "blocked");
}

}  // namespace
}  // namespace mcpcell
