// Adversary pass on the relay's line rule for Python's universal newlines
// (docs/THREAT_MODEL.md "The conversation"): the relay reads a line up to LF,
// Python's text stdin (the Python SDK's server) also splits on a lone CR. A
// line that is ONE valid message to the relay (CR is JSON white space) can
// hold a second complete message between two CRs, which Python reads as a
// line of its own: the relay judged the outer, allowed call, and the server
// ran the inner, denied one.

#include <gtest/gtest.h>

#include <string>

#include "relay/envelope.h"
#include "relay/mcp_relay.h"

namespace mcpcell {
namespace {

struct Relay {
  McpRelay relay{Config(), nullptr};
  static RelayConfig Config() {
    RelayConfig cfg;
    cfg.server = "srv";
    cfg.tools.deny = {"write_file"};
    cfg.tools.origin = "profile p.json";
    return cfg;
  }
  std::string padded;
  RelayAction Client(const std::string& text) {
    padded = text + std::string(LineFramer::kPadding, ' ');
    return relay.FromClient(LineFramer::Line{std::string_view(padded.data(), text.size()), false, text.size()});
  }
};

const std::string kInner = R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file"}})";

class InnerMessageBetweenBreaks : public ::testing::TestWithParam<const char*> {};

TEST_P(InnerMessageBetweenBreaks, IsNotPassedInsideAnAllowedOne) {
  Relay r;
  std::string br = GetParam();
  // To the relay: one read_file call with an extra member "x" (white space around its value).
  std::string line = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file"},"x":)" + br + kInner + br + "}";
  RelayAction a = r.Client(line);
  EXPECT_NE(a.forward, RelayAction::Forward::kAsIs) << "passed as it came: a Python server reads line 2 as a write_file call";
}

// JSON white space that some reader splits lines on: CR (Python's universal
// newlines, Node's readline); LF cannot occur inside a relay line.
INSTANTIATE_TEST_SUITE_P(Relay, InnerMessageBetweenBreaks, ::testing::Values("\r", "\r\t", " \r "));

}  // namespace
}  // namespace mcpcell
