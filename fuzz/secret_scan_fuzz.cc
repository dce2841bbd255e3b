// libFuzzer target: the secret scan of one message (src/guard/). Besides
// crashes it checks the promise redaction makes: the masked message is valid
// JSON, and scanning it again finds nothing (no secret survives a mask, and
// a mask never completes a new one); and that the fast path never clears a
// message the full scan finds a secret in.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "guard/secret_guard.h"

namespace {
mcpcell::SecretGuard* g_guard = nullptr;
}  // namespace

// Compiling the rules (Vectorscan; seconds under ASan on a loaded machine) is
// set-up, not an input: done here, libFuzzer's per-input -timeout does not
// count it (the one-hour run's first input "timed out" inside hs_compile_multi).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  static auto guard = mcpcell::SecretGuard::Create({});
  if (!guard.ok()) std::abort();
  g_guard = guard->get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static simdjson::dom::parser parser;
  auto doc = parser.parse(reinterpret_cast<const char*>(data), size);
  if (doc.error()) return 0;
  // The relay's fast path (json_strings_raw.h) may clear a message only when
  // the full scan of its decoded strings finds nothing.
  std::string_view line(reinterpret_cast<const char*>(data), size);
  if (g_guard->ClearedRaw(line) && !g_guard->Scan(doc.value_unsafe()).empty()) std::abort();
  std::vector<mcpcell::SecretFinding> found;
  std::optional<std::string> masked = g_guard->Redact(doc.value_unsafe(), &found);
  if (found.empty()) return 0;
  // No mask made it clean (a hostile chain of content blocks): the relay
  // blocks the message instead, so nothing leaks.
  if (!masked) return 0;
  const std::string& out = *masked;
  if (!nlohmann::json::accept(out)) std::abort();
  simdjson::dom::parser again;
  auto redone = again.parse(out);
  if (redone.error()) std::abort();
  if (!g_guard->Scan(redone.value_unsafe()).empty()) std::abort();
  return 0;
}
