// libFuzzer target: the secret scan of one message (src/guard/). Besides
// crashes it checks the promise redaction makes: the masked message is valid
// JSON, and scanning it again finds nothing (no secret survives a mask, and
// a mask never completes a new one).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "guard/secret_guard.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static auto guard = mcpcell::SecretGuard::Create({});
  static simdjson::dom::parser parser;
  if (!guard.ok()) std::abort();
  auto doc = parser.parse(reinterpret_cast<const char*>(data), size);
  if (doc.error()) return 0;
  std::vector<mcpcell::SecretFinding> found;
  std::optional<std::string> masked = (*guard)->Redact(doc.value_unsafe(), &found);
  if (found.empty()) return 0;
  // No mask made it clean (a hostile chain of content blocks): the relay
  // blocks the message instead, so nothing leaks.
  if (!masked) return 0;
  const std::string& out = *masked;
  if (!nlohmann::json::accept(out)) std::abort();
  simdjson::dom::parser again;
  auto redone = again.parse(out);
  if (redone.error()) std::abort();
  if (!(*guard)->Scan(redone.value_unsafe()).empty()) std::abort();
  return 0;
}
