// libFuzzer target: the lockfile scrub (src/source/lockfile_scrub.cc), which
// reads npm's lockfiles — text a registry's packuments shape (names,
// versions, URLs) — and writes them back without a registry's path token.
//
// Input: the first line is the token, the rest the lockfile's text.
// Checks:
// - text that is not JSON (or nests past the limit) is an error, never
//   written back; JSON within the limit is scrubbed;
// - scrubbed text is JSON and holds the token nowhere (in any string or
//   key, JSON-escaped or not, once parsed), unless the token is a part of
//   the placeholder itself;
// - text without the token comes back byte for byte.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "source/lockfile_scrub.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

bool Holds(const nlohmann::json& v, const std::string& token) {
  if (v.is_string()) return v.get_ref<const std::string&>().find(token) != std::string::npos;
  if (v.is_array()) {
    for (const auto& e : v) {
      if (Holds(e, token)) return true;
    }
  }
  if (v.is_object()) {
    for (const auto& [k, e] : v.items()) {
      if (k.find(token) != std::string::npos || Holds(e, token)) return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::size_t nl = in.find('\n');
  if (nl == std::string_view::npos || nl == 0) return 0;
  std::string token(in.substr(0, nl));
  std::string text(in.substr(nl + 1));
  auto out = mcpcell::ScrubJsonText(text, {token});
  if (!out.ok()) return 0;  // not JSON, or nested past the limit: nothing written back
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  Check(!parsed.is_discarded());
  auto after = nlohmann::json::parse(*out, nullptr, false);
  Check(!after.is_discarded());
  // A token with a bracket could re-form across the placeholder's edge;
  // token-shaped pieces (url_credential.h) have none.
  if (std::string_view(mcpcell::kScrubbedToken).find(token) == std::string_view::npos &&
      token.find_first_of("[]") == std::string::npos) {
    Check(!Holds(after, token));
  }
  if (!Holds(parsed, token)) Check(*out == text);
  return 0;
}
