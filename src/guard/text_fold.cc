#include "guard/text_fold.h"

#include <vector>

#include "guard/tool_contract.h"  // NextCodePoint, IsInvisibleCodePoint
#include "util/utf8.h"

namespace mcpcell {
namespace {

// U+00C0..U+00FF and U+0100..U+017F: the base letter of each (' ' for × and ÷).
constexpr std::string_view kLatin1 = "aaaaaaaceeeeiiiidnooooo ouuuuytsaaaaaaaceeeeiiiidnooooo ouuuuyty";
constexpr std::string_view kLatinExtA =
    "aaaaaaccccccccdd" "ddeeeeeeeeeegggg" "gggghhhhiiiiiiii" "iiiijjkkklllllll"    // U+0100..U+013F
    "lllnnnnnnnnnoooo" "oooorrrrrrssssss" "ssttttttuuuuuuuu" "uuuuwwyyyzzzzzzs";  // U+0140..U+017F
static_assert(kLatin1.size() == 0x40 && kLatinExtA.size() == 0x80);

struct Look {
  char32_t cp;
  char ascii;
};

// Cyrillic and Greek letters that pass for Latin ones in most fonts.
constexpr Look kLookAlikes[] = {
    {0x0430, 'a'}, {0x0435, 'e'}, {0x043E, 'o'}, {0x0440, 'p'}, {0x0441, 'c'}, {0x0443, 'y'}, {0x0445, 'x'},
    {0x0455, 's'}, {0x0456, 'i'}, {0x0458, 'j'}, {0x0501, 'd'}, {0x04CF, 'l'}, {0x04BB, 'h'}, {0x051B, 'q'},
    {0x051D, 'w'}, {0x043A, 'k'}, {0x0475, 'v'}, {0x0410, 'a'}, {0x0412, 'b'}, {0x0415, 'e'}, {0x041A, 'k'},
    {0x041C, 'm'}, {0x041D, 'h'}, {0x041E, 'o'}, {0x0420, 'p'}, {0x0421, 'c'}, {0x0422, 't'}, {0x0425, 'x'},
    {0x0423, 'y'}, {0x0405, 's'}, {0x0406, 'i'}, {0x0408, 'j'}, {0x03B1, 'a'}, {0x03BF, 'o'}, {0x03C1, 'p'},
    {0x03BD, 'v'}, {0x03B9, 'i'}, {0x03BA, 'k'}, {0x03C4, 't'}, {0x03C5, 'u'}, {0x03C7, 'x'}, {0x03B5, 'e'},
    {0x0391, 'a'}, {0x0392, 'b'}, {0x0395, 'e'}, {0x0396, 'z'}, {0x0397, 'h'}, {0x0399, 'i'}, {0x039A, 'k'},
    {0x039C, 'm'}, {0x039D, 'n'}, {0x039F, 'o'}, {0x03A1, 'p'}, {0x03A4, 't'}, {0x03A5, 'y'}, {0x03A7, 'x'},
    {0x0261, 'g'}, {0x0269, 'i'},
    // Latin small capitals (ᴀ ʙ ᴄ ᴅ ᴇ ꜰ ɢ ʜ ɪ ᴊ ᴋ ʟ ᴍ ɴ ᴏ ᴘ ʀ ꜱ ᴛ ᴜ ᴠ ᴡ ʏ ᴢ).
    {0x1D00, 'a'}, {0x0299, 'b'}, {0x1D04, 'c'}, {0x1D05, 'd'}, {0x1D07, 'e'}, {0xA730, 'f'}, {0x0262, 'g'},
    {0x029C, 'h'}, {0x026A, 'i'}, {0x1D0A, 'j'}, {0x1D0B, 'k'}, {0x029F, 'l'}, {0x1D0D, 'm'}, {0x0274, 'n'},
    {0x1D0F, 'o'}, {0x1D18, 'p'}, {0x0280, 'r'}, {0xA731, 's'}, {0x1D1B, 't'}, {0x1D1C, 'u'}, {0x1D20, 'v'},
    {0x1D21, 'w'}, {0x028F, 'y'}, {0x1D22, 'z'},
};

bool IsCombining(char32_t cp) {
  return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) || (cp >= 0x1DC0 && cp <= 0x1DFF) ||
         (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE20 && cp <= 0xFE2F);
}

bool IsUnicodeSpace(char32_t cp) {
  return cp == 0x00A0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0x2800 || cp == 0x3164 || cp == 0xFFA0;
}

bool IsAsciiUpper(char32_t cp) { return cp >= 'A' && cp <= 'Z'; }
bool IsAsciiLower(char32_t cp) { return (cp >= 'a' && cp <= 'z') || (cp >= '0' && cp <= '9'); }

// The ASCII letter or digit `cp` passes for; ' ' for a separator, 0 to drop,
// or cp itself for a letter of another script (kept).
char32_t FoldOne(char32_t cp) {
  if (cp < 0x80) {
    if (IsAsciiUpper(cp)) return cp - 'A' + 'a';
    return IsAsciiLower(cp) ? cp : U' ';
  }
  if (IsUnicodeSpace(cp)) return U' ';
  if (IsCombining(cp) || IsInvisibleCodePoint(cp)) return 0;
  if (cp >= 0xC0 && cp <= 0xFF) return static_cast<unsigned char>(kLatin1[cp - 0xC0]);
  if (cp >= 0x100 && cp <= 0x17F) return static_cast<unsigned char>(kLatinExtA[cp - 0x100]);
  if (cp >= 0xFF10 && cp <= 0xFF19) return cp - 0xFF10 + '0';                      // fullwidth digits
  if (cp >= 0xFF21 && cp <= 0xFF3A) return cp - 0xFF21 + 'a';                      // fullwidth capitals
  if (cp >= 0xFF41 && cp <= 0xFF5A) return cp - 0xFF41 + 'a';                      // fullwidth small letters
  if (cp >= 0xFF01 && cp <= 0xFF60) return U' ';                                   // fullwidth punctuation
  if (cp >= 0x1D400 && cp <= 0x1D6A3) return (cp - 0x1D400) % 26 + 'a';            // mathematical letters
  if (cp >= 0x1D7CE && cp <= 0x1D7FF) return (cp - 0x1D7CE) % 10 + '0';            // mathematical digits
  for (const auto& l : kLookAlikes) {
    if (l.cp == cp) return static_cast<unsigned char>(l.ascii);
  }
  if ((cp >= 0x2000 && cp <= 0x2BFF) || (cp >= 0x3000 && cp <= 0x303F)) return U' ';  // punctuation, symbols
  return cp;
}

enum class Script { kNone, kLatin, kLookAlike };

Script ScriptOf(char32_t cp) {
  if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= 0xC0 && cp <= 0x17F && cp != 0xD7 && cp != 0xF7)) {
    return Script::kLatin;
  }
  if ((cp >= 0x0370 && cp <= 0x03FF) || (cp >= 0x0400 && cp <= 0x052F)) return Script::kLookAlike;
  return Script::kNone;
}

}  // namespace

std::string FoldForMatching(std::string_view s) {
  std::vector<char32_t> cps;
  cps.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) cps.push_back(NextCodePoint(s, &i));
  std::string out;
  out.reserve(s.size());
  auto space = [&out] {
    if (!out.empty() && out.back() != ' ') out.push_back(' ');
  };
  for (std::size_t k = 0; k < cps.size(); ++k) {
    char32_t cp = cps[k];
    // camelCase and ABBRWord: a capital after a small letter, or before one after a capital.
    if (IsAsciiUpper(cp) && k > 0 &&
        (IsAsciiLower(cps[k - 1]) || (IsAsciiUpper(cps[k - 1]) && k + 1 < cps.size() && IsAsciiLower(cps[k + 1])))) {
      space();
    }
    char32_t f = FoldOne(cp);
    if (f == 0) continue;
    if (f == U' ') {
      space();
    } else {
      AppendUtf8(f, &out);
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::size_t FindMixedScriptWord(std::string_view s) {
  std::size_t word_start = 0;
  bool latin = false, look_alike = false;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t at = i;
    char32_t cp = NextCodePoint(s, &i);
    Script sc = ScriptOf(cp);
    bool letter = sc != Script::kNone || (cp >= '0' && cp <= '9') || IsCombining(cp) || IsInvisibleCodePoint(cp);
    if (!letter) {
      latin = look_alike = false;
      word_start = i;
      continue;
    }
    if (!latin && !look_alike) word_start = at;
    latin = latin || sc == Script::kLatin;
    look_alike = look_alike || sc == Script::kLookAlike;
    if (latin && look_alike) return word_start;
  }
  return std::string_view::npos;
}

}  // namespace mcpcell
