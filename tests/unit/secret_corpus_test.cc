// Recall on a synthetic corpus: every built-in format (secret_samples.h),
// 6 secrets each (600+ secrets, 100+ types), each placed in an MCP message
// as is and in five evasions: JSON \u escapes, split across two text blocks
// of one result, inside structuredContent, as resource text, in an error
// message, and in tools/call arguments. A secret counts as found when the
// redacted message no longer contains it (and parses). The issue's floor:
// recall >= 98 % plain, >= 95 % per evasion; the measured values are printed.
// A masked message must also scan clean the second time.

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "guard/secret_guard.h"
#include "secret_samples.h"

namespace mcpcell {
namespace {

using nlohmann::json;

constexpr int kPerType = 6;

json Result(json result) { return {{"jsonrpc", "2.0"}, {"id", 7}, {"result", std::move(result)}}; }
json TextBlocks(std::vector<std::string> texts) {
  json blocks = json::array();
  for (auto& t : texts) blocks.push_back({{"type", "text"}, {"text", std::move(t)}});
  return blocks;
}

// A JSON string literal with every character of `s` written as \uXXXX.
std::string AllEscaped(std::string_view s) {
  std::string out = "\"";
  char buf[8];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof buf, "\\u%04x", c);
    out += buf;
  }
  return out + "\"";
}

std::map<std::string, std::string> Variants(const std::string& secret, std::mt19937_64& rng) {
  std::string line = "config: " + secret + "\n";
  std::size_t cut = 1 + rng() % (secret.size() - 1);
  return {
      {"plain", Result({{"content", TextBlocks({line})}}).dump()},
      {"json-escapes", R"({"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":)" + AllEscaped(line) + "}]}}"},
      {"split-blocks", Result({{"content", TextBlocks({"config: " + secret.substr(0, cut), secret.substr(cut) + "\n"})}}).dump()},
      {"structured", Result({{"content", json::array()}, {"structuredContent", {{"env", {{"items", {line}}}}}}}).dump()},
      {"resource-text", Result({{"contents", {{{"uri", "file:///app/.env"}, {"mimeType", "text/plain"}, {"text", line}}}}}).dump()},
      {"error-message", json{{"jsonrpc", "2.0"}, {"id", 7}, {"error", {{"code", -32603}, {"message", "failed: " + line}}}}.dump()},
      {"arguments", json{{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"},
                         {"params", {{"name", "deploy"}, {"arguments", {{"env", line}}}}}}.dump()},
  };
}

TEST(SecretCorpus, RecallPlainAndEvasions) {
  auto guard = SecretGuard::Create({});
  ASSERT_TRUE(guard.ok());
  simdjson::dom::parser parser, rescan;
  std::mt19937_64 rng(20261124);
  std::map<std::string, std::pair<int, int>> score;  // variant → (found, total)
  std::set<std::string> types;
  for (const auto& sample : test::SecretSamples()) {
    for (int i = 0; i < kPerType; ++i) {
      std::string secret = test::Expand(sample.positive, rng);
      types.insert(sample.rule);
      for (const auto& [variant, message] : Variants(secret, rng)) {
        std::vector<SecretFinding> found;
        auto doc = parser.parse(message);
        ASSERT_FALSE(doc.error()) << message;
        std::string out = (*guard)->Redact(doc.value_unsafe(), &found).value_or("(blocked)");
        bool hidden = !found.empty() && out.find(secret) == std::string::npos && json::accept(out);
        // The relay first tries to clear a line from its own bytes
        // (json_strings_raw.h): that must never pass a line with a secret.
        if ((*guard)->ClearedRaw(message)) {
          hidden = false;
          ADD_FAILURE() << "cleared by the raw scan (" << variant << ", " << sample.rule << "): " << message;
        }
        // And the masked message scanned again finds nothing left.
        if (hidden) hidden = (*guard)->Scan(rescan.parse(out).value_unsafe()).empty();
        auto& [ok, total] = score[variant];
        ok += hidden;
        ++total;
        if (!hidden) ADD_FAILURE() << "missed (" << variant << ", " << sample.rule << ")";
      }
    }
  }
  EXPECT_GE(types.size(), 25u);
  for (const auto& [variant, s] : score) {
    double recall = 100.0 * s.first / s.second;
    std::printf("secret corpus: %-14s %d/%d found, recall %.2f %%\n", variant.c_str(), s.first, s.second, recall);
    EXPECT_GE(s.second, 500);
    EXPECT_GE(recall, variant == "plain" ? 98.0 : 95.0) << variant;
  }
}

}  // namespace
}  // namespace mcpcell
