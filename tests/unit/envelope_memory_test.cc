// The relay's memory after a large message (src/relay/envelope.h Shrink,
// McpRelay::FromSide): the DOM of a line is as large as the line, and is
// given back once the line is judged, not kept until the next message.

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <variant>

#include "relay/envelope.h"
#include "relay/mcp_relay.h"

namespace mcpcell {
namespace {

// This process's resident set, in MiB (proc(5), /proc/self/statm).
double RssMiB() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long size = 0, resident = 0;
  int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  if (n != 2) return -1;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// A 32 MiB string in a notification, followed by LineFramer's padding.
std::string BigLine() {
  return R"({"jsonrpc":"2.0","method":"notifications/message","params":{"data":")" + std::string(32u << 20, 'a') +
         "\"}}" + std::string(LineFramer::kPadding, ' ');
}

TEST(EnvelopeMemory, ALargeMessagesDomGoesBackOnShrink) {
  std::string line = BigLine();
  std::string_view text(line.data(), line.size() - LineFramer::kPadding);
  EnvelopeParser parser(64u << 20);
  double before = RssMiB();
  auto parsed = parser.Parse(text);
  ASSERT_TRUE(std::holds_alternative<Envelope>(parsed));
  double held = RssMiB() - before;
  EXPECT_GT(held, 24.0) << "the DOM holds its own copy of the 32 MiB string";
  parser.Shrink();
  EXPECT_LT(RssMiB() - before, 8.0) << "after Shrink the copy is gone (held " << held << " MiB)";
}

TEST(EnvelopeMemory, TheRelayGivesALargeLinesMemoryBackOnceJudged) {
  std::string line = BigLine();
  LineFramer::Line l{std::string_view(line.data(), line.size() - LineFramer::kPadding), false,
                     line.size() - LineFramer::kPadding};
  for (SecretMode mode : {SecretMode::kOff, SecretMode::kRedact}) {
    RelayConfig cfg;
    cfg.server = "srv";
    cfg.secrets.to_server = cfg.secrets.to_client = mode;
    McpRelay relay(cfg, nullptr);
    std::string small = R"({"jsonrpc":"2.0","method":"x"})" + std::string(LineFramer::kPadding, ' ');
    relay.FromClient(LineFramer::Line{std::string_view(small.data(), 30), false, 30});  // rules compiled here
    double before = RssMiB();
    RelayAction a = relay.FromClient(l);
    EXPECT_EQ(a.forward, RelayAction::Forward::kAsIs);
    EXPECT_LT(RssMiB() - before, 8.0) << "mode " << SecretModeName(mode);
  }
}

}  // namespace
}  // namespace mcpcell
