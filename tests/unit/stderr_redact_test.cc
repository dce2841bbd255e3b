// The secret scan of a run's stderr (cell/stderr_redact.h): line by line,
// a secret split across reads still seen whole, nothing held for ever; and
// SecretGuard::RedactText with the built-in rules (guard/secret_text.cc).
#include "cell/stderr_redact.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "guard/secret_guard.h"
#include "secret_samples.h"

namespace mcpcell {
namespace {

// A stand-in rule: "SECRET" is the secret.
StderrRedactor Fake() {
  return StderrRedactor([](std::string_view line, std::vector<std::string>* rules) {
    std::string out(line);
    for (std::size_t at; (at = out.find("SECRET")) != std::string::npos;) {
      out.replace(at, 6, "[X]");
      rules->push_back("fake");
    }
    return out;
  });
}

TEST(StderrRedactor, ASecretSplitAcrossReadsIsMaskedWholeAndLinesPassAsTheyEnd) {
  StderrRedactor r = Fake();
  EXPECT_EQ(r.Feed("starting\nkey=SEC"), "starting\n");  // the whole line goes, the rest waits
  EXPECT_TRUE(r.holding());
  EXPECT_EQ(r.Feed("RET done\nnext"), "key=[X] done\n");
  EXPECT_EQ(r.TakeMasked(), std::vector<std::string>{"fake"});
  EXPECT_TRUE(r.TakeMasked().empty()) << "each rule is told once per call";
  EXPECT_EQ(r.Flush(), "next");  // a quiet pipe: the partial line goes on, scanned
  EXPECT_FALSE(r.holding());
  EXPECT_EQ(r.Flush(), "");
}

TEST(StderrRedactor, ALineWithoutAnEndIsNotHeldForEver) {
  StderrRedactor r = Fake();
  std::string out = r.Feed(std::string(kStderrLineHold + 10, 'a'));
  EXPECT_EQ(out.size(), kStderrLineHold);
  EXPECT_EQ(r.Flush().size(), 10u);
}

TEST(SecretGuardText, ABuiltInSecretInPlainTextIsMaskedAndTheRestKept) {
  SecretPolicy p;
  auto g = SecretGuard::Create(p);
  ASSERT_TRUE(g.ok()) << g.error().Message();
  std::mt19937_64 rng(7);
  std::string token = test::Expand("ghp_{30:an}{6:crc}", rng);
  std::vector<std::string> rules;
  std::string out = (*g)->RedactText("using token " + token + " for the API", &rules);
  EXPECT_EQ(out.find(token), std::string::npos) << out;
  EXPECT_NE(out.find("using token [REDACTED:"), std::string::npos) << out;
  EXPECT_NE(out.find("] for the API"), std::string::npos) << out;
  ASSERT_EQ(rules.size(), 1u);
  rules.clear();
  EXPECT_EQ((*g)->RedactText("nothing to see here", &rules), "nothing to see here");
  EXPECT_TRUE(rules.empty());
}

}  // namespace
}  // namespace mcpcell
