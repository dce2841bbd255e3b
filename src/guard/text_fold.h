#pragma once
// Text as a keyword check should read it (poison_check.cc): a hostile server
// writes "pаssword" with a Cyrillic а, "ｐａｓｓｗｏｒｄ" in fullwidth forms,
// "𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝" in mathematical bold, "pass\u00ADword" with a soft hyphen,
// "accessToken" in camelCase or "API\u00A0key" with a no-break space, and a
// plain substring search misses every one (adversary pass, 2026-11-28).
// Folding is for matching only: nothing folded is shown or passed on.

#include <cstddef>
#include <string>
#include <string_view>

namespace mcpcell {

/// `s` (UTF-8) folded to lowercase ASCII words separated by single spaces:
/// invisible characters and combining marks dropped; fullwidth forms,
/// mathematical alphanumerics, Latin letters with diacritics and the Cyrillic
/// and Greek letters that look like Latin ones mapped to their ASCII
/// look-alike; a camelCase boundary split; anything else that is not a
/// letter or digit a space. Other scripts' letters are kept as they are
/// (lowercased where ASCII), so words in them can still be matched.
std::string FoldForMatching(std::string_view s);

/// The byte offset in `s` of the first word that mixes Latin letters with
/// Cyrillic or Greek ones ("pаypal" with a Cyrillic а), or npos. Honest text
/// does not spell one word in two scripts; a look-alike does.
std::size_t FindMixedScriptWord(std::string_view s);

}  // namespace mcpcell
