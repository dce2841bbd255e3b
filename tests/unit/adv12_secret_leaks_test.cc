// Adversary pass adv12 against the secret scan (guard/secret_scanner.cc,
// guard/secret_rules.cc, cell/stderr_redact.cc) and the registry URL token
// check (source/url_credential.cc). Each test asserts the SECURE outcome; a
// DISABLED_ test is a finding (it fails on main 74765d7), the others
// (Held...) are attacks that held. The goal: a secret reaching the client
// (a tools/call result, the server's stderr) or an install-script cell
// unmasked with the default scan (redact both ways).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "guard/secret_check.h"
#include "relay/envelope.h"
#include "relay/mcp_relay.h"
#include "source/registry_url.h"
#include "source/script_npm.h"
#include "source/url_credential.h"
#include "stderr_scan.h"

namespace mcpcell {
namespace {

using nlohmann::json;

using test::DefaultScan;
using test::ThroughCopy;
using test::Token;

/// The relay with the default scan (redact both ways).
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
  /// What the client receives for a tools/call answered with `result`.
  std::string Result(const json& result) {
    ++id_;
    Send(true, json{{"jsonrpc", "2.0"}, {"id", id_}, {"method", "tools/call"},
                    {"params", {{"name", "read"}, {"arguments", json::object()}}}}.dump());
    return Out(false, json{{"jsonrpc", "2.0"}, {"id", id_}, {"result", result}}.dump());
  }
  std::string ResultText(const std::string& text) {
    return Result(json{{"content", {{{"type", "text"}, {"text", text}}}}});
  }
  /// What reaches the other side for `line`.
  std::string Out(bool from_client, const std::string& line) {
    RelayAction a = Send(from_client, line);
    return a.forward == RelayAction::Forward::kAsIs ? line : a.replacement + a.reply;
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

/// A PEM private key's body: `lines` lines of 64 base64 characters.
std::vector<std::string> KeyBody(std::size_t lines, std::uint64_t seed) {
  std::vector<std::string> body;
  for (std::size_t i = 0; i < lines; ++i) body.push_back(Token("{64:b64}", seed * 1000 + i));
  return body;
}

// ============================================================================
// The relay
// ============================================================================

// ---- F (HIGH): an AWS key pair as the AWS SDKs and CLI write it -------------
// The aws-secret-access-key rule needs the keyword "aws_secret_access_key"
// (aws_?secret_?(?:access_?)?key): the shape of the credentials file and
// the environment. The AWS CLI (`aws sts assume-role`, `aws configure
// export-credentials`, `aws iam create-access-key`) and every SDK write the
// pair as "AccessKeyId"/"SecretAccessKey" (JSON) or accessKeyId/
// secretAccessKey (a JS credentials object, util.inspect'ed by console.log),
// with no "aws" before "secret": the id (AKIA/ASIA) is masked, the secret
// half — what signs requests — passes to the client whole.
const char* const kAwsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

TEST(Adv12SecretScan, TheSecretHalfOfAnAwsKeyPairInCliJsonIsMasked) {
  Relay relay;
  std::string id = Token("ASIA{16:32}", 1);
  // `aws sts assume-role` output, as a tool returns it.
  std::string text = json{{"Credentials", {{"AccessKeyId", id}, {"SecretAccessKey", kAwsSecret},
                                           {"SessionToken", "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ"},
                                           {"Expiration", "2026-11-28T21:00:00Z"}}}}.dump(4);
  std::string out = relay.ResultText(text);
  ASSERT_EQ(out.find(id), std::string::npos) << "control: the key id is masked";
  EXPECT_EQ(out.find(kAwsSecret), std::string::npos) << "the secret access key passed: " << out;
}

TEST(Adv12SecretScan, TheSecretHalfOfAnAwsKeyPairInAJsCredentialsObjectIsMaskedInStderr) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::string id = Token("AKIA{16:32}", 2);
  // console.error(await provider()) in an MCP server using @aws-sdk (util.inspect).
  std::string line = "credentials: {\n  accessKeyId: '" + id + "',\n  secretAccessKey: '" + kAwsSecret +
                     "',\n  sessionToken: undefined\n}\n";
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, line);
  ASSERT_EQ(out.find(id), std::string::npos) << "control: the key id is masked";
  EXPECT_EQ(out.find(kAwsSecret), std::string::npos) << "the secret access key passed: " << out;
}

// ---- F (HIGH): a keyword secret as a JSON member of the message itself ----------
// The message's strings are scanned with a NUL between each (json_strings.h),
// a member's key and its value too; the keyword rules (aws-secret-access-key,
// aws-session-token, twilio-auth-token, heroku-api-key-legacy) need the
// keyword, '='/':' and the value in one text. So an object member
// {"AWS_SECRET_ACCESS_KEY": "<key>"} — a tool's env map, a configure tool's
// arguments, a result's structuredContent — matches nothing: the raw fast
// path does match the line ("key":"value") and sends it to the full scan,
// which then clears it. The id beside it (AKIA...) is masked; the secret
// reaches the server (or the client).
TEST(Adv12SecretScan, AnAwsSecretAsAnObjectMemberOfToolCallArgumentsIsMasked) {
  Relay relay;
  std::string id = Token("AKIA{16:32}", 80);
  std::string line = json{{"jsonrpc", "2.0"}, {"id", 5}, {"method", "tools/call"},
                          {"params", {{"name", "run_command"},
                                      {"arguments", {{"command", "aws s3 ls"},
                                                     {"env", {{"AWS_ACCESS_KEY_ID", id},
                                                              {"AWS_SECRET_ACCESS_KEY", kAwsSecret}}}}}}}}.dump();
  std::string out = relay.Out(true, line);
  ASSERT_EQ(out.find(id), std::string::npos) << "control: the key id is masked";
  EXPECT_EQ(out.find(kAwsSecret), std::string::npos) << "the secret access key reached the server: " << out;
}

TEST(Adv12SecretScan, AnAwsSecretAsAMemberOfStructuredContentIsMasked) {
  Relay relay;
  std::string out = relay.Result(json{{"content", {{{"type", "text"}, {"text", "profile loaded"}}}},
                                      {"structuredContent", {{"aws_access_key_id", Token("AKIA{16:32}", 81)},
                                                             {"aws_secret_access_key", kAwsSecret}}}});
  EXPECT_EQ(out.find(kAwsSecret), std::string::npos) << "the secret access key reached the client: " << out;
}

// Held: the keyword shapes the rule was written for.
TEST(Adv12SecretScan, HeldTheAwsSecretNextToItsEnvOrFileKeywordIsMasked) {
  Relay relay;
  for (std::string text : {std::string("AWS_SECRET_ACCESS_KEY=") + kAwsSecret,
                           std::string("aws_secret_access_key = ") + kAwsSecret,
                           json{{"aws_secret_access_key", kAwsSecret}}.dump()}) {
    EXPECT_EQ(relay.ResultText(text).find(kAwsSecret), std::string::npos) << text;
  }
}

// ---- F (MEDIUM): a token right after a \uXXXX escape -------------------------
// GluedToAWord lets a letter that ends an escape ("\n" as '\' 'n') touch a
// token, but not the hex digit that ends a "\uXXXX" escape. Python's
// json.dumps (ensure_ascii=True, its default) writes every non-ASCII
// character so: a token in typographic quotes (“AKIA...”, «sk_live_...»), after
// a non-breaking space or an emoji becomes "\u201cAKIA..." — glued to the
// 'c' — and a bounded rule without a checksum drops it. The text of a tool
// result that is JSON from a Python server, or a Python JSON log line on
// stderr, hands the token over. Fix: EndsEscape also takes the last hex
// digit of "\u" + 4 hex digits.
const char* const kUncheckedTokens[] = {"AKIA{16:32}", "xoxb-{12:d}-{13:d}-{24:an}", "sk_live_{24:an}",
                                        "AIza{35:u}"};

std::string PythonJsonDumps(const std::string& utf8) {
  return json(utf8).dump(-1, ' ', /*ensure_ascii=*/true);
}

TEST(Adv12SecretScan, ATokenAfterAUnicodeEscapeInJsonInsideAToolResultIsMasked) {
  Relay relay;
  int seed = 10;
  for (const char* tmpl : kUncheckedTokens) {
    std::string token = Token(tmpl, ++seed);
    ASSERT_EQ(relay.ResultText("key: \u201c" + token + "\u201d").find(token), std::string::npos) << "control";
    for (std::string before : {"\u201c", "\u00ab", "\u00a0", "\U0001F511"}) {
      std::string text = "{\"note\": " + PythonJsonDumps("key: " + before + token + ".") + "}";
      std::string out = relay.ResultText(text);
      EXPECT_EQ(out.find(token), std::string::npos) << "passed unmasked: " << out;
    }
  }
}

TEST(Adv12SecretScan, ATokenAfterAUnicodeEscapeInAJsonStderrLineIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  int seed = 20;
  for (const char* tmpl : kUncheckedTokens) {
    std::string token = Token(tmpl, ++seed);
    // python-json-logger: {"message": "using key \u201cAKIA...\u201d"}
    std::string line = "{\"levelname\": \"INFO\", \"message\": " + PythonJsonDumps("using key \u201c" + token + "\u201d") + "}\n";
    StderrRedactor r = g.Redactor();
    std::string out = ThroughCopy(r, line);
    EXPECT_EQ(out.find(token), std::string::npos) << "passed unmasked: " << out;
  }
}

// ---- F (LOW): a token after a percent-encoded byte ----------------------------
// The same glue with URL encoding: a URL's query holding JSON
// (?filter=%7B%22key%22%3A%22AKIA...%22%7D) or "key%3DAKIA..." puts a hex
// digit of %22/%3D right before the token.
TEST(Adv12SecretScan, ATokenAfterAPercentEncodedQuoteInALoggedUrlIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  int seed = 30;
  for (const char* tmpl : kUncheckedTokens) {
    std::string token = Token(tmpl, ++seed);
    std::string line = "GET https://api.example.com/v1/items?filter=%7B%22key%22%3A%22" + token + "%22%7D 200\n";
    StderrRedactor r = g.Redactor();
    std::string out = ThroughCopy(r, line);
    EXPECT_EQ(out.find(token), std::string::npos) << "passed unmasked: " << out;
  }
}

// ---- F (LOW, a documented class): a private key as a list of lines -------------
// Strings other than a content list's texts are separated by a NUL, and the
// private-key-block rule needs the header and 32 bytes of body in one
// string; a key returned as an array of its lines (structuredContent of a
// grep/read tool, `{"lines": [...]}`) matches in no string, and its body
// passes whole. The stderr copy has a key-block state across lines
// (stderr_redact.cc); the relay has none across strings. (THREAT_MODEL.md
// lists "a token split across two strings ... two messages" as not stopped;
// a key printed as lines is not a token split by accident but the format's
// own layout, which the stderr copy already follows.)
TEST(Adv12SecretScan, DISABLED_APrivateKeyReturnedAsAnArrayOfLinesIsMasked) {
  Relay relay;
  std::vector<std::string> body = KeyBody(8, 1);
  json lines = json::array({"-----BEGIN OPENSSH PRIVATE KEY-----"});
  for (const auto& l : body) lines.push_back(l);
  lines.push_back("-----END OPENSSH PRIVATE KEY-----");
  json result{{"content", {{{"type", "text"}, {"text", "9 lines"}}}},
              {"structuredContent", {{"path", "/home/u/.ssh/id_ed25519"}, {"lines", lines}}}};
  std::string out = relay.Result(result);
  EXPECT_EQ(out.find(body[3]), std::string::npos) << "the key's body passed: " << out;
}

// ---- F (LOW, a documented class): a private key over several log notifications -
// A server that forwards a child process's output line by line as MCP log
// notifications (notifications/message, one per line) sends a key one line
// per message; each is scanned alone, and no line holds header and body.
TEST(Adv12SecretScan, DISABLED_APrivateKeyLoggedOneLinePerNotificationIsMasked) {
  Relay relay;
  std::vector<std::string> body = KeyBody(8, 2);
  std::vector<std::string> lines{"-----BEGIN RSA PRIVATE KEY-----"};
  lines.insert(lines.end(), body.begin(), body.end());
  lines.push_back("-----END RSA PRIVATE KEY-----");
  std::string out;
  for (const auto& l : lines) {
    out += relay.Out(false, json{{"jsonrpc", "2.0"}, {"method", "notifications/message"},
                                 {"params", {{"level", "info"}, {"logger", "ssh-keygen"}, {"data", l}}}}.dump());
  }
  EXPECT_EQ(out.find(body[3]), std::string::npos) << "the key's body passed: " << out;
}

// ---- F (MEDIUM): a private key a server prints to stdout ----------------------
// A line of the server's stdout that is no JSON (console.log by mistake:
// stdout is the JSON-RPC channel) passes to the client's reader, scanned as
// one string per line (McpRelay::GuardPlainText) — and clients log such
// lines. The stderr copy masks a key printed over several lines from its
// header to its END (stderr_redact.cc); the stdout path scans each line
// alone, and no line of a PEM holds header and body, so the key passes.
TEST(Adv12SecretScan, APrivateKeyPrintedToStdoutAsPlainLinesIsMasked) {
  Relay relay;
  std::vector<std::string> body = KeyBody(8, 11);
  std::vector<std::string> lines{"-----BEGIN OPENSSH PRIVATE KEY-----"};
  lines.insert(lines.end(), body.begin(), body.end());
  lines.push_back("-----END OPENSSH PRIVATE KEY-----");
  std::string out;
  for (const auto& l : lines) out += relay.Out(false, l) + "\n";
  ASSERT_EQ(relay.Out(false, "loaded " + Token("ghp_{30:an}{6:crc}", 12)).find("ghp_"), std::string::npos)
      << "control: a token on a plain stdout line is masked";
  EXPECT_EQ(out.find(body[3]), std::string::npos) << "the key's body passed to the client's stdin: " << out;
}

// The same with a token: a server that streams a child's output as it comes
// (one notification per read of the pipe, cut anywhere) splits a token over
// two messages when a read ends inside it; each half matches nothing.
TEST(Adv12SecretScan, DISABLED_ATokenStreamedOverTwoLogNotificationsIsMasked) {
  Relay relay;
  std::string token = Token("ghp_{30:an}{6:crc}", 13);
  std::string out;
  for (const std::string& chunk : {"git push: using " + token.substr(0, 17), token.substr(17) + "\n"}) {
    out += relay.Out(false, json{{"jsonrpc", "2.0"}, {"method", "notifications/message"},
                                 {"params", {{"level", "info"}, {"data", chunk}}}}.dump());
  }
  EXPECT_EQ(out.find(token.substr(17)), std::string::npos) << "the token's second half passed: " << out;
  EXPECT_EQ(out.find(token.substr(4, 13)), std::string::npos) << "the token's first half passed: " << out;
}

// Held: the same key as one text, and split across a content list's blocks.
TEST(Adv12SecretScan, HeldAPrivateKeyAcrossContentBlocksIsMasked) {
  Relay relay;
  std::vector<std::string> body = KeyBody(8, 3);
  json content = json::array({{{"type", "text"}, {"text", "-----BEGIN PRIVATE KEY-----\n"}}});
  for (const auto& l : body) content.push_back({{"type", "text"}, {"text", l + "\n"}});
  content.push_back({{"type", "text"}, {"text", "-----END PRIVATE KEY-----\n"}});
  std::string out = relay.Result(json{{"content", content}});
  for (const auto& l : body) EXPECT_EQ(out.find(l), std::string::npos) << out;
}

// Held (client → server): tool call arguments with JSON escapes of every
// kind: \u escapes of the prefix, \/ in an AWS secret, a surrogate pair
// before the token, a zero-width joiner inside it, a 1 MiB string around it.
TEST(Adv12SecretScan, HeldEscapedTokensInToolCallArgumentsAreMasked) {
  Relay relay;
  std::string ghp = Token("ghp_{30:an}{6:crc}", 40);
  std::string akia = Token("AKIA{16:32}", 41);
  auto call = [](const std::string& raw_value) {
    return "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"v\":" +
           raw_value + "}}}";
  };
  std::string escaped_prefix = "\"\\u0067\\u0068\\u0070\\u005f" + ghp.substr(4) + "\"";
  std::string slash_secret = "\"aws_secret_access_key=" + std::string("wJalrXUtnFEMI\\/K7MDENG\\/bPxRfiCYEXAMPLEKEY") + "\"";
  std::string surrogate = "\"\\ud83d\\udd11 " + akia + "\"";
  std::string zwj = "\"" + ghp.substr(0, 10) + "\\u200d" + ghp.substr(10) + "\"";
  std::string big = "\"" + std::string(1 << 20, 'a') + " " + ghp + " " + std::string(1 << 20, 'b') + "\"";
  for (const auto& [v, needle] : std::vector<std::pair<std::string, std::string>>{
           {escaped_prefix, ghp.substr(4)}, {slash_secret, "bPxRfiCYEXAMPLEKEY"}, {surrogate, akia},
           {zwj, ghp.substr(10)}, {big, ghp}}) {
    std::string out = relay.Out(true, call(v));
    EXPECT_EQ(out.find(needle), std::string::npos) << out.substr(0, 300);
  }
}

// ============================================================================
// The server's stderr
// ============================================================================

// ---- F (MEDIUM): a key body line flushed at a quiet pipe ------------------------
// StderrRedactor::Piece (a partial line flushed after half a second of
// quiet, or at the end) checks cut_key_ but not in_key_: inside a
// multi-line key block, the partial line is scanned alone (Line()), and a
// line of base64 matches no rule, so the part of a body line written before
// a pause (a buffered writer that flushes at 4 KiB, a slow pipe) passes.
TEST(Adv12StderrScan, PartOfAKeyBodyLineFlushedAtAQuietPipeIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::vector<std::string> body = KeyBody(6, 4);
  StderrRedactor r = g.Redactor();
  std::string out = r.Feed("-----BEGIN PRIVATE KEY-----\n" + body[0] + "\n" + body[1] + "\n" + body[2].substr(0, 40));
  out += r.Flush();  // the copy's 500 ms of quiet (stderr_log.cc's Copy)
  out += r.Feed(body[2].substr(40) + "\n" + body[3] + "\n-----END PRIVATE KEY-----\n");
  ASSERT_EQ(out.find(body[1]), std::string::npos) << "control: whole body lines are masked";
  EXPECT_EQ(out.find(body[2].substr(0, 40)), std::string::npos) << "the flushed part passed: " << out;
}

// The same at the end of the run: the last body line without its newline.
TEST(Adv12StderrScan, AKeyBodyLineWithoutItsNewlineAtTheEndIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::vector<std::string> body = KeyBody(6, 5);
  StderrRedactor r = g.Redactor();
  // A server killed while printing the key (or printing it with no final newline and no END).
  std::string out = ThroughCopy(r, "-----BEGIN PRIVATE KEY-----\n" + body[0] + "\n" + body[1]);
  ASSERT_EQ(out.find(body[0]), std::string::npos) << "control";
  EXPECT_EQ(out.find(body[1]), std::string::npos) << "the last line passed: " << out;
}

// ---- F (LOW): a token across the 64 KiB cut of a line with no cut point --------
// CutAt looks back 8 KiB for a quote or control byte, then for white space or
// a bracket; a line with neither there (a logged URL whose query is a long
// url-encoded payload: '%', '&', '=' and '+' are no cut points) is cut at
// exactly 64 KiB, through a token there ("a run that long is no token" — but a
// query string is a run of many tokens).
TEST(Adv12StderrScan, ATokenInALongUrlEncodedLineAcrossTheCutIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::string token = Token("ghp_{30:an}{6:crc}", 50);
  std::string head = "POST https://api.example.com/v1/upload?payload=";
  std::string payload;
  while (payload.size() < kStderrLineHold - head.size() - 20) payload += "%7B%22k%22%3A%22v%22%7D+";
  payload.resize(kStderrLineHold - head.size() - 20);
  std::string line = head + payload + "&access_token=" + token + "&x=" + payload + payload + "\n";
  ASSERT_LT(line.find(token), kStderrLineHold);
  ASSERT_GT(line.find(token) + token.size(), kStderrLineHold);
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, line);
  EXPECT_EQ(out.find(token.substr(10)), std::string::npos) << "the token passed across the cut";
}

// Held: the same with a space 100 bytes before the token.
TEST(Adv12StderrScan, HeldATokenAcrossTheCutWithASpaceBeforeItIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::string token = Token("ghp_{30:an}{6:crc}", 51);
  std::string line = std::string(kStderrLineHold - 120, 'a') + " " + std::string(100, 'b') + "&t=" + token +
                     std::string(200 * 1024, 'c') + "\n";
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, line);
  EXPECT_EQ(out.find(token.substr(10)), std::string::npos);
}

// ---- F (LOW): a long key indented in a config dump --------------------------------
// Past 256 lines a key block stays masked only while its lines are base64; a
// key dumped inside YAML or pretty JSON is indented, so from line 257 on its
// body passes (a PGP key with subkeys, an RSA 16384 key with 32-byte lines).
TEST(Adv12StderrScan, AnIndentedKeyBlockOfMoreThan256LinesIsMaskedToItsEnd) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::vector<std::string> body = KeyBody(300, 6);
  std::string text = "config:\n  signing_key: |\n    -----BEGIN PGP PRIVATE KEY BLOCK-----\n\n";
  for (const auto& l : body) text += "    " + l + "\n";
  text += "    -----END PGP PRIVATE KEY BLOCK-----\n";
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, text);
  ASSERT_EQ(out.find(body[10]), std::string::npos) << "control";
  EXPECT_EQ(out.find(body[290]), std::string::npos) << "line 290 passed";
}

// Held: CRLF line ends, a '\r' progress line before the header, colour codes.
TEST(Adv12StderrScan, HeldAKeyWithCrlfAfterAProgressLineIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::vector<std::string> body = KeyBody(300, 7);
  std::string text = "fetching 10%\rfetching 100%\r\x1b[33m-----BEGIN OPENSSH PRIVATE KEY-----\r\n";
  for (const auto& l : body) text += l + "\r\n";
  text += "-----END OPENSSH PRIVATE KEY-----\x1b[0m\r\n";
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, text);
  for (const auto& l : body) ASSERT_EQ(out.find(l), std::string::npos) << out.substr(0, 500);
}

// Held: another writer's lines between a key's lines (a request log of
// another thread), and a header written before a quiet pause without its
// newline (Flush, then the rest): the body is masked to END either way.
TEST(Adv12StderrScan, HeldAKeyWithInterleavedLinesAndAPauseAfterItsHeaderIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::vector<std::string> body = KeyBody(6, 14);
  StderrRedactor r = g.Redactor();
  std::string out = r.Feed("[worker 2] -----BEGIN EC PRIVATE KEY-----");
  out += r.Flush();
  out += r.Feed("\n" + body[0] + "\n" + body[1] + "\nGET /health 200 0.4ms\n" + body[2] + "\n" + body[3] +
                "\n-----END EC PRIVATE KEY-----\nnext line\n");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out.find(body[i]), std::string::npos) << out;
  EXPECT_NE(out.find("next line"), std::string::npos) << "the block ends at END: " << out;
}

// Held: a PuTTY key with CRLF and a PGP armor with headers.
TEST(Adv12StderrScan, HeldPuttyAndPgpKeysWithCrlfAreMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::vector<std::string> body = KeyBody(4, 8);
  std::string putty = "PuTTY-User-Key-File-3: ssh-rsa\r\nEncryption: none\r\nComment: rsa-key\r\nPublic-Lines: 1\r\n" +
                      body[0] + "\r\nPrivate-Lines: 2\r\n" + body[1] + "\r\n" + body[2] +
                      "\r\nPrivate-MAC: 0123456789abcdef0123456789abcdef01234567\r\n";
  std::string pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2.0.22 (GNU/Linux)\nComment: Alice <a@b.c>\n\n" +
                    body[3] + "\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----\n";
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, putty + pgp);
  for (int i = 1; i < 4; ++i) EXPECT_EQ(out.find(body[i]), std::string::npos) << out;
}

// ---- F (LOW): an SSH2 (RFC 4716 / SSH.com) private key ---------------------------
// "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----" (PuTTYgen's "Export ssh.com
// key", Tectia) is no PEM header: neither the rule nor the stderr key block
// knows it, and its body passes in a result and in stderr.
TEST(Adv12SecretScan, AnSsh2PrivateKeyIsMasked) {
  Relay relay;
  std::vector<std::string> body = KeyBody(6, 9);
  std::string key = "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key-20240101\"\n";
  for (const auto& l : body) key += l + "\n";
  key += "---- END SSH2 ENCRYPTED PRIVATE KEY ----\n";
  std::string out = relay.ResultText(key);
  EXPECT_EQ(out.find(body[2]), std::string::npos) << out;
}

// ---- F (MEDIUM): an Authorization header as HTTP clients log it -----------------
// http-bearer-token and http-basic-auth need "authorization:" then the
// scheme with nothing but spaces between. The way a server most often
// prints its headers — console.error(err) of an axios/undici error
// (util.inspect: `Authorization: 'Bearer ...'`), or a JSON dump of the
// request (`"Authorization":"Bearer ..."`, `"authorization": "Basic ..."`)
// — puts a quote there, and an opaque token (no vendor prefix) passes.
TEST(Adv12SecretScan, AnAuthorizationHeaderInAnAxiosErrorDumpIsMaskedInStderr) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::string bearer = Token("{40:an}", 70), basic = Token("{32:b64}", 71);
  std::vector<std::string> rules;
  ASSERT_EQ(g.guard->RedactText("Authorization: Bearer " + bearer, &rules).find(bearer),
            std::string::npos) << "control: the header as sent is masked";
  std::string dump = "AxiosError: Request failed with status code 401\n    at settle (/app/node_modules/axios/lib/core/settle.js:19:12) {\n"
                     "  code: 'ERR_BAD_REQUEST',\n  config: {\n    headers: Object [AxiosHeaders] {\n"
                     "      Accept: 'application/json, text/plain, */*',\n      Authorization: 'Bearer " + bearer + "',\n"
                     "      'Proxy-Authorization': 'Basic " + basic + "',\n    },\n  }\n}\n";
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, dump);
  EXPECT_EQ(out.find(bearer), std::string::npos) << "the bearer token passed: " << out;
  EXPECT_EQ(out.find(basic), std::string::npos) << "the basic credentials passed: " << out;
}

TEST(Adv12SecretScan, AnAuthorizationHeaderInAJsonRequestDumpIsMaskedInAToolResult) {
  Relay relay;
  std::string bearer = Token("{40:an}", 72);
  std::string text = json{{"request", {{"url", "https://api.example.com/v1/me"},
                                       {"headers", {{"Authorization", "Bearer " + bearer}}}}}}.dump(2);
  std::string out = relay.ResultText(text);
  EXPECT_EQ(out.find(bearer), std::string::npos) << "the bearer token passed: " << out;
}

// ---- F (LOW): a secret in JSON written with "\/" (PHP's json_encode) ----------
// json_encode escapes '/' as "\/" unless told not to: an AWS secret key with
// a '/' in it, a Slack webhook or a database URL in such a log line (or a tool
// result holding such JSON) is broken by the backslash for every rule whose
// alphabet has '/'.
TEST(Adv12SecretScan, SecretsWithEscapedSlashesInAJsonLogLineAreMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::string hook = "https:\\/\\/hooks.slack.com\\/services\\/T0123ABCD\\/B0123ABCDE\\/" + Token("{24:an}", 73);
  std::string db = "postgres:\\/\\/app:" + Token("{16:an}", 74) + "@db.internal:5432\\/app";
  std::string line = "{\"webhook\":\"" + hook + "\",\"database\":\"" + db + "\",\"aws_secret_access_key\":\"wJalrXUtnFEMI\\/K7MDENG\\/bPxRfiCYEXAMPLEKEY\"}\n";
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, line);
  EXPECT_EQ(out.find(hook.substr(hook.size() - 24)), std::string::npos) << out;
  EXPECT_EQ(out.find(db.substr(17, 16)), std::string::npos) << out;
  EXPECT_EQ(out.find("bPxRfiCYEXAMPLEKEY"), std::string::npos) << out;
}

// ---- F (MEDIUM): a keyword secret in JSON inside a JSON string ------------------
// ASSIGN (secret_rules.cc) takes a quote, ':' and a quote around the keyword's
// value, not an escaped quote: in JSON kept as a string inside JSON (a JSON
// log line whose field holds a request body, pino/winston's msg of
// JSON.stringify(config)), the member reads \"aws_secret_access_key\":\"...\"
// and the rule matches nothing. The same text one level up is masked.
TEST(Adv12SecretScan, AKeywordSecretInJsonInsideAJsonLogLineIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::string inner = json{{"aws_secret_access_key", kAwsSecret}, {"region", "eu-west-1"}}.dump();
  std::vector<std::string> rules;
  ASSERT_EQ(g.guard->RedactText(inner, &rules).find(kAwsSecret), std::string::npos) << "control: one level is masked";
  std::string line = json{{"level", 30}, {"msg", "request body"}, {"body", inner}}.dump() + "\n";
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, line);
  EXPECT_EQ(out.find(kAwsSecret), std::string::npos) << out;
}

// ---- F (MEDIUM): an .npmrc's credentials that are not npm_ tokens --------------
// Only npm's own token format (npm_ + CRC-32) is a rule. The keys npm reads
// credentials from — "//host/:_authToken=", "_auth=" (base64 user:pass),
// "_password=" — are no keyword rule: an .npmrc for Artifactory, Nexus,
// Verdaccio or GitHub Packages' older tokens (a tool that reads ~/.npmrc, a
// server that logs its config) passes whole; mcpcell itself keeps exactly
// these values out of the install-script cells.
TEST(Adv12SecretScan, NpmrcCredentialsOfOtherRegistriesAreMasked) {
  Relay relay;
  std::string token = Token("{8:h}-{4:h}-{4:h}-{4:h}-{12:h}", 100);     // Verdaccio/legacy npm: a UUID
  std::string auth = Token("{32:b64}", 101);                              // base64 of user:password
  std::string ref = "cmVmdGtuOjAxOjE3" + Token("{48:an}", 102);           // an Artifactory reference token
  std::string npmrc = "registry=https://npm.corp.example/\n"
                      "//npm.corp.example/:_authToken=" + token + "\n"
                      "//nexus.corp.example/repository/npm/:_auth=" + auth + "\n"
                      "//corp.jfrog.io/artifactory/api/npm/npm/:_authToken=" + ref + "\n";
  std::string out = relay.ResultText(npmrc);
  EXPECT_EQ(out.find(token), std::string::npos) << out;
  EXPECT_EQ(out.find(auth), std::string::npos) << out;
  EXPECT_EQ(out.find(ref), std::string::npos) << out;
}

// ---- F (MEDIUM): an http(s) URL with a password --------------------------------
// database-url-with-password names database schemes only; the same userinfo
// in an http(s) or ftp URL — pip's index-url, a git remote, a proxy setting
// (HTTPS_PROXY=http://user:pass@proxy:3128), a private registry — is no rule:
// the password passes in results and in stderr.
TEST(Adv12SecretScan, AnHttpUrlWithAPasswordIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::string pw = Token("{20:an}", 103);
  std::vector<std::string> rules;
  for (std::string line : {"index-url = https://deploy:" + pw + "@pypi.corp.example/simple/",
                           "remote: origin https://ci-bot:" + pw + "@git.corp.example/team/app.git (fetch)",
                           "HTTPS_PROXY=http://jdoe:" + pw + "@proxy.corp.example:3128"}) {
    EXPECT_EQ(g.guard->RedactText(line, &rules).find(pw), std::string::npos) << line;
  }
}

// ---- F (MEDIUM): a Redis URL with a password and no user ------------------------
// database-url-with-password needs 1-128 characters of user before ':'; the
// usual Redis URL has none ("redis://:PASSWORD@host:6379/0", as redis-cli
// -u, ioredis, node-redis, Heroku/Upstash REDIS_URL write it). Also a host
// that is an IPv6 literal ('[' is not in the host class).
TEST(Adv12SecretScan, ARedisUrlWithAPasswordAndNoUserIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::string pw = Token("{24:an}", 90);
  std::vector<std::string> rules;
  ASSERT_EQ(g.guard->RedactText("REDIS_URL=redis://default:" + pw + "@cache.internal:6379/0", &rules).find(pw),
            std::string::npos) << "control: with a user it is masked";
  for (std::string line : {"REDIS_URL=redis://:" + pw + "@cache.internal:6379/0",
                           "connecting to rediss://:" + pw + "@eu1-fine-cat-12345.upstash.io:6379",
                           "DATABASE_URL=postgres://app:" + pw + "@[fd00::5]:5432/app"}) {
    EXPECT_EQ(g.guard->RedactText(line, &rules).find(pw), std::string::npos) << line;
  }
}

// ---- F (LOW): a .netrc entry over several lines in stderr ----------------------
// netrc-password reads "machine H login U password P" across white space,
// newlines included: in one text (a tool result) the usual multi-line .netrc
// is masked; the stderr copy scans line by line, and "  password P" alone
// matches nothing.
TEST(Adv12StderrScan, DISABLED_AMultiLineNetrcEntryIsMaskedInStderr) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::string pw = Token("{20:an}", 91);
  std::string netrc = "machine api.heroku.com\n  login me@example.com\n  password " + pw + "\n";
  Relay relay;
  ASSERT_EQ(relay.ResultText(netrc).find(pw), std::string::npos) << "control: masked in a tool result";
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, "read ~/.netrc:\n" + netrc);
  EXPECT_EQ(out.find(pw), std::string::npos) << out;
}

// ============================================================================
// Registry URLs given to install-script cells (source/url_credential.cc)
// ============================================================================

bool CellGetsNoToken(const std::string& raw) {
  auto url = NormalizeRegistryUrl(raw);
  if (!url.ok()) return true;
  return RegistryUrlHoldsToken(*url, HoldsBuiltinSecret);
}

// ---- F (LOW): tokens the shape rule does not see -----------------------------------
// A path token that is not a run of 20+ letters and digits: one with '-',
// '_' or '.' inside (a UUID without its dashes' layout, a "tok_..." key),
// a base64 token whose '+', '/', '=' are percent-encoded, or a short one
// (Cloudsmith's entitlement tokens, https://dl.cloudsmith.io/TOKEN/org/repo/npm/,
// are 16 characters).
TEST(Adv12UrlCredential, TokensOfOtherShapesInARegistryPathAreRefused) {
  for (const char* raw : {
           "https://npm.example.com/auth/Zm9vYmFy%2BYmF6cXV4%2FcXV1eA%3D%3D/",  // base64, percent-encoded
           "https://dl.cloudsmith.io/k3Y9pQ2xV7mN4rT8/acme/private/npm/",          // 16 characters
           "https://npm.example.com/npm/?access_token=aB3dE5gH7jK9mN1pQ",            // 17 characters
       }) {
    EXPECT_TRUE(CellGetsNoToken(raw)) << raw;
  }
}

// Still open: a token of short dashed groups (no group a token by shape).
TEST(Adv12UrlCredential, DISABLED_ADashedTokenInARegistryPathIsRefused) {
  EXPECT_TRUE(CellGetsNoToken("https://npm.example.com/t/tok_4f9a-8c2e-b71d-0e5a-93f6/npm/"));
}

// ---- F (LOW): userinfo behind a tab or newline after the scheme -------------------
// WHATWG URL (npm's and Node's reader) removes every tab and newline from a
// URL before parsing; NormalizeRegistryUrl and HasUserinfo do not, so in
// "https:/\t/ci:PASSWORD@host/" they read an empty authority and a path
// "/ci:PASSWORD@host/", cut nothing and say nothing — and npm in the cell
// reads user ci, password PASSWORD. (npm config list prints such a URL's
// password as it is: its own masking does not parse it either.)
TEST(Adv12UrlCredential, UserinfoAfterATabInTheSchemeSeparatorIsCutOff) {
  for (std::string raw : {"https:/\t/ci:hunter22pw@127.0.0.1:9/", "https:\n//ci:hunter22pw@127.0.0.1:9/",
                          "https://ci:hunter22pw@127.0.0.1:9/"}) {
    auto url = NormalizeRegistryUrl(raw);
    ASSERT_TRUE(url.ok()) << raw;
    EXPECT_EQ(url->find("hunter22pw"), std::string::npos) << testing::PrintToString(raw) << " -> " << *url;
  }
}

// ---- F (LOW): a private key inside a certificate block of npm's cafile -----------
// CertificatesOf copies from each "-----BEGIN CERTIFICATE-----" to the next
// "-----END CERTIFICATE-----", whatever lies between: a bundle whose first
// certificate lost its END line (a hand-edited or truncated file) followed by
// the key and another certificate puts the key in the CA file every install
// script reads. The inline `ca` entries are checked for base64 bodies
// (OnlyCertificateBlocks); the host cafile's blocks are not.
TEST(Adv12ScriptNpm, APrivateKeyBetweenCertificateMarkersOfTheCafileIsLeftOut) {
  std::string body = Token("{64:b64}", 95);
  std::string pem = "-----BEGIN CERTIFICATE-----\n" + Token("{64:b64}", 96) + "\n" +
                    "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n"
                    "-----BEGIN CERTIFICATE-----\n" + Token("{64:b64}", 97) + "\n-----END CERTIFICATE-----\n";
  std::string out = CertificatesOf(pem);
  EXPECT_EQ(out.find("PRIVATE KEY"), std::string::npos) << out;
  EXPECT_EQ(out.find(body), std::string::npos) << out;
}

// Held: a key before, after or between whole certificate blocks is left out.
TEST(Adv12ScriptNpm, HeldAKeyOutsideCertificateBlocksIsLeftOut) {
  std::string cert = "-----BEGIN CERTIFICATE-----\n" + Token("{64:b64}", 98) + "\n-----END CERTIFICATE-----\n";
  std::string key = "-----BEGIN PRIVATE KEY-----\n" + Token("{64:b64}", 99) + "\n-----END PRIVATE KEY-----\n";
  EXPECT_EQ(CertificatesOf(key + cert + key + cert + key).find("PRIVATE KEY"), std::string::npos);
}

// Held: console.error({ privateKey }) — util.inspect writes a long string with
// newlines as 'line\n' + pieces on lines of their own; the stderr copy masks
// them from the header line to the END line.
TEST(Adv12StderrScan, HeldAKeyAsUtilInspectPrintsItIsMasked) {
  DefaultScan g;
  ASSERT_TRUE(g.guard);
  std::vector<std::string> body = KeyBody(20, 12);
  std::string text = "{\n  privateKey: '-----BEGIN PRIVATE KEY-----\\n' +\n";
  for (const auto& l : body) text += "    '" + l + "\\n' +\n";
  text += "    '-----END PRIVATE KEY-----\\n'\n}\n";
  StderrRedactor r = g.Redactor();
  std::string out = ThroughCopy(r, text);
  for (const auto& l : body) EXPECT_EQ(out.find(l), std::string::npos) << out;
  Relay relay;
  std::string res = relay.ResultText(text);
  for (const auto& l : body) EXPECT_EQ(res.find(l), std::string::npos) << res;
}

// Held: known formats and long runs, wherever they sit and however the URL is written.
TEST(Adv12UrlCredential, HeldTokensInUnusualUrlShapesAreRefused) {
  std::string npm = Token("npm_{30:an}{6:crc}", 60);
  for (std::string raw : {
           "HTTPS://npm.example.com/" + npm + "/",
           "https:\\\\npm.example.com\\" + npm + "\\",
           "https://[::1]:4873/" + npm + "/",
           "https://npm.example.com:443/x?t=" + npm,
           "https://npm.example.com/#" + npm,
           "https://u@npm.example.com/" + npm + "/",
           "https://npm.example.com/" + std::string("a1b2c3d4e5f6a7b8c9d0e1f2") + "/",
       }) {
    EXPECT_TRUE(CellGetsNoToken(raw)) << raw;
  }
  // Userinfo is cut off, whatever it holds (an '@' in the password too).
  auto url = NormalizeRegistryUrl("https://user:p@ss" + npm + "@npm.example.com/");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->find(npm), std::string::npos) << *url;
  EXPECT_TRUE(HasUserinfo("https://user:p@ss@npm.example.com/"));
}

}  // namespace
}  // namespace mcpcell
