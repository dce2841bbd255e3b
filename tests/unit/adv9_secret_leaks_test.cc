// Adversary pass adv9 against the secret scan (guard/secret_scanner.cc's
// GluedToAWord and merge rules, guard/secret_rules.cc, cell/stderr_redact.cc):
// a real token or private key that reaches the client (a tools/call result,
// the server's stderr) unmasked — by accident of how a server formats what
// it prints, not by encoding on purpose. Each test asserts the SECURE
// outcome; the findings were DISABLED_ tests (failing on main 909957d),
// enabled with their fix (branch fix9s); the Held ones are attacks that held.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cell/stderr_redact.h"
#include "guard/secret_guard.h"
#include "relay/envelope.h"
#include "relay/mcp_relay.h"
#include "secret_samples.h"
#include "stderr_scan.h"

namespace mcpcell {
namespace {

using nlohmann::json;
using test::ThroughCopy;
using test::Token;
using test::DefaultScan;

/// The relay with the default scan (redact both ways), as relay_secrets_test.cc drives it.
struct Relay {
  McpRelay relay;
  Relay() : relay(Config(), [](const json&) -> Status { return {}; }) {}
  static RelayConfig Config() {
    RelayConfig cfg;
    cfg.server = "srv";
    cfg.secrets.to_server = SecretMode::kRedact;
    cfg.secrets.to_client = SecretMode::kRedact;
    cfg.secrets.origin = "default";
    return cfg;
  }
  /// What the client receives for a tools/call result whose text is `text`.
  std::string ResultText(const std::string& text) {
    ++id_;
    Send(true, json{{"jsonrpc", "2.0"}, {"id", id_}, {"method", "tools/call"},
                    {"params", {{"name", "read"}, {"arguments", json::object()}}}}.dump());
    std::string line =
        json{{"jsonrpc", "2.0"}, {"id", id_}, {"result", {{"content", {{{"type", "text"}, {"text", text}}}}}}}.dump();
    RelayAction a = Send(false, line);
    if (a.forward == RelayAction::Forward::kAsIs) return line;
    return a.replacement + a.reply;
  }
  RelayAction Send(bool from_client, const std::string& line) {
    padded_ = line + std::string(LineFramer::kPadding, ' ');
    LineFramer::Line l{std::string_view(padded_.data(), line.size()), false, line.size()};
    return from_client ? relay.FromClient(l) : relay.FromServer(l);
  }

 private:
  std::string padded_;
  int id_ = 0;
};

// ---- F (MEDIUM): a token right after a JSON escape ("\n", "\t", "\r") ------
// A bounded rule without a checksum drops a match that has a letter or digit
// just before it (GluedToAWord). Text that is JSON inside JSON is the most
// common shape of an MCP tool result (servers return JSON.stringify(obj,
// null, 2) as the text content) and of a server's log line: in it a value's
// newline is the two bytes '\' 'n', so a token that starts a line of a
// value (a key file's content, a list of keys, a tab-separated table) is
// glued to the 'n' (or 't', 'r') of the escape and is not reported: AWS key
// ids, Slack, Anthropic, OpenAI, Stripe keys pass to the client as they are.
// Only the checksummed GitHub/npm tokens survive it. Fix: in GluedToAWord, a
// letter preceded by an odd run of backslashes is an escape, not a word
// (like the CSI final byte already is).
const char* const kUncheckedTokens[] = {"AKIA{16:32}", "xoxb-{12:d}-{13:d}-{24:an}", "sk-ant-api03-{93:u}AA",
                                        "sk_live_{24:an}", "AIza{35:u}"};

TEST(Adv9SecretScan, ATokenStartingALineOfJsonInsideAToolResultIsMasked) {
  Relay relay;
  int seed = 0;
  for (const char* tmpl : kUncheckedTokens) {
    std::string token = Token(tmpl, ++seed);
    // Control: the same token after a real newline (the result's text not JSON) is masked.
    ASSERT_EQ(relay.ResultText("keys:\n" + token).find(token), std::string::npos) << "control: " << token;
    for (const char* sep : {"\n", "\t", "\r\n"}) {
      // What a server's `JSON.stringify({ file: "keys:\n" + token })` returns as its text.
      std::string text = json{{"path", "/srv/app/keys.txt"}, {"content", std::string("keys:") + sep + token}}.dump(2);
      ASSERT_NE(text.find(token), std::string::npos);
      std::string out = relay.ResultText(text);
      EXPECT_EQ(out.find(token), std::string::npos) << "passed unmasked to the client: " << out;
    }
  }
}

TEST(Adv9SecretScan, ATokenAfterAnEscapedNewlineInAStderrLogLineIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  int seed = 10;
  for (const char* tmpl : kUncheckedTokens) {
    std::string token = Token(tmpl, ++seed);
    // A server logging a request as JSON on one line (pino, winston's json format).
    std::string line = json{{"level", "debug"}, {"msg", "loaded"}, {"file", "# deploy keys\n" + token + "\n"}}.dump() + "\n";
    StderrRedactor r = g.Redactor();
    std::string out = ThroughCopy(r, line);
    EXPECT_EQ(out.find(token), std::string::npos) << "passed unmasked to the client's stderr: " << out;
  }
}

// The same in the other direction: a client's tools/call arguments holding
// JSON text (a config file the model passes on) carry the token to the server.
TEST(Adv9SecretScan, ATokenStartingALineOfJsonInToolCallArgumentsIsMasked) {
  Relay relay;
  std::string token = Token("AKIA{16:32}", 21);
  std::string config = json{{"env", "REGION=eu-west-1\n" + token}}.dump();
  std::string line = json{{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"},
                          {"params", {{"name", "deploy"}, {"arguments", {{"config", config}}}}}}.dump();
  RelayAction a = relay.Send(true, line);
  std::string out = a.forward == RelayAction::Forward::kAsIs ? line : a.replacement + a.reply;
  EXPECT_EQ(out.find(token), std::string::npos) << "passed unmasked to the server: " << out;
}

// Held: every kind of message from the server is scanned, not only results:
// an error's message and data, a log notification, a progress message, a
// request the server sends the client (sampling), a resources/read result.
TEST(Adv9SecretScan, HeldATokenInAnyServerMessageIsMasked) {
  Relay relay;
  std::string token = Token("xoxb-{12:d}-{13:d}-{24:an}", 31);
  relay.Send(true, json{{"jsonrpc", "2.0"}, {"id", 50}, {"method", "tools/call"}, {"params", {{"name", "x"}}}}.dump());
  relay.Send(true, json{{"jsonrpc", "2.0"}, {"id", 51}, {"method", "resources/read"}, {"params", {{"uri", "file:///a"}}}}.dump());
  const std::vector<std::string> lines = {
      json{{"jsonrpc", "2.0"}, {"id", 50}, {"error", {{"code", -32000}, {"message", "auth failed: " + token}, {"data", {{"t", token}}}}}}.dump(),
      json{{"jsonrpc", "2.0"}, {"method", "notifications/message"}, {"params", {{"level", "info"}, {"data", "using " + token}}}}.dump(),
      json{{"jsonrpc", "2.0"}, {"method", "notifications/progress"}, {"params", {{"progressToken", 1}, {"progress", 1}, {"message", token}}}}.dump(),
      json{{"jsonrpc", "2.0"}, {"id", "s1"}, {"method", "sampling/createMessage"}, {"params", {{"messages", {{{"role", "user"}, {"content", {{"type", "text"}, {"text", token}}}}}}}}}.dump(),
      json{{"jsonrpc", "2.0"}, {"id", 51}, {"result", {{"contents", {{{"uri", "file:///a"}, {"text", "k=" + token}}}}}}}.dump(),
  };
  for (const auto& line : lines) {
    RelayAction a = relay.Send(false, line);
    std::string out = a.forward == RelayAction::Forward::kAsIs ? line : a.replacement + a.reply;
    EXPECT_EQ(out.find(token.substr(10)), std::string::npos) << out;
  }
}

// The same root, without any JSON inside JSON: the relay's scan of a
// string leaves its C0 controls out (invisible_chars.h), so a token after a
// form feed (a page break, ^L, in source files and man pages), a vertical
// tab, a backspace or a lone ESC is glued to the word before it and dropped,
// while the client shows it on a line of its own. (\t, \r, \n are kept as
// separators; the stderr scan sees the byte and masks.) Fix: a removed
// control counts as a word boundary for GluedToAWord.
TEST(Adv9SecretScan, ATokenAfterAFormFeedOrVerticalTabInAToolResultIsMasked) {
  Relay relay;
  int seed = 40;
  for (const char* tmpl : kUncheckedTokens) {
    std::string token = Token(tmpl, ++seed);
    for (const std::string sep : {"\f", "\v", "\b", "\x1b"}) {
      std::string out = relay.ResultText("page 1 of the runbook" + sep + token + "\n");
      EXPECT_EQ(out.find(token), std::string::npos) << testing::PrintToString(sep) << ": passed unmasked: " << out;
    }
  }
}

// Held: a checksummed token (GitHub) after the same escape is masked.
TEST(Adv9SecretScan, HeldAChecksummedTokenAfterAnEscapedNewlineIsMasked) {
  Relay relay;
  std::string token = Token("ghp_{30:an}{6:crc}", 3);
  std::string text = json{{"content", "keys:\n" + token}}.dump();
  EXPECT_EQ(relay.ResultText(text).find(token.substr(4)), std::string::npos);
}

// ---- F (MEDIUM): a PuTTY private key's private lines -----------------------
// The rule "putty-private-key" matches the first line only ("PuTTY-User-Key-
// File-3: ssh-ed25519"); the secret is the base64 after "Private-Lines: N",
// several lines further down, and nothing masks it: a tool that reads a .ppk
// file (or a server that logs one) hands the key to the client with only
// its header masked, in results and in stderr alike. Fix: mask the block,
// header to "Private-MAC: <hex>", as the PEM rule does (and in stderr_redact
// open a key block at a PuTTY header as at a PEM one).
std::string PuttyKey() {
  return "PuTTY-User-Key-File-3: ssh-ed25519\n"
         "Encryption: none\n"
         "Comment: eddsa-key-20240101\n"
         "Public-Lines: 2\n"
         "AAAAC3NzaC1lZDI1NTE5AAAAIFc4W2y9Xk2n0r3cQJm4mNq8o1vYl6uJ1s7W0mV3c9aB\n"
         "\n"
         "Private-Lines: 1\n"
         "AAAAIHq2pZk7mR1vN5sX8cL3dF9gH2jK4lM6nO8pQ0rS2tU4vW6xY8z0\n"
         "Private-MAC: 4f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0\n";
}
const char* const kPuttySecret = "AAAAIHq2pZk7mR1vN5sX8cL3dF9gH2jK4lM6nO8pQ0rS2tU4vW6xY8z0";

TEST(Adv9SecretScan, APuttyKeysPrivateLinesAreMaskedInAToolResult) {
  Relay relay;
  std::string out = relay.ResultText(PuttyKey());
  ASSERT_EQ(out.find("PuTTY-User-Key-File-3: ssh-ed25519"), std::string::npos) << "control: the header is masked";
  EXPECT_EQ(out.find(kPuttySecret), std::string::npos) << "the private key passed: " << out;
}

TEST(Adv9SecretScan, APuttyKeysPrivateLinesAreMaskedInStderr) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, "loaded key:\n" + PuttyKey());
  EXPECT_EQ(out.find(kPuttySecret), std::string::npos) << "the private key passed: " << out;
}

// ---- F (MEDIUM): an armored PGP key with a Comment header -------------------
// The private-key-block rule needs 32 bytes of its body alphabet right after
// the header ([A-Za-z0-9+/=:,.\\ \t\r\n-]); an armor header such as
// "Comment: Alice <alice@example.com>" (gpg --comment, many GUIs add one)
// has '<' and '@' within 16 bytes (GnuPG 2.0's "Version: GnuPG v2.0.22
// (GNU/Linux)" a '(' within 24), so the rule matches nothing and the whole
// key passes in a tool result (one text: the stderr copy masks its lines
// itself). Fix: let the block rule skip armor header lines ("Key: value"
// up to the blank line), or match BEGIN..END whatever lies between.
std::string PgpKey(const std::string& comment) {
  std::string body;
  std::mt19937_64 rng(99);
  for (int i = 0; i < 12; ++i) body += test::Expand("{64:b64}", rng) + "\n";
  return "-----BEGIN PGP PRIVATE KEY BLOCK-----\n" + comment + "\n\n" + body + "=Abc1\n-----END PGP PRIVATE KEY BLOCK-----\n";
}

TEST(Adv9SecretScan, APgpPrivateKeyWithACommentHeaderIsMaskedInAToolResult) {
  Relay relay;
  // Control: without the comment the block is masked.
  std::string plain = PgpKey("Version: GnuPG v2");
  std::string body_line = plain.substr(plain.find("\n\n") + 2, 64);
  ASSERT_EQ(relay.ResultText(plain).find(body_line), std::string::npos) << "control";
  // GnuPG 2.0 wrote "Version: GnuPG v2.0.22 (GNU/Linux)" into every armor.
  for (const char* comment : {"Comment: Alice <alice@example.com>", "Comment: Bob's signing key", "Comment: (none)",
                              "Version: GnuPG v2.0.22 (GNU/Linux)"}) {
    std::string out = relay.ResultText(PgpKey(comment));
    EXPECT_EQ(out.find(body_line), std::string::npos) << comment << ": the key body passed: " << out.substr(0, 300);
  }
}

// ---- F (LOW): a one-line PEM across the 64 KiB cut -------------------------
// A line without a newline is cut at 64 KiB after the last quote or control
// within 8 KiB before, else after the last space, ',' or '\\' (CutAt). A PEM
// written on one line with "\n" escapes (a JSON value, a config dump) has
// spaces and backslashes all through it, so when no quote lies within 8 KiB
// before the cut (a plain-text log line), the cut falls INSIDE the key: the
// first piece is masked from the header, the second piece (the rest of the
// body, no header) matches nothing and passes. Fix: a piece whose key
// block opens without its END continues the block in the next piece (the
// in_key_ state of whole lines, kept across cuts), or the cut is moved
// before the header.
TEST(Adv9SecretScan, AOneLinePemAcrossThe64KiBCutIsMaskedWhole) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::mt19937_64 rng(5);
  std::string pem = "-----BEGIN PRIVATE KEY-----";
  std::vector<std::string> lines;
  for (int i = 0; i < 26; ++i) {  // an RSA 2048 key's ~1.7 KiB body
    lines.push_back(test::Expand("{64:b64}", rng));
    pem += "\\n" + lines.back();
  }
  pem += "\\n-----END PRIVATE KEY-----";
  // Plain words before the key (no quote), so the key straddles the 64 KiB hold.
  std::string head;
  while (head.size() < kStderrLineHold - pem.size() / 2) head += "k=v ";
  std::string line = "config: " + head + "tls.key=" + pem + " and more " + std::string(100000, 'z') + "\n";
  // Control: the same key on a short line is masked.
  {
    StderrRedactor r = g.Redactor();
    std::string out = ThroughCopy(r, "config: tls.key=" + pem + "\n");
    for (const auto& l : lines) ASSERT_EQ(out.find(l), std::string::npos) << "control";
  }
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, line);
  std::size_t passed = 0;
  for (const auto& l : lines) passed += out.find(l) != std::string::npos;
  EXPECT_EQ(passed, 0u) << passed << " of " << lines.size() << " body lines of the key passed the cut unmasked";
}

// The same cut, for the rules whose match has a space in it: a keyword,
// " = " or ": ", then the secret ("aws_secret_access_key = <40>", whose
// secret has no prefix of its own; "Authorization: Bearer <opaque>";
// "machine h login u password p"; "; Password=..."). In a quote-free long
// line the cut falls at the last space before 64 KiB — the one between the
// keyword and the secret — and the secret's piece, without its keyword,
// matches no rule. Fix: as above, or look back from the hold for the start
// of a keyword rule's match before choosing a word boundary.
TEST(Adv9SecretScan, AKeywordSecretAcrossThe64KiBCutIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::mt19937_64 rng(17);
  struct Case {
    std::string keyword, secret;
  };
  const std::vector<Case> cases = {
      {"aws_secret_access_key = ", test::Expand("{40:b64}", rng)},
      {"Authorization: Bearer ", test::Expand("{48:an}", rng)},
      {"machine api.example.com login deploy password ", test::Expand("{24:an}", rng)},
  };
  for (const Case& c : cases) {
    // Control: on a short line the secret is masked.
    {
      StderrRedactor r = g.Redactor();
      ASSERT_EQ(ThroughCopy(r, "req " + c.keyword + c.secret + " ok\n").find(c.secret), std::string::npos) << c.keyword;
    }
    std::string head = "request dump:";
    while (head.size() + 4 < kStderrLineHold - 20 - c.keyword.size()) head += " k=v";
    head.resize(kStderrLineHold - 20 - c.keyword.size(), 'v');
    std::string line = head + " " + c.keyword + c.secret + " " + std::string(100000, 'z') + "\n";
    ASSERT_LT(line.find(c.secret), kStderrLineHold);
    ASSERT_GT(line.find(c.secret) + c.secret.size(), kStderrLineHold);
    StderrRedactor r = g.Redactor();
    std::string out = ThroughCopy(r, line);
    EXPECT_EQ(out.find(c.secret), std::string::npos) << c.keyword << ": the secret passed the 64 KiB cut unmasked";
  }
}

// ---- F (LOW): a multi-line key longer than 256 lines -----------------------
// stderr_redact masks a key's body lines up to kMaxKeyLines (256) after its
// header, then stops: the rest of a longer block passes. A PEM of a large
// key printed with short lines (or PGP key blocks with several subkeys)
// exceeds 256 lines; lines that are the key's own base64 alphabet could
// keep the block open until its END (fix: past the bound, go on masking
// while the lines are the armor's base64 alphabet).
TEST(Adv9SecretScan, AKeyBlockOfMoreThan256LinesIsMaskedToItsEnd) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::mt19937_64 rng(11);
  std::string in = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n";
  std::vector<std::string> body;
  for (int i = 0; i < 300; ++i) {
    body.push_back(test::Expand("{64:b64}", rng));
    in += body.back() + "\n";
  }
  in += "=AbCd\n-----END PGP PRIVATE KEY BLOCK-----\nready\n";
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, in);
  std::size_t passed = 0;
  for (const auto& l : body) passed += out.find(l) != std::string::npos;
  EXPECT_EQ(passed, 0u) << passed << " of 300 body lines passed";
  EXPECT_NE(out.find("ready\n"), std::string::npos);
}

}  // namespace
}  // namespace mcpcell
