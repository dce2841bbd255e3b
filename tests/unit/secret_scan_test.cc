// The secret rules, one positive and one near miss each, and the guard's
// handling of whole MCP messages (escapes, content blocks, redaction).

#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "audit/sha256.h"
#include "guard/secret_guard.h"
#include "guard/secret_scanner.h"
#include "guard/token_checksum.h"
#include "secret_samples.h"

namespace mcpcell {
namespace {

using test::Expand;
using test::SecretSample;
using test::SecretSamples;

SecretRule Rule(std::string name, std::string regex) {
  SecretRule r;
  r.name = std::move(name);
  r.regex = std::move(regex);
  return r;
}

const SecretScanner& Scanner() {
  static auto s = SecretScanner::Builtin();
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().Message());
  return **s;
}

std::set<std::string> RulesFound(std::string_view text) {
  static auto scratch = Scanner().NewScratch();
  std::set<std::string> out;
  for (const auto& m : Scanner().Scan(text, scratch->get())) out.insert(Scanner().rule(m.rule).name);
  return out;
}

TEST(SecretRules, AtLeastSixtyCompiledWithASampleEach) {
  EXPECT_GE(BuiltinSecretRules().size(), 60u);
  std::set<std::string> names, sampled;
  for (const auto& r : BuiltinSecretRules()) EXPECT_TRUE(names.insert(r.name).second) << "duplicate " << r.name;
  for (const auto& s : SecretSamples()) sampled.insert(s.rule);
  EXPECT_EQ(names, sampled) << "every rule needs a positive and a near miss in secret_samples.h";
  EXPECT_EQ(Scanner().size(), BuiltinSecretRules().size());
}

class EachRule : public ::testing::TestWithParam<SecretSample> {};

TEST_P(EachRule, FindsThePositiveInProseAndNotTheNearMiss) {
  const SecretSample& s = GetParam();
  std::mt19937_64 rng(std::hash<std::string>{}(s.rule));
  for (int i = 0; i < 20; ++i) {
    std::string token = Expand(s.positive, rng);
    std::string text = "the value is " + token + " (see above)\n";
    auto found = RulesFound(text);
    EXPECT_TRUE(found.count(s.rule)) << s.rule << " missed " << token;
    std::string miss = "the value is " + Expand(s.near_miss, rng) + " (see above)\n";
    EXPECT_FALSE(RulesFound(miss).count(s.rule)) << s.rule << " reported the near miss " << miss;
  }
}

TEST_P(EachRule, IsNotReportedInsideALongerWordWhenBounded) {
  const SecretSample& s = GetParam();
  const SecretRule* rule = nullptr;
  for (const auto& r : BuiltinSecretRules()) {
    if (r.name == s.rule) rule = &r;
  }
  ASSERT_NE(rule, nullptr);
  if (!rule->bounded) GTEST_SKIP() << s.rule << " is delimited by its own structure, not by word boundaries";
  std::mt19937_64 rng(7);
  std::string token = Expand(s.positive, rng);
  // Glued to letters on both sides: part of a longer identifier or blob,
  // unless its checksum says it is a token (token_checksum.h).
  bool checked = CheckToken(BuiltinTokenCheck(rule->name), token) == ChecksumVerdict::kValid;
  EXPECT_EQ(RulesFound("Zq" + token + "Zq").count(s.rule), checked ? 1u : 0u) << token;
}

// An escape's letter is no word glued to the token after it ("\\n" + token in
// JSON inside JSON, adv9_secret_leaks_test.cc); a letter after a backslash
// that is itself escaped ("\\\\n": a backslash, then the word "n...") still is,
// and so is a digit after one.
TEST(SecretScanner, OnlyAnEscapesLetterIsNoWordBeforeAToken) {
  const std::string token = "AKIA" + std::string(16, 'Q');
  auto scratch = Scanner().NewScratch();
  auto found = [&](const std::string& text) { return Scanner().Scan(text, scratch->get()).size(); };
  EXPECT_EQ(found("keys:\\n" + token), 1u);
  EXPECT_EQ(found("keys:\\\\\\t" + token), 1u);  // "\\\t": an escaped backslash, then \t
  EXPECT_EQ(found("keys:\\\\n" + token), 0u);      // "\\n": a backslash, then "n" + token
  EXPECT_EQ(found("keys:\\0" + token), 0u);
  EXPECT_EQ(found("keysn" + token), 0u);
  // A control character the scan left out (JsonStrings::breaks) is a boundary.
  const std::string glued = "page" + token;
  const std::vector<std::size_t> at_token = {4};
  EXPECT_EQ(Scanner().Scan(glued, scratch->get(), at_token).size(), 1u);
  EXPECT_EQ(Scanner().Scan(glued, scratch->get(), std::vector<std::size_t>{2}).size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Builtin, EachRule, ::testing::ValuesIn(SecretSamples()),
                         [](const auto& p) {
                           std::string n = p.param.rule;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

// The last hex digit of "\\uXXXX" and of "%XX" ends an escape, not a word
// (adv12): a token after "\\u201c" (Python's json.dumps) or "%22" is found;
// after a plain hex word it is not.
TEST(SecretScanner, AUnicodeOrPercentEscapeIsNoWordBeforeAToken) {
  const std::string akia = "AKIAQWERTYUIOPASDFGH";
  for (const char* before : {"\\u201c", "\\u00A0", "%22", "%3d", "x\\\\\\u201c"}) {
    EXPECT_EQ(RulesFound(std::string("key: ") + before + akia).count("aws-access-key-id"), 1u) << before;
  }
  for (const char* before : {"\\\\u201c", "u201c", "%2", "beef"}) {
    EXPECT_EQ(RulesFound(std::string("key: ") + before + akia).count("aws-access-key-id"), 0u) << before;
  }
}

TEST(SecretScanner, MatchCoversTheWholeToken) {
  std::string token = "ghp_" + std::string(30, 'a') + test::Base62Crc32Of(std::string(30, 'a'));
  std::string text = "x " + token + " y";
  auto scratch = Scanner().NewScratch();
  auto found = Scanner().Scan(text, scratch->get());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(text.substr(found[0].from, found[0].to - found[0].from), token);
}

TEST(SecretScanner, ABadUserRuleIsNamed) {
  auto s = SecretScanner::Compile({Rule("mine", "(unclosed")});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().Message().find("mine"), std::string::npos) << s.error().Message();
  EXPECT_FALSE(CheckSecretRegex(Rule("mine", "a(?=b)")).ok()) << "lookahead is not supported by Vectorscan";
}

// --- Whole messages ----------------------------------------------------------

struct Guarded {
  std::unique_ptr<SecretGuard> guard;
  simdjson::dom::parser parser;
  explicit Guarded(SecretPolicy p = {}) {
    auto g = SecretGuard::Create(p);
    EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().Message());
    guard = std::move(*g);
  }
  // Both paths: the full scan of the DOM, and the relay's, which first tries
  // to clear the line from its own bytes (json_strings_raw.h). Every test of
  // the guard checks that they agree, on the line and on the line followed by
  // white space.
  std::vector<SecretFinding> Scan(const std::string& json) {
    Compare(json + std::string(400, ' '));  // a short line mostly of escaped strings: the fast path's decoder too
    return Compare(json);
  }
  std::vector<SecretFinding> Compare(const std::string& json) {
    auto full = guard->Scan(parser.parse(json).value_unsafe());
    std::string padded = json + std::string(simdjson::SIMDJSON_PADDING, ' ');
    std::string_view line(padded.data(), json.size());
    auto relay = guard->Scan(parser.parse(line.data(), line.size(), false).value_unsafe(), line);
    EXPECT_EQ(Names(relay), Names(full)) << json;
    if (!full.empty()) {
      EXPECT_FALSE(guard->ClearedRaw(line)) << json;
    }
    return full;
  }
  static std::vector<std::string> Names(const std::vector<SecretFinding>& found) {
    std::vector<std::string> out;
    for (const auto& f : found) out.push_back(f.rule + ":" + f.sha256);
    return out;
  }
  std::string Redact(const std::string& json, std::vector<SecretFinding>* found) {
    auto out = guard->Redact(parser.parse(json).value_unsafe(), found);
    EXPECT_TRUE(out.has_value()) << "no redaction made it clean: " << json;
    return out.value_or("(blocked)");
  }
};

// With its checksum (token_checksum.h): "43INMq" is the CRC-32 of the 30 before it.
const std::string kToken = "ghp_" "R7xQ2mK9pL4vN8sT1wY6zB3cD5fG0h" "43INMq";

TEST(SecretGuard, EscapesDoNotHideAToken) {
  Guarded g;
  // "ghp_" written as \u0067\u0068\u0070\u005f: decoded before the scan.
  std::string msg = R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\u0067\u0068\u0070\u005f)" +
                    kToken.substr(4) + R"("}]}})";
  auto found = g.Scan(msg);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "github-pat-classic");
  EXPECT_EQ(found[0].sha256, Sha256Hex(kToken));
}

TEST(SecretGuard, ATokenSplitAcrossTextBlocksIsFoundAndBothHalvesMasked) {
  Guarded g;
  nlohmann::json msg = {{"jsonrpc", "2.0"}, {"id", 3}, {"result", {{"content", {
      {{"type", "text"}, {"text", "token: " + kToken.substr(0, 12)}},
      {{"type", "text"}, {"text", kToken.substr(12) + " end"}}}}}}};
  std::vector<SecretFinding> found;
  std::string out = g.Redact(msg.dump(), &found);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].sha256, Sha256Hex(kToken));
  auto back = nlohmann::json::parse(out);
  EXPECT_EQ(back["result"]["content"][0]["text"], "token: [REDACTED:github-pat-classic]");
  EXPECT_EQ(back["result"]["content"][1]["text"], "[REDACTED:github-pat-classic] end");
  EXPECT_EQ(out.find(kToken.substr(12)), std::string::npos);
}

TEST(SecretGuard, TwoUnrelatedStringsAreNotJoined) {
  Guarded g;
  nlohmann::json msg = {{"a", kToken.substr(0, 12)}, {"b", kToken.substr(12)}};
  EXPECT_TRUE(g.Scan(msg.dump()).empty()) << "only the texts of one content list are read as one";
}

// A member's key and its string value are read as "key":"value" (adv12): a
// keyword rule matches, and the mask covers the value only, the key is kept.
TEST(SecretGuard, AKeywordMemberIsMaskedInItsValueOnly) {
  Guarded g;
  const std::string secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  for (const char* key : {"AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "SecretAccessKey", "secretAccessKey"}) {
    nlohmann::json msg = {{"params", {{"env", {{key, secret}, {"REGION", "eu-west-1"}}}}}};
    ASSERT_EQ(g.Scan(msg.dump()).size(), 1u) << key;
    std::vector<SecretFinding> found;
    auto back = nlohmann::json::parse(g.Redact(msg.dump(), &found));
    EXPECT_EQ(back["params"]["env"][key], "[REDACTED:aws-secret-access-key]") << key;
    EXPECT_EQ(back["params"]["env"]["REGION"], "eu-west-1");
  }
  // A bearer header as a member: the value masked, the key kept.
  std::vector<SecretFinding> found;
  nlohmann::json headers = {{"headers", {{"Authorization", "Bearer " + std::string(40, 'x') + "Ab9"}}}};
  auto back = nlohmann::json::parse(g.Redact(headers.dump(), &found));
  EXPECT_EQ(back["headers"]["Authorization"], "[REDACTED:http-bearer-token]") << back.dump();
  // Not joined across members, nor to a value that is no string.
  EXPECT_TRUE(g.Scan(nlohmann::json{{"aws_secret_access_key", 1}, {"x", secret}}.dump()).empty());
  EXPECT_TRUE(g.Scan(nlohmann::json{{"note", "aws_secret_access_key"}, {"x", secret}}.dump()).empty());
}

// URL passwords: 8 characters or more, not a manual's placeholder (adv12).
TEST(SecretScanner, UrlPasswordsButNotPlaceholders) {
  for (const char* text : {"https://deploy:Zq8vN2rT5wLp@pypi.corp.example/simple/",
                           "git remote: https://ci-bot:hG7d2KsP0qLm3@git.corp.example/a.git",
                           "HTTPS_PROXY=http://jdoe:Xy7!pQ2#zW9@proxy:3128", "ftp://u:Qw3rTy8uIo@[fd00::5]/"}) {
    EXPECT_EQ(RulesFound(text).count("url-with-password"), 1u) << text;
  }
  for (const char* text : {"https://user:password@example.com/", "ftp://anonymous:xxxxxxxx@ftp.example.org/",
                           "http://admin:changeme@localhost:8080/", "https://user:${PASSWORD}@host/",
                           "https://user:<password>@host/", "https://user:pass@host/", "https://user:YourPassword1@h/",
                           "http://[::1]:8080/path", "see https://example.com:443/a@b",
                           "http://someusername:p4ssw0rd@example.com/cache/", "http://Benutzer:Passwort@Server:Port/",
                           "http://gebruiker:wachtwoord@server:poort/", "cvs://:pserver:anoncvs@sources.redhat.com:/cvs/src"}) {
    EXPECT_EQ(RulesFound(text).count("url-with-password"), 0u) << text;
  }
}

TEST(SecretScanner, NpmrcCredentialsButNotPlaceholders) {
  EXPECT_EQ(RulesFound("//npm.pkg.example/:_authToken=0f4e7b2a-1c3d-4e5f-8a9b-0c1d2e3f4a5b").count("npmrc-auth"), 1u);
  EXPECT_EQ(RulesFound("_auth = dXNlcjpodW50ZXIyMnB3").count("npmrc-auth"), 1u);
  for (const char* text : {"//registry.npmjs.org/:_authToken=${NPM_TOKEN}", "_authToken=", "email_auth=abcdefghijklmnop",
                           "npm config set _auth"}) {
    EXPECT_EQ(RulesFound(text).count("npmrc-auth"), 0u) << text;
  }
}

TEST(SecretGuard, EveryPlaceOfAResultIsScanned) {
  Guarded g;
  using nlohmann::json;
  std::vector<json> places;
  places.push_back(json{{"structuredContent", json{{"deep", json{{"list", json::array({json(1), json(kToken)})}}}}}});
  places.push_back(json{{"contents", json::array({json{{"uri", "file:///x"}, {"text", "k=" + kToken}}})}});
  places.push_back(json{{"content", json::array({json{{"type", "resource"},
                                                      {"resource", json{{"uri", "file:///x"}, {"text", kToken}}}}})}});
  json meta = json::object();
  meta[kToken] = 1;  // a key
  places.push_back(json{{"_meta", meta}});
  for (const auto& result : places) {
    nlohmann::json msg = {{"jsonrpc", "2.0"}, {"id", 1}, {"result", result}};
    std::vector<SecretFinding> found;
    std::string out = g.Redact(msg.dump(), &found);
    EXPECT_EQ(found.size(), 1u) << msg.dump();
    EXPECT_EQ(out.find(kToken), std::string::npos) << out;
    EXPECT_TRUE(json::accept(out)) << out;
  }
  nlohmann::json err = {{"jsonrpc", "2.0"}, {"id", 1}, {"error", {{"code", -1}, {"message", "bad key " + kToken}}}};
  EXPECT_EQ(g.Scan(err.dump()).size(), 1u);
}

TEST(SecretGuard, RedactionKeepsEverythingElse) {
  Guarded g;
  nlohmann::json msg = {{"jsonrpc", "2.0"}, {"id", "a\"b"}, {"method", "tools/call"},
                        {"params", {{"name", "t"}, {"arguments", {{"n", 12345678901234}, {"f", 0.5}, {"b", true},
                                                                  {"z", nullptr}, {"s", "pre " + kToken + " \n\u2028 post"}}}}}};
  std::vector<SecretFinding> found;
  auto out = nlohmann::json::parse(g.Redact(msg.dump(), &found));
  msg["params"]["arguments"]["s"] = "pre [REDACTED:github-pat-classic] \n\u2028 post";
  EXPECT_EQ(out, msg);
}

TEST(SecretGuard, UserRulesAddAndDisableWorks) {
  SecretPolicy p;
  p.rules.push_back(Rule("acme-key", "ACME-[0-9]{8}"));
  p.disable.push_back("github-pat-classic");
  Guarded g(p);
  auto found = g.Scan(R"({"a":"x ACME-12345678 y ghp_)" + kToken.substr(4) + R"("})");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "acme-key");
}

TEST(SecretGuard, AHugeStringIsScannedToItsLastByte) {
  Guarded g;
  std::string big(48u << 20, 'a');
  big += " " + kToken;
  nlohmann::json msg = {{"x", big}};
  EXPECT_EQ(g.Scan(msg.dump()).size(), 1u);
}


// --- Attempts to get a token past the scan (docs/THREAT_MODEL.md) -------------

TEST(SecretAttacks, IdMethodAndEscapedKeysAreScanned) {
  Guarded g;
  EXPECT_EQ(g.Scan(R"({"jsonrpc":"2.0","id":")" + kToken + R"(","method":"ping"})").size(), 1u);
  EXPECT_EQ(g.Scan(R"({"jsonrpc":"2.0","method":")" + kToken + R"("})").size(), 1u);
  std::string escaped_key = R"({"params":{"\u0067hp_)" + kToken.substr(4) + R"(":1}})";
  EXPECT_EQ(g.Scan(escaped_key).size(), 1u) << escaped_key;
}

TEST(SecretAttacks, AnImageBlockBetweenTheHalvesDoesNotSeparateThem) {
  Guarded g;
  nlohmann::json msg = {{"result", {{"content", {
      {{"type", "text"}, {"text", kToken.substr(0, 20)}},
      {{"type", "image"}, {"data", "iVBORw0KGgo="}, {"mimeType", "image/png"}},
      {{"type", "text"}, {"text", kToken.substr(20)}}}}}}};
  std::vector<SecretFinding> found;
  std::string out = g.Redact(msg.dump(), &found);
  EXPECT_EQ(found.size(), 1u);
  EXPECT_EQ(out.find(kToken.substr(20)), std::string::npos) << out;
}

TEST(SecretAttacks, ThreeBlocksAndOneCharacterBlocks) {
  Guarded g;
  nlohmann::json blocks = nlohmann::json::array();
  for (char c : kToken) blocks.push_back({{"type", "text"}, {"text", std::string(1, c)}});
  std::vector<SecretFinding> found;
  std::string out = g.Redact(nlohmann::json{{"result", {{"content", blocks}}}}.dump(), &found);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].sha256, Sha256Hex(kToken));
  auto back = nlohmann::json::parse(out);
  for (const auto& b : back["result"]["content"]) EXPECT_EQ(b["text"], "[REDACTED:github-pat-classic]");
}

TEST(SecretAttacks, KeywordsInAnyCase) {
  Guarded g;
  std::string secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  for (std::string kw : {"AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "Aws_Secret_Access_Key", "awsSecretAccessKey"}) {
    nlohmann::json msg = {{"t", kw + "=" + secret}};
    EXPECT_EQ(g.Scan(msg.dump()).size(), 1u) << kw;
  }
}

TEST(SecretAttacks, ControlCharactersAroundATokenDoNotHideIt) {
  Guarded g;
  // Tab, NUL (escaped), newline, quote and backslash right next to the token.
  for (std::string wrap : {R"(\t)", R"(\u0000)", R"(\n)", R"(\")", R"(\\)"}) {
    std::string msg = R"({"t":")" + wrap + kToken + wrap + R"("})";
    std::vector<SecretFinding> found;
    std::string out = g.Redact(msg, &found);
    EXPECT_EQ(found.size(), 1u) << msg;
    EXPECT_EQ(out.find(kToken), std::string::npos) << out;
  }
}

TEST(SecretAttacks, InvisibleCharactersInsideATokenAreIgnored) {
  Guarded g;
  // Zero-width space, soft hyphen, word joiner, BOM and a bidi mark inside
  // the token: a reader (or a model) sees the token, so the scan does too.
  for (std::string mark : {"\u200b", "\u00ad", "\u2060", "\ufeff", "\u202e"}) {
    std::string msg = R"({"t":"x )" + kToken.substr(0, 8) + mark + kToken.substr(8, 10) + mark + kToken.substr(18) + R"( y"})";
    std::vector<SecretFinding> found;
    std::string out = g.Redact(msg, &found);
    ASSERT_EQ(found.size(), 1u) << msg;
    EXPECT_EQ(found[0].sha256, Sha256Hex(kToken));
    EXPECT_EQ(nlohmann::json::parse(out)["t"], "x [REDACTED:github-pat-classic] y") << out;
  }
  // Other non-ASCII text around a token changes nothing.
  std::vector<SecretFinding> found;
  std::string out = g.Redact(R"({"t":"— é 日本 )" + kToken + R"( —"})", &found);
  EXPECT_EQ(nlohmann::json::parse(out)["t"], "— é 日本 [REDACTED:github-pat-classic] —");
}

TEST(SecretAttacks, RedactedOutputRescansClean) {
  Guarded g;
  // Overlapping rules (a JWT inside a bearer header) and adjacent tokens.
  std::string jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnopqrstuvwxyzABCDEF0123456789";
  nlohmann::json msg = {{"h", "Authorization: Bearer " + jwt}, {"two", kToken + " " + kToken}};
  std::vector<SecretFinding> found;
  std::string out = g.Redact(msg.dump(), &found);
  EXPECT_GE(found.size(), 3u);
  EXPECT_TRUE(g.Scan(out).empty()) << out;
}

// fuzz/corpus/secret_scan/crash-mask-completes-url: the fuzzer's minimal
// input. The Stripe key is masked, and the mask's ':' made
// "POSTGRES://[REDACTED:stripe-restricted-key]@h" a URL with a password.
TEST(SecretAttacks, AMaskDoesNotCompleteANewSecret) {
  Guarded g;
  std::vector<SecretFinding> found;
  std::string out = g.Redact(R"("POSTGRES://rk_live_bcdijklmnjklmnstuvwxyz01@h")", &found);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "stripe-restricted-key") << "the URL was formed by the mask, not found in the input";
  EXPECT_TRUE(g.Scan(out).empty()) << out;
  EXPECT_EQ(out, R"("[REDACTED:stripe-restricted-key]")") << "the mask grows over the URL it formed";
  // fuzz/corpus/secret_scan/crash-two-masks-widened: two in one string; the
  // second is mapped back through the masks the output was written with,
  // not through the first one grown in the same round.
  std::string one = "POSTGRES://rk_live_bcdijklmnjklmnstuvwxyz01@h";
  out = g.Redact("\"" + one + "/" + one + "\"", &found);
  EXPECT_EQ(found.size(), 2u);
  EXPECT_EQ(out, R"("[REDACTED:stripe-restricted-key]/[REDACTED:stripe-restricted-key]")");
}

// Variants of the same shape: a mask shorter than what it hides brings a
// keyword's value under a length limit; a mask's bracket ends a word so a
// key glued to the masked token now stands alone.
TEST(SecretAttacks, MaskVariantsRescanClean) {
  Guarded g;
  std::string dropbox = "sl.u." + std::string(140, 'A');  // longer than netrc's 100-byte host
  std::string aws = "AKIAIOSFODNN7EXAMPLE";
  std::vector<std::string> texts = {
      "mysql://" + kToken + "@db.example",                         // user = token, mask adds the ':'
      "redis://" + kToken + "@cache",                                //
      "machine " + dropbox + " login me password hunter2hunter2",  // host shrinks under 100 bytes
      "machine h login " + dropbox + " password hunter22",          // login shrinks under 64 bytes
      aws + "postgres://u:pass1@h",                                  // AKIA… glued to a token of a rule
      "xpostgres://u:pass1@h " + aws,                                //   that is no whole word
      "x;password=" + kToken + ";y",                                // overlapping rules
      "postgres://" + kToken + ":" + kToken + "@h",                  // both halves tokens
  };
  for (const auto& t : texts) {
    std::vector<SecretFinding> found;
    std::string out = g.Redact(nlohmann::json{{"t", t}}.dump(), &found);
    EXPECT_FALSE(found.empty()) << t;
    EXPECT_TRUE(g.Scan(out).empty()) << t << " -> " << out;
    EXPECT_EQ(out.find(kToken.substr(4)), std::string::npos) << out;
    EXPECT_EQ(out.find(aws), std::string::npos) << out;
  }
  // Across content blocks: the URL's halves in two glued texts.
  nlohmann::json blocks = {{"content", {{{"type", "text"}, {"text", "see mongodb://"}},
                                        {{"type", "text"}, {"text", kToken + "@h.example now"}}}}};
  std::vector<SecretFinding> found;
  std::string out = g.Redact(blocks.dump(), &found);
  EXPECT_TRUE(g.Scan(out).empty()) << out;
}

TEST(SecretAttacks, AKeyGluedToAMaskedTokenIsReportedToo) {
  Guarded g;
  std::vector<SecretFinding> found;
  // The URL rule is not bounded, so it is found inside the word; the key
  // glued to it is no whole word until the URL is a mask.
  std::string out = g.Redact(nlohmann::json{{"t", "AKIAIOSFODNN7EXAMPLEpostgres://u:pass1@h"}}.dump(), &found);
  std::vector<std::string> rules;
  for (const auto& f : found) rules.push_back(f.rule);
  EXPECT_EQ(rules, (std::vector<std::string>{"database-url-with-password", "aws-access-key-id"})) << out;
  EXPECT_EQ(found.back().sha256, Sha256Hex("AKIAIOSFODNN7EXAMPLE"));
  EXPECT_EQ(out, R"({"t":"[REDACTED:aws-access-key-id][REDACTED:database-url-with-password]"})");
}

TEST(SecretGuard, TwoStringsAreNotJoinedByARuleThatAllowsAnyByte) {
  Guarded g;
  // NUL separates a message's strings; "[^\s:@/]" and "\S" must not cross it.
  EXPECT_TRUE(g.Scan(R"({"postgres://u":"secret@host"})").empty());
  EXPECT_TRUE(g.Scan(R"({"machine":"h login u password hunter2hunter2"})").empty());
  EXPECT_TRUE(g.Scan(R"(["x;password=","abcdefgh"])").empty());
}

// A profile rule that matches the mask itself: no mask can make the text
// clean, so the strings it touches are emptied.
TEST(SecretGuard, ARuleMatchingTheMaskEmptiesTheString) {
  SecretPolicy p;
  p.rules.push_back(Rule("matches-masks", "REDACTED"));
  Guarded g(p);
  std::vector<SecretFinding> found;
  std::string out = g.Redact(nlohmann::json{{"t", "a " + kToken + " b"}, {"u", "clean"}}.dump(), &found);
  EXPECT_EQ(nlohmann::json::parse(out), (nlohmann::json{{"t", ""}, {"u", "clean"}})) << out;
  EXPECT_TRUE(g.Scan(out).empty());
}

// A profile rule that matches the NUL between strings: nothing to mask, so
// Redact says so and the relay blocks (relay_secrets_test.cc).
TEST(SecretGuard, ARuleNoMaskCanSatisfyGivesNothing) {
  SecretPolicy p;
  p.rules.push_back(Rule("nul", "\\x00"));
  p.rules.back().bounded = false;
  auto g = SecretGuard::Create(p);
  ASSERT_TRUE(g.ok());
  simdjson::dom::parser parser;
  std::vector<SecretFinding> found;
  // (Two members: a key and its string value are joined without a NUL.)
  auto out = (*g)->Redact(parser.parse(std::string(R"({"a":"b","c":"d"})")).value_unsafe(), &found);
  EXPECT_FALSE(found.empty());
  EXPECT_FALSE(out.has_value()) << *out;
}

// --- Checksums (token_checksum.h) --------------------------------------------

// Published, expired GitHub tokens (therootcompany/base62-token.js issue 2),
// written as body + checksum; and a published age test identity
// (Producement/age-yubikey-pgp test/fixture.dart).
TEST(TokenChecksum, PublishedVectorsHold) {
  EXPECT_EQ(test::Base62Crc32Of("zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ"), "0mLq17") << "the test's own generator";
  EXPECT_EQ(CheckToken(TokenCheck::kBase62Crc32, "ghp_" "zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ" "0mLq17"), ChecksumVerdict::kValid);
  EXPECT_EQ(CheckToken(TokenCheck::kBase62Crc32, "ghp_" "adE7dp8rHP6gUTuPwxLTZjZdtya3sV" "0UQzQM"), ChecksumVerdict::kValid);
  EXPECT_EQ(CheckToken(TokenCheck::kBech32, "AGE-SECRET-KEY-1" "3W6UT6Z3H72N3YY9MXJMPPMN2K0KQGW863HPH258UCUXKLK3S3RQA32XH3"),
            ChecksumVerdict::kValid);
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u) << "the CRC-32 check value";
}

TEST(TokenChecksum, EverySingleChangeBreaksIt) {
  const std::string b62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::mt19937_64 rng(13);
  for (const char* prefix : {"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "npm_"}) {
    std::string token = test::Expand(std::string(prefix) + "{30:an}{6:crc}", rng);
    ASSERT_EQ(RulesFound("t " + token + " .").size(), 1u) << token;
    for (std::size_t at = 4; at < token.size(); ++at) {
      std::string bad = token;
      bad[at] = b62[(b62.find(bad[at]) + 1 + rng() % 61) % 62];
      EXPECT_EQ(CheckToken(TokenCheck::kBase62Crc32, bad), ChecksumVerdict::kInvalid) << bad;
      EXPECT_TRUE(RulesFound("t " + bad + " .").empty()) << "a wrong checksum is no token: " << bad;
    }
  }
  std::string age = test::Expand("AGE-SECRET-KEY-1{52:age}{6:bech32}", rng);
  ASSERT_EQ(RulesFound(age).size(), 1u) << age;
  const std::string bech = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";
  for (std::size_t at = 16; at < age.size(); ++at) {
    std::string bad = age;
    bad[at] = bech[(bech.find(bad[at]) + 1 + rng() % 31) % 32];
    EXPECT_TRUE(RulesFound(bad).empty()) << bad;
  }
}

TEST(TokenChecksum, RandomLookalikesAreNotReported) {
  // What an ID, a hash or a test fixture that only looks like a token is:
  // the prefix and 36 random base62 characters. 1 in 2^32 would pass.
  std::mt19937_64 rng(99);
  int reported = 0;
  for (int i = 0; i < 2000; ++i) reported += !RulesFound("id ghp_" + test::Expand("{36:an}", rng) + " end").empty();
  EXPECT_EQ(reported, 0);
}

TEST(TokenChecksum, AValidTokenGluedToAWordIsStillReported) {
  // The checksum is stronger evidence than a word boundary: "xx" + token +
  // "yy" (a model asked to strip two letters) is a finding and masked.
  Guarded g;
  std::vector<SecretFinding> found;
  std::string out = g.Redact(nlohmann::json{{"t", "xx" + kToken + "yy"}}.dump(), &found);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].sha256, Sha256Hex(kToken));
  EXPECT_EQ(out, R"({"t":"xx[REDACTED:github-pat-classic]yy"})");
}

TEST(TokenChecksum, EvasionsKeepTheChecksum) {
  // Escapes, invisible characters and a split across blocks are undone
  // before the check, so a real token's checksum still holds.
  Guarded g;
  EXPECT_EQ(g.Scan(R"({"t":"\u0067hp_)" + kToken.substr(4) + R"("})").size(), 1u);
  EXPECT_EQ(g.Scan(R"({"t":")" + kToken.substr(0, 20) + "\u200b" + kToken.substr(20) + R"("})").size(), 1u);
  nlohmann::json blocks = {{"content", {{{"type", "text"}, {"text", kToken.substr(0, 37)}},
                                        {{"type", "text"}, {"text", kToken.substr(37)}}}}};
  EXPECT_EQ(g.Scan(blocks.dump()).size(), 1u);
  // A longer refresh token has no documented checksum: reported as before.
  std::mt19937_64 rng(5);
  EXPECT_EQ(RulesFound("r ghr_" + test::Expand("{76:an}", rng) + " .").count("github-refresh-token"), 1u);
}

}  // namespace
}  // namespace mcpcell
