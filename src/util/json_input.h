#pragma once
// Reading user-written JSON files (policies, permission profiles, registry
// catalogs) with errors a human can act on: the file, line and column for
// syntax errors; the JSON path ($.rules[2].action) and what was expected for
// wrong types and unknown keys. Unknown keys are errors, never ignored.

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace mcpcell {

/// Reads a whole file; the error names `what` ("read policy file") and the path.
Result<std::string> ReadTextFile(const std::string& path, const std::string& what);

/// 1-based line and column of byte offset `byte` (nlohmann's parse_error.byte,
/// which counts bytes read, so the offending byte is byte-1).
void LineColumn(std::string_view text, std::size_t byte, std::size_t* line, std::size_t* column);

/// Parses `text`; a syntax error reads "ORIGIN:LINE:COLUMN: invalid JSON: <why>".
Result<nlohmann::json> ParseJsonText(std::string_view text, const std::string& origin);

/// "ORIGIN: at PATH: expected EXPECTED, got <short rendering of got>".
Error JsonTypeError(const std::string& origin, const std::string& path, const std::string& expected,
                    const nlohmann::json& got);
/// "ORIGIN: at PATH: DETAIL".
Error JsonPathError(const std::string& origin, const std::string& path, const std::string& detail);

/// Requires `j` to be an object whose keys are all in `allowed`.
Status CheckObjectKeys(const std::string& origin, const std::string& path, const nlohmann::json& j,
                       std::initializer_list<std::string_view> allowed);

/// Reads a string; `nonempty` refuses "".
Result<std::string> JsonString(const std::string& origin, const std::string& path,
                               const nlohmann::json& j, bool nonempty = true);
/// Reads an array of non-empty strings (a single string is refused: say the list).
Result<std::vector<std::string>> JsonStringList(const std::string& origin, const std::string& path,
                                                const nlohmann::json& j);
Result<bool> JsonBool(const std::string& origin, const std::string& path, const nlohmann::json& j);

/// "$.a" + "b" → "$.a.b"; "$.a" + 3 → "$.a[3]".
std::string JsonChild(const std::string& path, std::string_view key);
std::string JsonChild(const std::string& path, std::size_t index);

}  // namespace mcpcell
