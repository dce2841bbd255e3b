#include "guard/token_checksum.h"

#include <array>

namespace mcpcell {
namespace {

constexpr std::string_view kBase62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
constexpr std::size_t kCrcBody = 30, kCrcDigits = 6;

std::array<std::uint32_t, 256> CrcTable() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[n] = c;
  }
  return t;
}

// "ghp_" + 30 + 6: the body after the prefix's '_' is exactly 36 characters.
ChecksumVerdict Base62Crc32(std::string_view token) {
  std::size_t us = token.find('_');
  if (us == std::string_view::npos || token.size() - us - 1 != kCrcBody + kCrcDigits) {
    return ChecksumVerdict::kNotApplicable;
  }
  std::string_view body = token.substr(us + 1, kCrcBody), digits = token.substr(us + 1 + kCrcBody);
  std::uint64_t value = 0;
  for (char c : digits) {
    std::size_t d = kBase62.find(c);
    if (d == std::string_view::npos) return ChecksumVerdict::kInvalid;
    value = value * 62 + d;
  }
  return value == Crc32(body) ? ChecksumVerdict::kValid : ChecksumVerdict::kInvalid;
}

// BIP-173's checksum: polymod over the expanded HRP and the data (5-bit
// values, the last 6 the checksum) equals 1.
std::uint32_t Bech32Polymod(std::uint32_t chk, unsigned value) {
  constexpr std::uint32_t kGen[5] = {0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3};
  std::uint32_t top = chk >> 25;
  chk = ((chk & 0x1ffffff) << 5) ^ value;
  for (int i = 0; i < 5; ++i) {
    if ((top >> i) & 1) chk ^= kGen[i];
  }
  return chk;
}

ChecksumVerdict Bech32(std::string_view token) {
  constexpr std::string_view kCharset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
  std::size_t sep = token.rfind('1');
  if (sep == std::string_view::npos || sep == 0 || token.size() - sep - 1 < kCrcDigits) return ChecksumVerdict::kInvalid;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  std::uint32_t chk = 1;
  std::string_view hrp = token.substr(0, sep);
  for (char c : hrp) chk = Bech32Polymod(chk, static_cast<unsigned char>(lower(c)) >> 5);
  chk = Bech32Polymod(chk, 0);
  for (char c : hrp) chk = Bech32Polymod(chk, static_cast<unsigned char>(lower(c)) & 31);
  for (char c : token.substr(sep + 1)) {
    std::size_t v = kCharset.find(lower(c));
    if (v == std::string_view::npos) return ChecksumVerdict::kInvalid;
    chk = Bech32Polymod(chk, static_cast<unsigned>(v));
  }
  return chk == 1 ? ChecksumVerdict::kValid : ChecksumVerdict::kInvalid;
}

// The password of "scheme://user:password@host": what documentation puts
// there is a word that says so, or a run of one character.
ChecksumVerdict PlaceholderPassword(std::string_view url) {
  // The match starts at the scheme's "://" (or ":\/\/"); the user has no ':'.
  std::size_t user = url.find_first_not_of(":\\/"), at = url.rfind('@');
  if (user == std::string_view::npos || at == std::string_view::npos) return ChecksumVerdict::kNotApplicable;
  std::size_t colon = url.find(':', user);
  if (colon == std::string_view::npos || colon > at) return ChecksumVerdict::kNotApplicable;
  std::string pw(url.substr(colon + 1, at - colon - 1));
  if (!pw.empty() && pw.find_first_not_of(pw[0]) == std::string::npos) return ChecksumVerdict::kInvalid;
  // Lower case, and the digits of "p4ssw0rd" read as letters.
  for (char& c : pw) {
    static constexpr std::string_view kFrom = "01345@$", kTo = "oieasas";
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (std::size_t k = kFrom.find(c); k != std::string_view::npos) c = kTo[k];
  }
  // "password" in the manuals' languages too (Passwort, wachtwoord, ...).
  for (std::string_view word : {"passw", "changeme", "example", "secret", "placeholder", "yourpass", "mypass", "xxxx",
                                "kennwort", "wachtwoord", "contrase", "senha", "haslo", "heslo", "salasana", "jelszo",
                                "lozinka", "passord", "losenord", "parool", "motdepasse"}) {
    if (pw.find(word) != std::string::npos) return ChecksumVerdict::kInvalid;
  }
  return ChecksumVerdict::kNotApplicable;
}

}  // namespace

std::uint32_t Crc32(std::string_view data) {
  static const std::array<std::uint32_t, 256> table = CrcTable();
  std::uint32_t c = 0xFFFFFFFFu;
  for (char ch : data) c = table[(c ^ static_cast<unsigned char>(ch)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

TokenCheck BuiltinTokenCheck(std::string_view rule) {
  for (std::string_view crc : {"github-pat-classic", "github-oauth-token", "github-user-to-server-token",
                               "github-server-to-server-token", "github-refresh-token", "npm-access-token"}) {
    if (rule == crc) return TokenCheck::kBase62Crc32;
  }
  if (rule == "url-with-password") return TokenCheck::kPlaceholderPassword;
  return rule == "age-secret-key" ? TokenCheck::kBech32 : TokenCheck::kNone;
}

ChecksumVerdict CheckToken(TokenCheck check, std::string_view token) {
  switch (check) {
    case TokenCheck::kNone: return ChecksumVerdict::kNotApplicable;
    case TokenCheck::kBase62Crc32: return Base62Crc32(token);
    case TokenCheck::kBech32: return Bech32(token);
    case TokenCheck::kPlaceholderPassword: return PlaceholderPassword(token);
  }
  return ChecksumVerdict::kNotApplicable;
}

}  // namespace mcpcell
