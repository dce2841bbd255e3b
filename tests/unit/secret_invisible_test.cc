// Adversary pass on the secret scan's invisible characters (docs/SECRETS.md:
// "zero-width and bidi characters inside a token do not hide it"). The scan
// left out U+00AD, U+200B-200F, U+202A-202E, U+2060-2064, U+2066-2069 and
// U+FEFF, but not the other code points the pin display (tool_contract.h
// IsInvisibleCodePoint) already calls invisible: the Arabic letter mark (a
// bidi mark), the Mongolian vowel separator, the combining grapheme joiner,
// variation selectors and tag characters ("ASCII smuggling"). Each hid a
// GitHub token from redact and block alike.

#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/sha256.h"
#include "guard/invisible_chars.h"
#include "guard/json_strings.h"
#include "guard/secret_guard.h"
#include "guard/tool_contract.h"

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

std::string Utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// "\uXXXX", or a surrogate pair past the BMP.
std::string Escaped(char32_t cp) {
  auto unit = [](unsigned u) { return fmt::format("\\u{:04x}", u); };
  if (cp < 0x10000) return unit(cp);
  cp -= 0x10000;
  return unit(0xD800 + (cp >> 10)) + unit(0xDC00 + (cp & 0x3FF));
}

// Unicode's Default_Ignorable_Code_Point, as DerivedCoreProperties.txt lists
// it (Unicode 14 to 16 agree): written out here, apart from the code's list,
// so a list that loses one fails.
constexpr CodePointRange kDefaultIgnorable[] = {
    {0x00AD, 0x00AD},   {0x034F, 0x034F},   {0x061C, 0x061C}, {0x115F, 0x1160}, {0x17B4, 0x17B5},
    {0x180B, 0x180F},   {0x200B, 0x200F},   {0x202A, 0x202E}, {0x2060, 0x206F}, {0x3164, 0x3164},
    {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},   {0xFFA0, 0xFFA0}, {0xFFF0, 0xFFF8}, {0x1BCA0, 0x1BCA3},
    {0x1D173, 0x1D17A}, {0xE0000, 0xE0FFF},
};

bool DefaultIgnorable(char32_t cp) {
  for (const auto& r : kDefaultIgnorable) {
    if (cp >= r.first && cp <= r.last) return true;
  }
  return false;
}

// The adversary's second pass: Hangul fillers and Khmer inherent vowels hid
// a token, and so would the rest of Default_Ignorable_Code_Point the list
// lacked (U+2065, U+FFF0-FFF8, the Mongolian free variation selectors,
// shorthand and musical format controls, plane 14 past the selectors), and
// C1 controls. Each inside a token, written raw or as an escape: found by
// the relay's scan (its fast path included) as block mode uses it, and
// masked by redact.
TEST(SecretInvisible, DefaultIgnorableAndC1InsideATokenAreFoundInRedactAndBlockMode) {
  auto g = SecretGuard::Create({});
  ASSERT_TRUE(g.ok()) << g.error().Message();
  simdjson::dom::parser parser;
  for (char32_t cp : {0x115F, 0x1160, 0x3164, 0xFFA0, 0x17B4, 0x17B5, 0x180B, 0x180D, 0x180F, 0x2065, 0xFFF0,
                      0xFFF8, 0x1BCA0, 0x1BCA3, 0x1D173, 0x1D17A, 0xE0000, 0xE0080, 0xE01F0, 0xE0FFF, 0x0080, 0x0085,
                      0x009F}) {
    std::string shown = fmt::format("U+{:04X}", static_cast<unsigned>(cp));
    for (const std::string& mark : {Utf8(cp), Escaped(cp)}) {
      std::string line = "{\"t\":\"x " + kToken.substr(0, 8) + mark + kToken.substr(8, 10) + mark + kToken.substr(18) +
                         " y\"}";
      std::string padded = line + std::string(simdjson::SIMDJSON_PADDING, ' ');
      auto doc = parser.parse(padded.data(), line.size(), false);
      ASSERT_FALSE(doc.error()) << line;
      auto blocked = (*g)->Scan(doc.value_unsafe(), std::string_view(padded.data(), line.size()));
      EXPECT_EQ(blocked.size(), 1u) << "block mode: hidden by " << shown << " in " << line;
      EXPECT_FALSE((*g)->ClearedRaw(std::string_view(padded.data(), line.size()))) << shown << " in " << line;
      std::vector<SecretFinding> found;
      auto out = (*g)->Redact(doc.value_unsafe(), &found);
      ASSERT_TRUE(out.has_value()) << line;
      ASSERT_EQ(found.size(), 1u) << "redact mode: hidden by " << shown << " in " << line;
      EXPECT_EQ(found[0].sha256, Sha256Hex(kToken)) << shown;
      EXPECT_EQ(nlohmann::json::parse(*out)["t"], "x [REDACTED:github-pat-classic] y") << shown;
    }
  }
}

// One list for every guard, checked over all of Unicode: the scan leaves out
// exactly what the pin display calls invisible (but CR), the raw fast path's
// check agrees with it, every invisible character's lead byte is one the
// scan looks for, and the list is Default_Ignorable_Code_Point plus the
// controls.
TEST(SecretInvisible, OneListForTheScanTheFastPathAndThePinDisplayOverAllOfUnicode) {
  std::size_t invisible = 0;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string s = Utf8(cp);
    bool control = cp < 0x20 ? cp != '\t' && cp != '\n' : cp >= 0x7F && cp <= 0x9F;
    ASSERT_EQ(IsInvisibleCodePoint(cp), control || DefaultIgnorable(cp)) << std::hex << static_cast<unsigned>(cp);
    bool left_out = IsInvisibleCodePoint(cp) && cp != '\r';
    ASSERT_EQ(InvisibleCharAt(s + "x"), left_out ? s.size() : 0u) << std::hex << static_cast<unsigned>(cp);
    ASSERT_EQ(HasInvisibleChar("ab" + s + "cd", cp == 0), left_out && cp != 0) << std::hex << static_cast<unsigned>(cp);
    if (!left_out || s.size() == 1) continue;
    ++invisible;
    const auto& leads = kInvisibleLeadBytes;
    ASSERT_NE(std::find(leads.bytes.begin(), leads.bytes.begin() + leads.size, static_cast<unsigned char>(s[0])),
              leads.bytes.begin() + leads.size)
        << std::hex << static_cast<unsigned>(cp);
  }
  EXPECT_EQ(invisible, 32u + 4174u) << "the C1 controls and the multi-byte Default_Ignorable_Code_Point";
  // The pin display writes the new ones visibly too.
  EXPECT_EQ(VisibleText("a" + Utf8(0x3164) + "b" + Utf8(0xFFA0) + Utf8(0x17B4)), "a\\u{3164}b\\u{FFA0}\\u{17B4}");
}

// The search reads plain ASCII 64, 16 and 8 bytes at a time: every invisible
// character, at every offset of an ASCII run (both sides of each stride's
// boundary, at the end), is found all the same (a NUL only where it is no
// separator).
TEST(SecretInvisible, EveryInvisibleCharacterIsFoundAtEveryOffsetOfAnAsciiRun) {
  std::vector<char32_t> all;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if ((cp < 0xD800 || cp > 0xDFFF) && IsInvisibleCodePoint(cp) && cp != '\r') all.push_back(cp);
  }
  std::string filler;
  while (filler.size() < 140) filler += "abcdefghijklmnopqrstuvwxyz ~";
  for (char32_t cp : all) {
    std::string mark = Utf8(cp);
    for (std::size_t at = 0; at <= 137; ++at) {
      std::string s = filler.substr(0, at) + mark + filler.substr(0, 137 - at);
      if (cp != 0) {
        ASSERT_TRUE(HasInvisibleChar(s, true)) << std::hex << static_cast<unsigned>(cp) << " at " << at;
      }
      ASSERT_TRUE(HasInvisibleChar(s, false)) << std::hex << static_cast<unsigned>(cp) << " at " << at;
      ASSERT_TRUE(HasInvisibleChar(filler.substr(0, at) + mark, false)) << std::hex << static_cast<unsigned>(cp) << " at the end";
    }
  }
  // Text around the steps: tab, LF, CR and every printable byte are not invisible.
  std::string visible;
  for (int c = 0x20; c < 0x7F; ++c) visible += static_cast<char>(c);
  EXPECT_FALSE(HasInvisibleChar(visible + "\t\n\r" + visible, false));
  for (std::size_t at = 0; at <= 130; ++at) {
    EXPECT_FALSE(HasInvisibleChar(visible.substr(0, at % visible.size()) + visible + visible, false)) << at;
  }
}

}  // namespace
}  // namespace mcpcell
