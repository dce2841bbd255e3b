#pragma once
// The one list of code points a reader cannot see, for every guard that
// looks for them: the secret scan leaves them out of the text it scans
// (json_strings.h: InvisibleCharAt, and the raw fast path through
// HasInvisibleChar), the pin display writes them as \u{XXXX} and the
// poisoning check flags them (tool_contract.h: VisibleText, poison_check.h).
// One list, so no character can be shown as nothing by one and seen by
// another: an adversary hid a token from the scan with each character the
// pin display already knew (tests/unit/secret_invisible_test.cc).
//
// Besides the controls, it is Unicode's Default_Ignorable_Code_Point
// (DerivedCoreProperties.txt, checked against Unicode 14 as Perl's
// \p{Default_Ignorable_Code_Point} has it): characters a renderer shows as
// nothing when it does not support them, reserved ones included, so a code
// point assigned later is covered already.

#include <array>
#include <cstddef>

namespace mcpcell {

struct CodePointRange {
  char32_t first, last;
};

/// DEL and the C1 controls, then Default_Ignorable_Code_Point, in order.
inline constexpr CodePointRange kInvisibleRanges[] = {
    {0x007F, 0x009F},    // DEL, C1 controls
    {0x00AD, 0x00AD},    // soft hyphen
    {0x034F, 0x034F},    // combining grapheme joiner
    {0x061C, 0x061C},    // Arabic letter mark (bidi)
    {0x115F, 0x1160},    // Hangul choseong/jungseong fillers
    {0x17B4, 0x17B5},    // Khmer inherent vowels
    {0x180B, 0x180F},    // Mongolian free variation selectors, vowel separator
    {0x200B, 0x200F},    // zero-width space/non-joiner/joiner, LRM, RLM
    {0x202A, 0x202E},    // bidi embeddings/overrides (CVE-2021-42574)
    {0x2060, 0x206F},    // word joiner, invisible operators, U+2065, bidi isolates, deprecated format
    {0x3164, 0x3164},    // Hangul filler
    {0xFE00, 0xFE0F},    // variation selectors
    {0xFEFF, 0xFEFF},    // BOM, zero-width no-break space
    {0xFFA0, 0xFFA0},    // halfwidth Hangul filler
    {0xFFF0, 0xFFF8},    // reserved
    {0x1BCA0, 0x1BCA3},  // shorthand format controls
    {0x1D173, 0x1D17A},  // musical symbol format controls
    {0xE0000, 0xE0FFF},  // tag characters ("ASCII smuggling"), variation selectors supplement, reserved
};

/// True for code points a reader cannot see or that reorder or hide text:
/// C0 controls but tab and LF, and kInvisibleRanges.
constexpr bool IsInvisibleCodePoint(char32_t cp) {
  if (cp < 0x20) return cp != '\t' && cp != '\n';
  for (const auto& r : kInvisibleRanges) {
    if (cp < r.first) return false;
    if (cp <= r.last) return true;
  }
  return false;
}

/// The UTF-8 lead byte of `cp`.
constexpr unsigned char Utf8Lead(char32_t cp) {
  return static_cast<unsigned char>(cp < 0x80 ? cp : cp < 0x800 ? 0xC0 | (cp >> 6) : cp < 0x10000 ? 0xE0 | (cp >> 12)
                                                                                                    : 0xF0 | (cp >> 18));
}

/// The lead bytes of the multi-byte characters of kInvisibleRanges, each
/// once: a text without any of them (and without a control byte) has no
/// invisible character, which memchr tells at memory speed.
inline constexpr auto kInvisibleLeadBytes = [] {
  constexpr std::size_t kMax = 2 * std::size(kInvisibleRanges);
  std::array<unsigned char, kMax> leads{};
  std::size_t n = 0;
  auto add = [&](unsigned char b) {
    for (std::size_t i = 0; i < n; ++i) {
      if (leads[i] == b) return;
    }
    leads[n++] = b;
  };
  for (const auto& r : kInvisibleRanges) {
    char32_t first = r.first < 0x80 ? 0x80 : r.first;  // DEL is a control byte, found as such
    if (first > r.last) continue;
    // Every lead byte between the range's ends (a range may span several).
    for (unsigned b = Utf8Lead(first); b <= Utf8Lead(r.last); ++b) add(static_cast<unsigned char>(b));
  }
  struct {
    std::array<unsigned char, kMax> bytes;
    std::size_t size;
  } out{leads, n};
  return out;
}();

}  // namespace mcpcell
