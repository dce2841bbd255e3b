#pragma once
// Splits a byte stream into newline-terminated lines (MCP stdio framing: one
// JSON-RPC message per line). Bytes are read straight into the framer's
// buffer and a line is handed out as a view into it, so a 24 MiB line is
// copied once (read(2) into the buffer) and written out from the same place.
// Memory is bounded by the maximum message size: a longer line is not kept —
// only its first kKeptPrefix bytes are, so the relay can still answer the
// request's id — and the rest is skipped up to its newline.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mcpcell {

class LineFramer {
 public:
  /// Readable bytes guaranteed after every line's text (simdjson reads up to
  /// SIMDJSON_PADDING = 64 bytes past the end of its input; their contents do not matter).
  static constexpr std::size_t kPadding = 64;
  static constexpr std::size_t kKeptPrefix = 64 * 1024;

  struct Line {
    std::string_view text;  ///< without the '\n'; for an oversize line only its kept prefix
    bool oversize = false;  ///< the line was longer than the maximum and was not kept
    std::size_t size = 0;   ///< the whole line's size in bytes (without the '\n')
    bool terminated = true; ///< false for a last line that ended without a '\n'
  };

  explicit LineFramer(std::size_t max_line);

  /// Where the next read(2) may put up to `*room` bytes; then call Commit(n).
  char* WritePtr(std::size_t* room);
  void Commit(std::size_t n);
  /// The next complete line, or nullopt when more input is needed. The view
  /// stays valid until the next WritePtr().
  std::optional<Line> Next();
  /// At end of input: the unterminated last line, if any.
  std::optional<Line> Finish();

 private:
  void MakeRoom();
  Line Oversize(std::size_t size);

  std::size_t max_line_;
  std::unique_ptr<char[]> buf_;
  std::size_t cap_ = 0;
  std::size_t begin_ = 0;  ///< first byte of the current (incomplete) line
  std::size_t end_ = 0;    ///< end of the bytes read
  std::size_t scan_ = 0;   ///< bytes before this were searched for '\n' already
  bool skipping_ = false;  ///< inside an oversize line: drop bytes up to '\n'
  std::size_t skipped_ = 0;
  std::string prefix_;     ///< the oversize line's kept prefix (+ padding)
};

}  // namespace mcpcell
