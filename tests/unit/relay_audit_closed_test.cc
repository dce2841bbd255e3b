// After a failed audit write the relay refuses calls until mcpcell starts
// again, even once the log could be written again (docs/AUDIT.md, "Why
// refused until restart"): a cell that fills the log's filesystem and frees
// it must not choose which of its calls go unrecorded.
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

TEST(AuditClosed, CallsStayRefusedAfterTheLogRecovers) {
  bool full = false;
  std::vector<json> records;
  McpRelay relay(RelayConfig{"srv", ToolRules{}, 1u << 20, 4096}, [&](const json& e) -> Status {
    if (full) return MakeError("write the audit log", "/logs/calls.jsonl", "No space left on device");
    records.push_back(e);
    return {};
  });
  std::string padded;
  auto send = [&](bool client, const std::string& text) {
    padded = text + std::string(LineFramer::kPadding, ' ');
    LineFramer::Line l{std::string_view(padded.data(), text.size()), false, text.size()};
    return client ? relay.FromClient(l) : relay.FromServer(l);
  };
  auto call = [](int id) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":"a"}})";
  };
  EXPECT_EQ(send(true, call(1)).forward, RelayAction::Forward::kAsIs);
  full = true;  // the cell filled the filesystem
  auto lost = send(false, R"({"jsonrpc":"2.0","id":1,"result":{"content":[]}})");
  ASSERT_EQ(lost.forward, RelayAction::Forward::kReplaced) << "an answer whose record is lost is withheld";
  EXPECT_EQ(json::parse(lost.replacement)["error"]["code"], kAuditUnavailable);
  full = false;  // and freed it again
  for (int id = 2; id < 5; ++id) {
    auto a = send(true, call(id));
    EXPECT_EQ(a.forward, RelayAction::Forward::kDrop) << "call " << id << " ran although its record may be lost";
    ASSERT_FALSE(a.reply.empty());
    json r = json::parse(a.reply);
    EXPECT_EQ(r["error"]["code"], kAuditUnavailable);
    std::string msg = r["error"]["message"];
    EXPECT_NE(msg.find("No space left on device"), std::string::npos) << msg;
    EXPECT_NE(msg.find("start mcpcell again"), std::string::npos) << msg;
  }
  // The refusals are on the record now that it can be written.
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.back()["outcome"], "audit_unavailable");
}

}  // namespace
}  // namespace mcpcell
