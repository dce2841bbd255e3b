#pragma once
// Every decoded string of a JSON document (keys and values) laid end to end
// in one text, so one scan covers a whole message: "\u0067hp_..." is scanned
// as "ghp_...". Strings are separated by a NUL byte, which no rule's token
// alphabet contains, except a member's key and its string value, which are
// joined as the line writes them (kMemberJoin: "key\":\"value"), so a keyword
// rule reads {"AWS_SECRET_ACCESS_KEY": "<key>"} as it reads
// AWS_SECRET_ACCESS_KEY="<key>" (a mask then covers the value only), and
// except the texts of one content list (the "text" of the
// items of a "content" or "contents" array), which are joined with nothing
// between them: a token split across two text blocks of one result is seen
// whole, as the client that shows them one after the other would.
// Invisible characters (zero-width space/joiners, word joiner, BOM, soft
// hyphen, bidi marks, variation selectors, tag characters, Hangul fillers...:
// invisible_chars.h's one list, but CR) are left out of the text, so "ghp_ab\u200bcd..."
// is scanned as the token a reader (or a model) would take it for; the
// segment's cuts turn offsets back into the string's own.
// Rewrite() serialises the document again with parts of strings replaced.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

namespace mcpcell {

/// The UTF-8 length of an invisible character at the start of `s`
/// (IsInvisibleCodePoint in invisible_chars.h, but CR), or 0: what
/// JsonStrings leaves out of its text.
std::size_t InvisibleCharAt(std::string_view s);

/// Whether `s` holds any character InvisibleCharAt names: the raw fast path
/// (json_strings_raw.h) sends such a line to the full scan. With
/// `nul_separates`, a NUL is a separator between strings, not a character.
bool HasInvisibleChar(std::string_view s, bool nul_separates);

/// What lies in JsonStrings' text between a member's key and its string value.
inline constexpr std::string_view kMemberJoin = "\":\"";

class JsonStrings {
 public:
  /// One string of the document: where it sits in text() and which string it
  /// is (simdjson's decoded bytes, whose address identifies it).
  struct Segment {
    std::size_t at = 0;
    const char* id = nullptr;
    std::size_t size = 0;            ///< bytes in text()
    std::size_t own = 0;             ///< bytes of the string itself (invisible characters included)
    /// A member's key whose string value follows it, after kMemberJoin.
    bool joined = false;
    /// Whether a match [from, to) of text() that overlaps this segment reaches
    /// into the value joined to it: then the value is masked, the key kept.
    bool KeyOfMatchedValue(std::size_t to) const { return joined && to > at + size + kMemberJoin.size(); }
    /// Where invisible characters were left out: from text byte `first` of
    /// this segment on, the string's own offset is `second` more than that.
    std::vector<std::pair<std::size_t, std::size_t>> cuts;
    /// The string's own byte range for bytes [from, to) of this segment.
    std::pair<std::size_t, std::size_t> Original(std::size_t from, std::size_t to) const {
      return {Own(from), Own(to - 1) + 1};
    }
    std::size_t Own(std::size_t i) const {
      std::size_t shift = 0;
      for (const auto& [from, by] : cuts) {
        if (from > i) break;
        shift = by;
      }
      return i + shift;
    }
  };
  /// A replacement: bytes [from, to) of the string `id` become `with`.
  struct Edit {
    std::size_t from = 0, to = 0;
    std::string with;
  };
  using Edits = std::map<const char*, std::vector<Edit>>;

  explicit JsonStrings(simdjson::dom::element root);

  const std::string& text() const { return text_; }
  /// The offsets in text() (ascending) where a control character (C0, DEL,
  /// C1) was left out: a word boundary to the reader (a form feed, a
  /// vertical tab, a lone ESC), so the scan's whole-word test takes it as one.
  const std::vector<std::size_t>& breaks() const { return breaks_; }
  /// The segments that overlap [from, to) of text(), in order.
  std::vector<Segment> Overlapping(std::size_t from, std::size_t to) const;
  /// The same as indices into segments(): [first, last).
  std::pair<std::size_t, std::size_t> OverlappingIndices(std::size_t from, std::size_t to) const;
  /// Every string, in document order: two documents of the same shape (one
  /// the Rewrite() of the other) have their strings at the same indices.
  const std::vector<Segment>& segments() const { return segments_; }

  /// `root` as compact JSON with `edits` applied to its strings (edits of one
  /// string sorted by `from` and not overlapping).
  static std::string Rewrite(simdjson::dom::element root, const Edits& edits);

 private:
  void Walk(simdjson::dom::element e);
  void WalkBlocks(simdjson::dom::array blocks);
  void Add(std::string_view s, bool glue);
  void Member(std::string_view key, simdjson::dom::element value);

  std::string text_;
  std::vector<Segment> segments_;
  std::vector<std::size_t> breaks_;
  bool last_glued_ = false;
  bool join_next_ = false;  ///< the next Add follows kMemberJoin, not a NUL
};

}  // namespace mcpcell
