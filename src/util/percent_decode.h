#pragma once
// URL percent-decoding ("%2F" → "/"), one loop for every URL reader: a
// file: URL's path (source/interpreted_script.h) and a registry URL's path
// searched for a token (source/url_credential.h) must decode alike.

#include <string>
#include <string_view>

namespace mcpcell {

/// `text` with each "%XX" (two hex digits, either case) replaced by its
/// byte; a '%' without two hex digits after it stays as written. One pass:
/// "%2541" is "%41", not "A".
std::string PercentDecoded(std::string_view text);

}  // namespace mcpcell
