#pragma once
// JSON with comments (JSONC), as VS Code, Zed and Cursor write their settings:
// `//` and `/* */` comments and trailing commas. mcpcell edits such files in
// place, one server entry at a time, so everything else — comments,
// formatting, key order, other settings — stays byte for byte.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "util/error.h"

namespace mcpcell {

/// A byte range [begin, end) of a text.
struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// `text` with each span replaced by its text, applied from the last to the
/// first so earlier offsets stay valid; the spans must not overlap.
std::string Splice(std::string text, std::vector<std::pair<Span, std::string>> edits);

/// `text` with every comment and every trailing comma replaced by spaces
/// (newlines kept), so offsets into the result are offsets into `text` and
/// the result is strict JSON when `text` was JSONC. Fails on an unterminated
/// comment or string, naming the line.
Result<std::string> BlankJsoncExtras(const std::string& text);

/// One member of a JSON object: its key (decoded) and the span of its value.
struct Member {
  std::string key;
  Span value;
};

/// The members of the object whose `{` is at `object.begin` in `json`
/// (strict JSON, e.g. from BlankJsoncExtras), in file order. Fails when the
/// value there is not an object or is malformed.
Result<std::vector<Member>> ObjectMembers(const std::string& json, std::size_t object_begin);

/// The span of the whole top-level value of `json` (leading/trailing space excluded).
Result<Span> TopValue(const std::string& json);

/// 1-based line number of `offset` in `text` (for messages).
int LineOf(const std::string& text, std::size_t offset);

}  // namespace mcpcell
