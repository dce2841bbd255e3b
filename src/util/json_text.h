#pragma once
// JSON as text for output: stdout (--dry-run, explain --json), the cell's
// setup channel, messages. Words of argv, paths and file names on Linux are
// bytes, not UTF-8, and nlohmann's plain dump() throws type_error 316 on
// invalid UTF-8: `mcpcell run -- $'/bin/tr\xae'` ended in std::terminate
// (found by fuzz/server_ref_fuzz.cc). Invalid bytes become U+FFFD instead.

#include <string>

#include <nlohmann/json.hpp>

namespace mcpcell {

/// `j.dump(indent)`, with invalid UTF-8 replaced rather than thrown on.
inline std::string JsonText(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mcpcell
