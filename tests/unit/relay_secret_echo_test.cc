// Adversary pass on "a refusal, a masked message and the audit record never
// hold the secret" (docs/THREAT_MODEL.md). The scan judged the message, but
// the relay's own records and refusals were built from the unmasked one: a
// token as a tool name, a resource URI, an argument key or an id reached the
// audit log in redact and block mode, and a line the relay refused before
// any scan (a duplicate key) had its key quoted back to the other side.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "relay/envelope.h"
#include "relay/mcp_relay.h"

namespace mcpcell {
namespace {

using nlohmann::json;

const std::string kToken = "xoxb-123456789012-1234567890123-" "AbCdEfGhIjKlMnOpQrStUvWx";

// A mode, and how the records leave the relay: as JSON, or as the text
// AuditLog::WriteObject writes (--audit-log), which must be masked as well.
struct Echo {
  SecretMode mode;
  bool as_text;
};

struct Relay {
  std::vector<json> records;
  McpRelay relay;
  explicit Relay(Echo p) : relay(Config(p.mode), Sink(p.as_text)) {}
  McpRelay::AuditSink Sink(bool as_text) {
    if (!as_text) return [this](const json& e) -> Status { records.push_back(e); return {}; };
    return McpRelay::AuditSink::Text([this](std::string_view object) -> Status {
      EXPECT_EQ(object.find(kToken), std::string_view::npos) << object;
      records.push_back(json::parse(object));
      return {};
    });
  }
  static RelayConfig Config(SecretMode m) {
    RelayConfig cfg;
    cfg.server = "srv";
    cfg.secrets.to_server = m;
    cfg.secrets.to_client = m;
    cfg.secrets.origin = "profile p.json";
    cfg.tools.deny = {"never_*"};
    cfg.tools.origin = "profile p.json";
    return cfg;
  }
  RelayAction Send(bool from_client, const std::string& text) {
    padded_ = text + std::string(LineFramer::kPadding, ' ');
    LineFramer::Line l{std::string_view(padded_.data(), text.size()), false, text.size()};
    return from_client ? relay.FromClient(l) : relay.FromServer(l);
  }
  // Every record, reply and forwarded line must be free of the token.
  void ExpectNoToken(const RelayAction& a, const std::string& what) {
    EXPECT_EQ(a.replacement.find(kToken), std::string::npos) << what << ": forwarded " << a.replacement;
    EXPECT_EQ(a.reply.find(kToken), std::string::npos) << what << ": reply " << a.reply;
    for (const auto& r : records) EXPECT_EQ(r.dump().find(kToken), std::string::npos) << what << ": record " << r.dump();
  }

 private:
  std::string padded_;
};

class SecretEcho : public ::testing::TestWithParam<Echo> {};

TEST_P(SecretEcho, ATokenAsAToolNameOrArgumentKeyIsNotRecorded) {
  Relay r(GetParam());
  json call{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"},
            {"params", {{"name", "t"}, {"arguments", {{kToken, "x"}}}}}};
  r.ExpectNoToken(r.Send(true, call.dump()), "argument key");
  r.ExpectNoToken(r.Send(false, R"({"jsonrpc":"2.0","id":1,"result":{"content":[]}})"), "argument key, answered");
  call["id"] = 2;
  call["params"] = {{"name", "never_" + kToken}};
  r.ExpectNoToken(r.Send(true, call.dump()), "denied tool name");
  call["id"] = 3;
  call["params"] = {{"name", "ok_" + kToken}};
  r.ExpectNoToken(r.Send(true, call.dump()), "tool name");
  r.ExpectNoToken(r.Send(false, R"({"jsonrpc":"2.0","id":3,"result":{"content":[]}})"), "tool name, answered");
  json read{{"jsonrpc", "2.0"}, {"id", 4}, {"method", "resources/read"}, {"params", {{"uri", "test://x/" + kToken}}}};
  r.ExpectNoToken(r.Send(true, read.dump()), "resource uri");
  r.ExpectNoToken(r.Send(false, R"({"jsonrpc":"2.0","id":4,"result":{"contents":[]}})"), "resource uri, answered");
  r.relay.End();
  r.ExpectNoToken({}, "session end");
}

TEST_P(SecretEcho, AForgedAnswerWithATokenIdIsNotRecorded) {
  Relay r(GetParam());
  r.ExpectNoToken(r.Send(false, json{{"jsonrpc", "2.0"}, {"id", kToken}, {"result", json::object()}}.dump()),
                  "forged answer id");
}

TEST_P(SecretEcho, ADuplicateKeyIsNotQuotedBack) {
  Relay r(GetParam());
  r.Send(true, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}})");
  // The server's answer with the token as a key twice: refused before any scan.
  std::string answer = R"({"jsonrpc":"2.0","id":1,"result":{")" + kToken + R"(":1,")" + kToken + R"(":2}})";
  r.ExpectNoToken(r.Send(false, answer), "duplicate key from the server");
  std::string call = R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{")" + kToken +
                     R"(":1,")" + kToken + R"(":2}}})";
  r.ExpectNoToken(r.Send(true, call), "duplicate key from the client");
}


}  // namespace
}  // namespace mcpcell

namespace mcpcell {
namespace {

// A line no reader takes for a message passes unjudged (MayBeMessage), and
// it passed unscanned too: a server printing a token as plain text handed it
// to the client's stdout reader (and its error log: Node's JSON.parse error
// quotes the text) in every mode.
TEST_P(SecretEcho, APlainTextLineIsScannedToo) {
  Relay r(GetParam());
  RelayAction a = r.Send(false, "debug: using token " + kToken);
  if (GetParam().mode == SecretMode::kBlock) {
    EXPECT_EQ(a.forward, RelayAction::Forward::kDrop);
  } else {
    ASSERT_EQ(a.forward, RelayAction::Forward::kReplaced);
    EXPECT_EQ(a.replacement, "debug: using token [REDACTED:slack-bot-token]");
  }
  r.ExpectNoToken(a, "plain text line");
  EXPECT_FALSE(r.records.empty()) << "the finding is recorded";
  // Plain text without a secret passes as it came, byte for byte (not UTF-8 either).
  EXPECT_EQ(r.Send(false, "plain \xff text").forward, RelayAction::Forward::kAsIs);
}

INSTANTIATE_TEST_SUITE_P(Modes, SecretEcho,
                         ::testing::Values(Echo{SecretMode::kRedact, false}, Echo{SecretMode::kBlock, false},
                                           Echo{SecretMode::kRedact, true}, Echo{SecretMode::kBlock, true}),
                         [](const ::testing::TestParamInfo<Echo>& p) {
                           return std::string(SecretModeName(p.param.mode)) + (p.param.as_text ? "_text" : "");
                         });

}  // namespace
}  // namespace mcpcell
