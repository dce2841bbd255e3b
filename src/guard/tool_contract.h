#pragma once
// A tool's contract as mcpcell pins it: the whole tool object a server lists
// in tools/list (name, title, description, inputSchema, outputSchema,
// annotations, and whatever else it carries: a client may show any of it to
// the model), in one canonical text. Canonical: object keys sorted by their
// UTF-8 bytes, no whitespace, numbers normalised (1, 1.0 and 1e0 are one
// number), strings exactly as decoded (no Unicode normalisation: a change of
// bytes is a change). Its SHA-256 is the pin. Order of tools and of list pages
// never enters it: a pin is per tool.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "guard/invisible_chars.h"  // IsInvisibleCodePoint: the one list, shared with the secret scan

namespace mcpcell {

/// `v` with numbers normalised (integral values within ±2^53 as integers,
/// -0 as 0), recursively. nlohmann::json keeps object keys sorted.
nlohmann::json CanonicalJson(const nlohmann::json& v);

/// The canonical text of `v` (CanonicalJson, dumped compactly).
std::string CanonicalText(const nlohmann::json& v);

/// SHA-256 (hex) of the canonical text: the pin of one tool.
std::string ContractHash(const nlohmann::json& tool);

/// One difference between two contracts, for a human.
struct FieldChange {
  std::string path;  ///< "description", "inputSchema.properties.path.enum[2]"
  std::string before;  ///< Displayed(); "(absent)" when the field is new
  std::string after;   ///< Displayed(); "(absent)" when the field was removed
};

/// Where `before` and `after` differ, leaf by leaf (objects by key, arrays by
/// index), in key order. Empty when they are equal.
std::vector<FieldChange> DiffContracts(const nlohmann::json& before, const nlohmann::json& after);

/// `v` as one line a terminal shows faithfully: JSON text with every
/// invisible or control code point written as \u{XXXX} (tag characters,
/// bidi controls, zero-width, ESC), cut at `max_bytes` with "…(N more bytes)".
std::string Displayed(const nlohmann::json& v, std::size_t max_bytes = 160);

/// `s` with invisible and control code points written as \u{XXXX}.
std::string VisibleText(std::string_view s);

/// Decodes one UTF-8 code point at s[*i] and advances *i; invalid bytes
/// decode as U+FFFD one byte at a time (input from the relay is valid UTF-8).
char32_t NextCodePoint(std::string_view s, std::size_t* i);

}  // namespace mcpcell
