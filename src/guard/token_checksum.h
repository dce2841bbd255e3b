#pragma once
// Checksums some vendors build into their tokens (docs/SECRETS.md). A match
// whose checksum is wrong is not a token the vendor issued (a typo, or text
// that only looks like one), so the scanner does not report it: this cuts
// false findings on random-looking text, never a live credential.

#include <cstdint>
#include <string>
#include <string_view>

namespace mcpcell {

enum class TokenCheck {
  kNone,
  /// GitHub (ghp_ gho_ ghu_ ghs_ ghr_) and npm (npm_): "xxx_" + 30 base62
  /// characters + the CRC-32 (IEEE, as zlib) of those 30, in 6 base62 digits
  /// (0-9A-Za-z, most significant first, '0'-padded). github.blog,
  /// "Behind GitHub's new authentication token formats" (2021-04-05) and
  /// "Announcing npm's new access token format" (2021-09-23).
  kBase62Crc32,
  /// age (age-encryption.org/v1): "AGE-SECRET-KEY-1" + Bech32 data whose
  /// last 6 characters are the BIP-173 checksum over the HRP "age-secret-key-".
  kBech32,
  /// Not a checksum: a URL's password ("scheme://user:PASSWORD@host") that
  /// is a manual's placeholder ("password", "p4ssw0rd", "Passwort",
  /// "changeme", "xxxxxxxx", one character repeated) is kInvalid, any other
  /// kNotApplicable.
  kPlaceholderPassword,
};

enum class ChecksumVerdict {
  kNotApplicable,  ///< kNone, or a length the format does not checksum (a 76-character ghr_)
  kValid,
  kInvalid,
};

/// The checksum of kind `check` of `token` (the whole match, prefix included).
ChecksumVerdict CheckToken(TokenCheck check, std::string_view token);

/// The checksum the built-in rule named `rule` carries (kNone for any other
/// name: a profile's rule may not take a built-in name).
TokenCheck BuiltinTokenCheck(std::string_view rule);

/// CRC-32 (IEEE 802.3, reflected, as zlib's crc32()).
std::uint32_t Crc32(std::string_view data);

}  // namespace mcpcell
