#include "util/terminal_text.h"

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

std::string Once(std::string_view s) {
  TerminalFilter f;
  return f.Filter(s) + f.Flush();
}

TEST(TerminalFilter, PlainTextAndUtf8PassUnchanged) {
  EXPECT_EQ(Once("hello\tworld\r\n"), "hello\tworld\r\n");
  EXPECT_EQ(Once("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x99\x82 \xc2\xa9"), "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x99\x82 \xc2\xa9");
}

TEST(TerminalFilter, C0ControlsAndDelBecomeCaretText) {
  // Echo off, clear screen, set the title, ring the bell: all shown, none obeyed.
  EXPECT_EQ(Once("\x1b[2J\x1b]0;pwned\x07\x7f"), "^[[2J^[]0;pwned^G^?");
  EXPECT_EQ(Once(std::string("a\0b", 3)), "a^@b");
  EXPECT_EQ(Once("\x08\x0c"), "^H^L");
}

TEST(TerminalFilter, C1ControlsInUtf8AreShown) {
  EXPECT_EQ(Once("\xc2\x9b" "6n"), "<U+009B>6n");    // CSI: a cursor position report request
  EXPECT_EQ(Once("\xc2\x9d" "52;c;eA=="), "<U+009D>52;c;eA==");  // OSC 52: clipboard write
}

TEST(TerminalFilter, RawC1BytesOutsideACharacterAreShown) {
  EXPECT_EQ(Once("\x9b" "6n"), "<0x9b>6n");
  EXPECT_EQ(Once("\x90" "q"), "<0x90>q");
}

TEST(TerminalFilter, SplitAcrossChunksIsStillCaught) {
  TerminalFilter f;
  std::string out = f.Filter("x\xc2");
  out += f.Filter("\x9b" "0m");
  EXPECT_EQ(out, "x<U+009B>0m");
  TerminalFilter g;
  out = g.Filter("\xe2\x82");
  out += g.Filter("\xac!");
  EXPECT_EQ(out, "\xe2\x82\xac!");
}

TEST(TerminalFilter, ALoneLeadByteAtTheEndIsMadeVisible) {
  TerminalFilter f;
  EXPECT_EQ(f.Filter("a\xc2"), "a");
  EXPECT_EQ(f.Flush(), "<0xc2>");
}

// A name or path from a cell inside a line of mcpcell's own: nothing in it
// moves the cursor, starts a line or is obeyed (adv2).
TEST(VisibleOnTerminal, LineBreaksTabsAndEscapesAreShown) {
  EXPECT_EQ(VisibleOnTerminal("a\rb\nmcpcell: c\td"), "a^Mb^Jmcpcell: c^Id");
  EXPECT_EQ(VisibleOnTerminal("x\x1b[2J\x1b]0;t\x07"), "x^[[2J^[]0;t^G");
  EXPECT_EQ(VisibleOnTerminal("\xc2\x9b" "2J \xc2"), "<U+009B>2J <0xc2>");
  EXPECT_EQ(VisibleOnTerminal("caf\xc3\xa9 @scope/pkg"), "caf\xc3\xa9 @scope/pkg");
}

}  // namespace
}  // namespace mcpcell
