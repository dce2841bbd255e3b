#include "source/url_credential.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "source/registry_url.h"
#include "util/percent_decode.h"

namespace mcpcell {
namespace {

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

/// A generated token's shape (url_credential.h), of one run of letters and digits.
bool TokenShaped(std::string_view run) {
  bool digit = std::any_of(run.begin(), run.end(), [](unsigned char c) { return std::isdigit(c); });
  bool letter = std::any_of(run.begin(), run.end(), [](unsigned char c) { return std::isalpha(c); });
  // Upper and lower case letters with digits in one run is what generated
  // keys look like (Cloudsmith's 16: adv12) and repository names do not.
  bool upper = std::any_of(run.begin(), run.end(), [](unsigned char c) { return std::isupper(c); });
  bool lower = std::any_of(run.begin(), run.end(), [](unsigned char c) { return std::islower(c); });
  return (run.size() >= 20 && digit && letter) || (run.size() >= 16 && digit && upper && lower) || run.size() >= 32;
}

/// Whether `text` holds a UUID: 8-4-4-4-12 hex digits.
bool HoldsUuid(std::string_view text) {
  constexpr std::size_t kGroups[] = {8, 4, 4, 4, 12};
  for (std::size_t start = 0; start + 36 <= text.size(); ++start) {
    std::size_t at = start;
    bool ok = true;
    for (std::size_t g = 0; g < 5 && ok; ++g) {
      ok = std::all_of(text.begin() + at, text.begin() + at + kGroups[g], IsHex);
      at += kGroups[g];
      if (ok && g < 4) ok = text[at++] == '-';
    }
    if (ok) return true;
  }
  return false;
}

/// What follows "scheme://host[:port]".
std::string_view AfterHost(std::string_view url) {
  std::size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  std::size_t end = url.find_first_of("/?#", start);
  return end == std::string_view::npos ? std::string_view() : url.substr(end);
}

}  // namespace

bool HasUserinfo(std::string_view raw) {
  std::string cleaned = WhatwgCleaned(raw);
  std::string_view url = cleaned;
  std::size_t colon = url.find(':');
  if (colon == std::string_view::npos) return false;
  std::size_t start = colon + 1;
  // As NormalizeRegistryUrl reads it: any run of '/' or '\' after the scheme.
  while (start < url.size() && (url[start] == '/' || url[start] == '\\')) ++start;
  std::size_t end = url.find_first_of("/\\?#", start);
  return url.substr(start, end == std::string_view::npos ? url.npos : end - start).find('@') != std::string_view::npos;
}

bool RegistryUrlHoldsToken(std::string_view normalized, const SecretCheck& holds_secret) {
  // No check handed down: every URL counts as holding one (fail closed).
  if (!holds_secret || holds_secret(normalized)) return true;
  return !TokenPieces(normalized).empty();
}

namespace {

/// The UUID in `text` ("" when none).
std::string UuidIn(std::string_view text) {
  for (std::size_t start = 0; start + 36 <= text.size(); ++start) {
    if (HoldsUuid(text.substr(start, 36))) return std::string(text.substr(start, 36));
  }
  return {};
}

}  // namespace

std::vector<std::string> TokenPieces(std::string_view normalized) {
  std::string_view raw = AfterHost(normalized);
  // A token percent-encoded in a path is one run of letters and digits
  // again once decoded (base64's + / = encoded, adv12).
  std::string decoded = PercentDecoded(raw);
  std::string_view rest = decoded;
  std::vector<std::string> pieces;
  if (std::string uuid = UuidIn(rest); !uuid.empty()) pieces.push_back(uuid);
  // base64's '+' and '=' belong to a run: a token with them is one word.
  auto in_run = [](unsigned char c) { return std::isalnum(c) || c == '+' || c == '='; };
  for (std::size_t at = 0; at < rest.size();) {
    std::size_t end = at;
    while (end < rest.size() && in_run(static_cast<unsigned char>(rest[end]))) ++end;
    if (TokenShaped(rest.substr(at, end - at))) pieces.emplace_back(rest.substr(at, end - at));
    at = end + 1;
  }
  // As written: a percent-encoded token is printed encoded.
  std::size_t found = pieces.size();
  for (std::size_t at = 0; found > 0 && at < raw.size();) {
    std::size_t end = std::min(raw.find_first_of("/?#&;", at + 1), raw.size());
    std::string_view segment = raw.substr(at, end - at);
    if (segment.find('%') != std::string_view::npos) {
      std::string seg = PercentDecoded(segment);
      for (std::size_t i = 0; i < found; ++i) {
        if (seg.find(pieces[i]) != std::string::npos) {
          pieces.emplace_back(segment);
          break;
        }
      }
    }
    at = end;
  }
  return pieces;
}

void AppendUrlTokenPieces(std::string_view url, std::vector<std::string>* pieces) {
  auto normal = NormalizeRegistryUrl(url);
  if (!normal.ok()) return;
  for (auto& p : TokenPieces(*normal)) pieces->push_back(std::move(p));
}

}  // namespace mcpcell
