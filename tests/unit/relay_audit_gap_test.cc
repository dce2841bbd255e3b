// Adversary pass on the relay's fail-closed audit (docs/AUDIT.md): no call's
// result reaches the client without its record. A call cancelled by the
// client is recorded at the cancel; when that record was lost (the log full
// by then), the call was marked recorded anyway, and the server's answer
// passed to the client with no record of the call anywhere.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "relay/envelope.h"
#include "relay/mcp_relay.h"

namespace mcpcell {
namespace {

using nlohmann::json;

struct FullLog {
  std::vector<json> records;
  int room = 0;
  McpRelay relay{RelayConfig{}, [this](const json& e) -> Status {
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

TEST(RelayAuditGap, AnAnswerAfterALostCancelRecordIsWithheld) {
  FullLog h;
  h.room = 0;  // the log fills while the call runs: nothing of it is recorded
  EXPECT_EQ(h.Send(true, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}})").forward,
            RelayAction::Forward::kAsIs);
  h.Send(true, R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  RelayAction answer = h.Send(false, R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"s3cret"}]}})");
  EXPECT_TRUE(h.records.empty());
  EXPECT_NE(answer.forward, RelayAction::Forward::kAsIs) << "the result went out with no record of the call";
  EXPECT_EQ(answer.replacement.find("s3cret"), std::string::npos) << answer.replacement;
}

}  // namespace
}  // namespace mcpcell
