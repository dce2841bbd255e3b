// libFuzzer target: the readers of an npm registry URL, which npm's settings
// (npm_config_registry, an npmrc's registry or @scope:registry) hand to
// mcpcell: WhatwgCleaned, NormalizeRegistryUrl, HasUserinfo,
// RegistryUrlHoldsToken (src/source/registry_url.cc, url_credential.cc) and
// the percent-decoding under the token check (src/util/percent_decode.cc).
//
// Checks:
// - PercentDecoded never grows its input, leaves text without '%' as it is,
//   and decodes what it made of each byte escaped as %XX back to that byte;
// - WhatwgCleaned is a fixed point and leaves no tab, CR or LF;
// - a normalised URL has no userinfo left, and reads the same
//   normalised again;
// - a URL that holds a token by the secret check's say holds one whatever
//   its shape (the check fails closed), as does every URL with no check.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "source/registry_url.h"
#include "source/url_credential.h"
#include "util/percent_decode.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

std::string EscapedEachByte(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) out += {'%', kHex[c >> 4], kHex[c & 15]};
  return out;
}

void CheckPercentDecoded(std::string_view text) {
  std::string decoded = mcpcell::PercentDecoded(text);
  Check(decoded.size() <= text.size());
  if (text.find('%') == std::string_view::npos) Check(decoded == text);
  Check(mcpcell::PercentDecoded(EscapedEachByte(text)) == text);
}

void CheckNormalized(std::string_view text) {
  std::string cleaned = mcpcell::WhatwgCleaned(text);
  Check(mcpcell::WhatwgCleaned(cleaned) == cleaned);
  Check(cleaned.find_first_of("\t\r\n") == std::string::npos);
  auto url = mcpcell::NormalizeRegistryUrl(text);
  if (!url.ok()) {
    (void)url.error().Message();
    return;
  }
  auto again = mcpcell::NormalizeRegistryUrl(*url);
  Check(again.ok());
  // A normalised URL has no userinfo and is its own normal form (an empty
  // host, "https://user:pw@/h/p", broke both until it was refused).
  Check(!mcpcell::HasUserinfo(*url));
  Check(*again == *url);
  // What is masked in npm's output is never empty (an empty string would
  // mask nothing, or everything).
  for (const auto& piece : mcpcell::TokenPieces(*url)) Check(!piece.empty());
  (void)mcpcell::RegistryOrigin(*url);
  (void)mcpcell::WithTrailingSlash(*url);
}

void CheckHoldsToken(std::string_view text) {
  (void)mcpcell::RegistryUrlHoldsToken(text, [](std::string_view) { return false; });
  Check(mcpcell::RegistryUrlHoldsToken(text, [](std::string_view) { return true; }));
  Check(mcpcell::RegistryUrlHoldsToken(text, nullptr));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckPercentDecoded(text);
  CheckNormalized(text);
  CheckHoldsToken(text);
  (void)mcpcell::HasUserinfo(text);
  return 0;
}
