#pragma once
// Server output on its way to the user's terminal. A cell never holds one of
// the client's terminals (docs/THREAT_MODEL.md, "The terminal"); when the
// server's stdout or stderr would have been one, mcpcell copies the bytes
// there itself and passes them through this filter, so an escape sequence a
// server writes is shown, not obeyed: no cursor games over mcpcell's own
// messages, no window-title or clipboard writes (OSC 0/52), no status
// reports that make the terminal type an answer into the user's shell.

#include <string>
#include <string_view>

namespace mcpcell {

/// Rewrites control characters as visible text: C0 controls (but \n, \r, \t)
/// and DEL in caret form (ESC -> "^["), the C1 controls as UTF-8 (U+0080 to
/// U+009F, e.g. CSI "\xc2\x9b") and stray 0x80-0x9F bytes as "<U+009B>" /
/// "<0x9b>". Everything else, valid UTF-8 text included, passes unchanged.
/// Stateful: a C1 control split across two chunks is still caught.
class TerminalFilter {
 public:
  std::string Filter(std::string_view in);
  /// What is held back at the end of the stream (a lone 0xC2), made visible.
  std::string Flush();

 private:
  bool held_c2_ = false;  ///< the last byte was 0xC2, the lead byte of U+0080..U+00BF
  int continuation_ = 0;  ///< continuation bytes still expected of a multi-byte character
};

/// One piece of text (a name, a path) from a cell, for a line of mcpcell's
/// own: TerminalFilter's rewrite, and CR, LF and tab as "^M", "^J", "^I"
/// too (a CR would let the text overwrite the start of its line, an LF
/// start a line that reads as mcpcell's).
std::string VisibleOnTerminal(std::string_view in);

}  // namespace mcpcell
