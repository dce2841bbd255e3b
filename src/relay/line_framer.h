#pragma once
// Splits a byte stream into newline-terminated lines (MCP stdio framing: one
// JSON-RPC message per line). Bytes are read straight into the framer's
// buffer and a line is handed out as a view into it, so a 24 MiB line is
// copied once (read(2) into the buffer) and written out from the same place.
// Memory is bounded by the maximum message size: a longer line is not kept —
// only its first kKeptPrefix bytes are, so the relay can still answer the
// request's id — and the rest is skipped up to its newline, read by a small
// scanner that finds the top-level "id" wherever it is: the TypeScript SDK
// writes it last ({method, params, jsonrpc, id} and {result, jsonrpc, id}).

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mcpcell {

/// Finds the raw text of the one top-level "id" member of a JSON object fed in
/// pieces: O(1) state plus the value (a key written with escapes is not "id").
class TopLevelIdScanner {
 public:
  static constexpr std::size_t kMaxId = 1026;  ///< envelope.h's kMaxIdBytes and the quotes
  void Reset() { *this = TopLevelIdScanner(); }
  void Feed(std::string_view bytes);
  /// The value's text, or "null": no "id", two of them, one over kMaxId bytes,
  /// or not an object.
  std::string_view Value() const;

 private:
  bool Structural(char c);
  void Step(char c);

  std::size_t depth_ = 0;
  bool dead_ = false, in_string_ = false, escaped_ = false;
  bool expect_key_ = false, in_key_ = false, key_escaped_ = false, key_is_id_ = false, capturing_ = false;
  std::string key_;  ///< the current top-level key, up to 3 bytes
  std::string value_;
  int ids_ = 0;
};

/// Anonymous memory that grows with mremap(2) (MREMAP_MAYMOVE moves the page
/// tables, not the bytes), so a line of tens of MiB is never copied while its
/// buffer doubles, and is given back to the kernel whole (munmap) when the
/// framer shrinks it after a long line. malloc would copy on growth and, once
/// its dynamic mmap threshold has risen, keep the freed pages in the heap.
class GrowableBuffer {
 public:
  GrowableBuffer() = default;
  GrowableBuffer(const GrowableBuffer&) = delete;
  GrowableBuffer& operator=(const GrowableBuffer&) = delete;
  ~GrowableBuffer();
  char* data() const { return data_; }
  std::size_t size() const { return size_; }
  /// Resizes to `size` bytes (a multiple of the page size is best), keeping
  /// the first min(old, new) bytes; throws std::bad_alloc when the kernel refuses.
  void Resize(std::size_t size);

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

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
    std::string_view id{};  ///< oversize: the top-level "id" value's raw text, "null" if none or two
  };

  explicit LineFramer(std::size_t max_line);

  /// The buffer kept between lines; a longer one (after a long line) is given back.
  static constexpr std::size_t kKeptBuffer = 256 * 1024;

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
  GrowableBuffer buf_;
  std::size_t begin_ = 0;  ///< first byte of the current (incomplete) line
  std::size_t end_ = 0;    ///< end of the bytes read
  std::size_t scan_ = 0;   ///< bytes before this were searched for '\n' already
  bool skipping_ = false;  ///< inside an oversize line: drop bytes up to '\n'
  std::size_t skipped_ = 0;
  std::string prefix_;     ///< the oversize line's kept prefix (+ padding)
  TopLevelIdScanner id_;   ///< reads the whole oversize line for its id
};

}  // namespace mcpcell
