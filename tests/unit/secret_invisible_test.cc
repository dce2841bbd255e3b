// Adversary pass on the secret scan's invisible characters (docs/SECRETS.md:
// "zero-width and bidi characters inside a token do not hide it"). The scan
// left out U+00AD, U+200B-200F, U+202A-202E, U+2060-2064, U+2066-2069 and
// U+FEFF, but not the other code points the pin display (tool_contract.h
// IsInvisibleCodePoint) already calls invisible: the Arabic letter mark (a
// bidi mark), the Mongolian vowel separator, the combining grapheme joiner,
// variation selectors and tag characters ("ASCII smuggling"). Each hid a
// GitHub token from redact and block alike.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "audit/sha256.h"
#include "guard/secret_guard.h"

namespace mcpcell {
namespace {

// With its checksum (token_checksum.h), as in secret_scan_test.cc.
const std::string kToken = "ghp_" "R7xQ2mK9pL4vN8sT1wY6zB3cD5fG0h" "43INMq";

TEST(SecretInvisible, EveryInvisibleCodePointInsideATokenIsIgnored) {
  auto g = SecretGuard::Create({});
  ASSERT_TRUE(g.ok()) << g.error().Message();
  simdjson::dom::parser parser;
  for (std::string mark : {"\u061c", "\u180e", "\u034f", "\ufe00", "\ufe0f", "\U000E0020", "\U000E0041",
                           "\U000E007F", "\U000E0100", "\U000E01EF", "\u206a", "\u206f"}) {
    std::string msg = nlohmann::json{{"t", "x " + kToken.substr(0, 8) + mark + kToken.substr(8, 10) + mark +
                                               kToken.substr(18) + " y"}}.dump();
    std::vector<SecretFinding> found;
    auto out = (*g)->Redact(parser.parse(msg).value_unsafe(), &found);
    ASSERT_TRUE(out.has_value()) << msg;
    std::string shown = nlohmann::json(mark).dump(-1, ' ', true);  // "\u061c": the mark as an escape
    EXPECT_EQ(found.size(), 1u) << "hidden by " << shown;
    if (found.size() != 1) continue;
    EXPECT_EQ(found[0].sha256, Sha256Hex(kToken)) << shown;
    EXPECT_EQ(nlohmann::json::parse(*out)["t"], "x [REDACTED:github-pat-classic] y") << shown;
  }
}

// C0 controls and DEL inside a token: invisible wherever the text is shown,
// and the model reads the token around them all the same.
TEST(SecretInvisible, ControlCharactersInsideATokenAreIgnored) {
  auto g = SecretGuard::Create({});
  ASSERT_TRUE(g.ok()) << g.error().Message();
  simdjson::dom::parser parser;
  for (std::string mark : {std::string(1, '\0'), std::string("\x01"), std::string("\x07"), std::string("\x1b"),
                           std::string("\x1f"), std::string("\x7f")}) {
    std::string msg = nlohmann::json{{"t", "x " + kToken.substr(0, 8) + mark + kToken.substr(8) + " y"}}.dump();
    std::vector<SecretFinding> found;
    auto out = (*g)->Redact(parser.parse(msg).value_unsafe(), &found);
    ASSERT_TRUE(out.has_value()) << msg;
    EXPECT_EQ(found.size(), 1u) << "hidden by " << msg;
  }
}

}  // namespace
}  // namespace mcpcell
