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

namespace mcpcell {
namespace {

// A private key printed over several lines (a server dumping its key file):
// the key's rule needs header and body in one text, lines are scanned apart,
// so the redactor masks the body lines itself, up to the END line.
TEST(StderrRedactor, APrivateKeyPrintedOverSeveralLinesIsMaskedToItsEndLine) {
  StderrRedactor r = Fake();
  std::string body1 = "MIIEowIBAAKCAQEA1x2y3z4w5v6u7t8s9r0q", body2 = "ZmFrZWtleWZha2VrZXlmYWtla2V5ZmFrZQ==";
  std::string out = r.Feed("loading key\n-----BEGIN RSA PRIVATE KEY-----\n" + body1 + "\n" + body2 +
                           "\n-----END RSA PRIVATE KEY-----\nready\n");
  EXPECT_EQ(out.find(body1), std::string::npos) << out;
  EXPECT_EQ(out.find(body2), std::string::npos) << out;
  EXPECT_NE(out.find("ready\n"), std::string::npos) << "the lines after END pass: " << out;
  EXPECT_EQ(r.TakeMasked(), std::vector<std::string>{"private-key-block"});
  // A header with its END on the same line opens no block.
  out = r.Feed("-----BEGIN OPENSSH PRIVATE KEY----- x -----END OPENSSH PRIVATE KEY-----\nplain\n");
  EXPECT_NE(out.find("plain\n"), std::string::npos) << out;
}

TEST(StderrRedactor, AKeyBlockWithoutEndStopsMaskingAfterItsLineBound) {
  StderrRedactor r = Fake();
  std::string in = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n";
  // Log lines, not base64: past the bound, base64 lines go on being masked
  // (a longer key's body, adv9_secret_leaks_test.cc), these do not.
  for (int i = 0; i < 400; ++i) in += "line " + std::to_string(i) + "\n";
  std::string out = r.Feed(in);
  EXPECT_EQ(out.find("line 0\n"), std::string::npos);
  EXPECT_NE(out.find("line 399\n"), std::string::npos) << "an unended block does not swallow the rest of stderr";
}

// A PuTTY key file's header opens a block to its Private-MAC line; a
// mention of the format does not.
TEST(StderrRedactor, APuttyHeaderOpensABlockToItsMacAndAMentionDoesNot) {
  StderrRedactor r = Fake();
  std::string out = r.Feed("PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\nAAAAIHq2pZk7mR1v\n"
                           "Private-MAC: 00ff\nready\n");
  EXPECT_EQ(out.find("AAAAIHq2pZk7mR1v"), std::string::npos) << out;
  EXPECT_NE(out.find("ready\n"), std::string::npos) << out;
  out = r.Feed("a .ppk file starts with PuTTY-User-Key-File-3, see the manual\nplain\n");
  EXPECT_NE(out.find("plain\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace mcpcell
