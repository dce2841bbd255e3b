// Both directions through one McpRelay at once, as the pump's two threads
// run them (mcp_relay.h, "Threads"): each line is parsed and scanned outside
// the relay's lock, so every decision on shared state must still hold when
// the other direction is mid-line — the tool rules, ids (a forged answer is
// dropped, a real one passes), the redaction, and the audit log. Run under
// ThreadSanitizer too (-fsanitize=thread): a race here is the likely bug.

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "relay/envelope.h"
#include "relay/mcp_relay.h"

namespace mcpcell {
namespace {

using nlohmann::json;
using Forward = RelayAction::Forward;

const std::string kToken = "xoxb-123456789012-1234567890123-" "AbCdEfGhIjKlMnOpQrStUvWx";
constexpr int kCalls = 600;

// One line as LineFramer hands it out (text, then readable padding); one per thread.
struct Sender {
  std::string padded;
  RelayAction Send(McpRelay& relay, bool from_client, const std::string& text) {
    padded = text + std::string(LineFramer::kPadding, ' ');
    LineFramer::Line l{std::string_view(padded.data(), text.size()), false, text.size()};
    return from_client ? relay.FromClient(l) : relay.FromServer(l);
  }
};

// The ids the client's thread passed on, in order, for the server's thread
// to answer: an answer is only ever sent for a request already passed, as
// a real server only answers what it read.
class Passed {
 public:
  void Push(int id) {
    std::lock_guard lock(mu_);
    ids_.push_back(id);
    cv_.notify_one();
  }
  /// The next id, or -1 once the client is done and every id was taken.
  int Pop() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !ids_.empty() || done_; });
    if (ids_.empty()) return -1;
    int id = ids_.front();
    ids_.pop_front();
    return id;
  }
  void Done() {
    std::lock_guard lock(mu_);
    done_ = true;
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> ids_;
  bool done_ = false;
};

std::string Call(int id, const std::string& tool, const std::string& value) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
              {"params", {{"name", tool}, {"arguments", {{"v", value}}}}}}.dump();
}

std::string Result(int id, const std::string& text) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", {{"content", {{{"type", "text"}, {"text", text}}}}}}}.dump();
}

std::string Note(const std::string& text) {
  return json{{"jsonrpc", "2.0"}, {"method", "notifications/message"}, {"params", {{"data", text}}}}.dump();
}

// What one direction saw go wrong; checked on the main thread (gtest's
// assertions are not for other threads' failures to stop them).
struct Faults {
  std::vector<std::string> list;
  void Add(std::string what) { list.push_back(std::move(what)); }
};

bool HoldsToken(const RelayAction& a) {
  return a.replacement.find(kToken.substr(10)) != std::string::npos || a.reply.find(kToken.substr(10)) != std::string::npos;
}

// Client: calls of an allowed and a denied tool, some with a token, a
// tools/list, and notifications with a token; the passed ids to `passed`.
void ClientSide(McpRelay& relay, Passed& passed, Faults& f) {
  Sender s;
  for (int id = 0; id < kCalls; ++id) {
    bool denied = id % 5 == 4, secret = id % 3 == 0;
    RelayAction a = s.Send(relay, true, id == 7 ? R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})"
                                                : Call(id, denied ? "hidden_x" : "ok", secret ? kToken : "plain"));
    if (HoldsToken(a)) f.Add("client line " + std::to_string(id) + " passed a token");
    if (denied && id != 7) {
      if (a.forward != Forward::kDrop || a.reply.find("\"code\":-32001") == std::string::npos) {
        f.Add("denied call " + std::to_string(id) + " was not refused: " + a.reply);
      }
    } else if (a.forward == Forward::kDrop) {
      f.Add("call " + std::to_string(id) + " was dropped: " + a.reply);
    } else {
      passed.Push(id);
    }
    RelayAction n = s.Send(relay, true, Note("n " + kToken));
    if (n.forward != Forward::kReplaced || HoldsToken(n)) f.Add("client notification not masked");
  }
  passed.Done();
}

// Server: answers every passed id (a tools/list answer names a denied tool
// too), with forged answers to ids never asked and notifications with a
// token between them.
void ServerSide(McpRelay& relay, Passed& passed, Faults& f, int* answered) {
  Sender s;
  int forged = 0;
  for (int id = passed.Pop(); id >= 0; id = passed.Pop()) {
    std::string answer = id == 7 ? R"({"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"ok"},{"name":"hidden_y"}]}})"
                                 : Result(id, id % 2 == 0 ? "out " + kToken : "out");
    RelayAction a = s.Send(relay, false, answer);
    if (a.forward == Forward::kDrop) f.Add("the answer to " + std::to_string(id) + " was dropped");
    if (HoldsToken(a) || (a.forward == Forward::kAsIs && answer.find(kToken) != std::string::npos)) {
      f.Add("the answer to " + std::to_string(id) + " passed a token");
    }
    if (id == 7 && (a.forward != Forward::kReplaced || a.replacement.find("hidden_y") != std::string::npos)) {
      f.Add("the tools/list answer was not filtered: " + a.replacement);
    }
    ++*answered;
    RelayAction g = s.Send(relay, false, Result(100000 + forged++, "forged"));
    if (g.forward != Forward::kDrop) f.Add("a forged answer passed");
    RelayAction n = s.Send(relay, false, Note("s " + kToken));
    if (n.forward != Forward::kReplaced || HoldsToken(n)) f.Add("server notification not masked");
  }
}

TEST(RelayThreads, BothDirectionsAtOnceKeepEveryDecision) {
  RelayConfig cfg;
  cfg.server = "srv";
  cfg.tools.deny = {"hidden_*"};
  cfg.tools.origin = "profile p.json";
  std::vector<json> records;  // the sink runs under the relay's lock
  McpRelay relay(cfg, [&](const json& e) -> Status {
    records.push_back(e);
    return {};
  });
  Passed passed;
  Faults client_faults, server_faults;
  int answered = 0;
  std::thread client([&] { ClientSide(relay, passed, client_faults); });
  ServerSide(relay, passed, server_faults, &answered);
  client.join();
  relay.End();
  for (const auto& what : client_faults.list) ADD_FAILURE() << "client: " << what;
  for (const auto& what : server_faults.list) ADD_FAILURE() << "server: " << what;

  int denied = kCalls / 5;  // ids 4, 9, ...; 7 is the tools/list
  EXPECT_EQ(answered, kCalls - denied);
  int ok = 0, refused = 0, forged = 0;
  for (const auto& r : records) {
    EXPECT_EQ(r.dump().find(kToken), std::string::npos) << r.dump();
    if (r["event"] == "tool_call") (r["outcome"] == "ok" ? ok : refused) += 1;
    if (r["event"] == "forged_response") ++forged;
  }
  EXPECT_EQ(ok, kCalls - denied - 1);
  EXPECT_EQ(refused, denied);
  const json& end = records.back();
  ASSERT_EQ(end["event"], "session_end");
  EXPECT_EQ(end["forged"], answered);
  EXPECT_EQ(end["unanswered"], 0);
  EXPECT_LE(forged, 100);  // the rest only counted (kMaxServerNoise)
}

// The first line of each side at once: the rules are compiled once, and
// neither side's first line passes unscanned while the other compiles them.
TEST(RelayThreads, TheFirstLinesOfBothSidesWaitForTheRules) {
  for (int round = 0; round < 5; ++round) {
    McpRelay relay(RelayConfig{}, nullptr);
    RelayAction from_client, from_server;
    std::thread t([&] {
      Sender s;
      from_client = s.Send(relay, true, Note("c " + kToken));
    });
    Sender s;
    from_server = s.Send(relay, false, Note("s " + kToken));
    t.join();
    EXPECT_EQ(from_client.forward, Forward::kReplaced);
    EXPECT_EQ(from_server.forward, Forward::kReplaced);
    EXPECT_FALSE(HoldsToken(from_client));
    EXPECT_FALSE(HoldsToken(from_server));
  }
}

}  // namespace
}  // namespace mcpcell
