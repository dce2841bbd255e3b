// The relay's client pump on real pipes (relay/relay_pump.h): what the
// client gets after it closed stdin.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "relay/envelope.h"
#include "relay/mcp_relay.h"
#include "relay/relay_pump.h"
#include "util/unique_fd.h"

namespace mcpcell {
namespace {

using json = nlohmann::json;

struct Pipe {
  UniqueFd read, write;
  Pipe() {
    int p[2];
    EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
    read.reset(p[0]);
    write.reset(p[1]);
  }
};

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

// A client on pipes writes its call and closes stdin at once; the server
// never answers and the cell lives on (stop is never signalled). Before,
// the pump returned at EOF and the call was left to the stop order: the
// client got no answer until the server was killed. The --call-timeout
// answers it now, after EOF too; the server, whose stdin is closed, gets
// nothing more (no notifications/cancelled).
TEST(RelayPump, ACallTimesOutAfterTheClientClosedStdin) {
  RelayConfig c{"srv", ToolRules{}, 1u << 20, 4096};
  c.call_timeout = std::chrono::milliseconds(20);
  std::vector<json> records;
  McpRelay relay(std::move(c), [&](const json& e) -> Status { records.push_back(e); return {}; });
  Pipe client_in, server_in, client_out;
  std::string call = R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{}}})" "\n";
  ASSERT_EQ(::write(client_in.write.get(), call.data(), call.size()), static_cast<ssize_t>(call.size()));
  client_in.write.reset();  // EOF right after the call
  UniqueFd stop(::eventfd(0, EFD_CLOEXEC)), closed(::eventfd(0, EFD_CLOEXEC));
  LineSink to_server(server_in.write.release(), true, false);
  LineSink to_client(client_out.write.get(), false, false);
  std::thread pump(PumpClientToServer, &relay, std::size_t{1} << 20, client_in.read.get(), stop.get(), closed.get(),
                   &to_server, &to_client);
  pump.join();  // returns once no call has a deadline left (or the cell is gone)
  std::uint64_t n = 0;
  EXPECT_EQ(::read(closed.get(), &n, sizeof n), static_cast<ssize_t>(sizeof n)) << "the stop order was started";
  client_out.write.reset();
  std::string got = ReadAll(client_out.read.get());
  ASSERT_FALSE(got.empty()) << "the client never got an answer to its call";
  json r = json::parse(got);
  EXPECT_EQ(r["id"], 7);
  EXPECT_EQ(r["error"]["code"], kLimitReached);
  std::string msg = r["error"]["message"];
  EXPECT_NE(msg.find("--call-timeout"), std::string::npos) << msg;
  EXPECT_NE(msg.find("closed stdin"), std::string::npos) << msg;
  // The server got the call, then EOF: no cancellation after it.
  EXPECT_EQ(ReadAll(server_in.read.get()), call);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["outcome"], "timeout");
  relay.End();
  EXPECT_EQ(records.back()["event"], "session_end");
  EXPECT_EQ(records.back()["unanswered"], 0) << "recorded as timed out, not again as no_response";
}

// The cell ending first still ends the pump: the call is left for End().
TEST(RelayPump, TheCellEndingFirstEndsThePumpAfterEof) {
  RelayConfig c{"srv", ToolRules{}, 1u << 20, 4096};
  c.call_timeout = std::chrono::hours(1);
  std::vector<json> records;
  McpRelay relay(std::move(c), [&](const json& e) -> Status { records.push_back(e); return {}; });
  Pipe client_in, server_in, client_out;
  std::string call = R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"slow"}})" "\n";
  ASSERT_EQ(::write(client_in.write.get(), call.data(), call.size()), static_cast<ssize_t>(call.size()));
  client_in.write.reset();
  UniqueFd stop(::eventfd(0, EFD_CLOEXEC)), closed(::eventfd(0, EFD_CLOEXEC));
  LineSink to_server(server_in.write.release(), true, false);
  LineSink to_client(client_out.write.get(), false, false);
  std::thread pump(PumpClientToServer, &relay, std::size_t{1} << 20, client_in.read.get(), stop.get(), closed.get(),
                   &to_server, &to_client);
  std::uint64_t n = 0;
  ASSERT_EQ(::read(closed.get(), &n, sizeof n), static_cast<ssize_t>(sizeof n));  // blocks until EOF was seen
  n = 1;
  ASSERT_EQ(::write(stop.get(), &n, sizeof n), static_cast<ssize_t>(sizeof n));  // the cell is gone
  pump.join();
  client_out.write.reset();
  EXPECT_EQ(ReadAll(client_out.read.get()), "");
  relay.End();
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records[0]["outcome"], "no_response");
}

}  // namespace
}  // namespace mcpcell
