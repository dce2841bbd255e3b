#include "util/terminal_text.h"

#include <cstdio>

namespace mcpcell {
namespace {

void Caret(unsigned char c, std::string* out) {
  out->push_back('^');
  out->push_back(c == 0x7f ? '?' : static_cast<char>(c + 0x40));
}

std::string Hex(const char* fmt, unsigned char c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, fmt, c);
  return buf;
}

int ContinuationBytes(unsigned char lead) {
  if (lead >= 0xc2 && lead <= 0xdf) return 1;
  if (lead >= 0xe0 && lead <= 0xef) return 2;
  if (lead >= 0xf0 && lead <= 0xf4) return 3;
  return 0;
}

}  // namespace

std::string TerminalFilter::Filter(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char ch : in) {
    auto c = static_cast<unsigned char>(ch);
    if (held_c2_) {
      held_c2_ = false;
      if (c >= 0x80 && c <= 0x9f) {  // U+0080..U+009F: a C1 control (CSI, OSC, DCS...)
        out += Hex("<U+%04X>", c);
        continue;
      }
      out.push_back(static_cast<char>(0xc2));
      continuation_ = 1;  // the byte below is judged as that continuation
    }
    if (c >= 0x80 && c <= 0xbf) {
      if (continuation_ > 0) {
        --continuation_;
        out.push_back(ch);
      } else if (c <= 0x9f) {
        out += Hex("<0x%02x>", c);  // a raw 8-bit C1 control to a terminal not in UTF-8 mode
      } else {
        out.push_back(ch);
      }
      continue;
    }
    continuation_ = 0;
    if (c == 0xc2) {
      held_c2_ = true;
    } else if ((c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f) {
      Caret(c, &out);
    } else {
      out.push_back(ch);
      continuation_ = ContinuationBytes(c);
    }
  }
  return out;
}

std::string TerminalFilter::Flush() {
  if (!held_c2_) return {};
  held_c2_ = false;
  return "<0xc2>";
}

std::string VisibleOnTerminal(std::string_view in) {
  TerminalFilter f;
  std::string out = f.Filter(in);
  out += f.Flush();  // after Filter: what it held back (the operands of + are unsequenced)
  std::string shown;
  shown.reserve(out.size());
  for (char c : out) {
    if (c == '\r') shown += "^M";
    else if (c == '\n') shown += "^J";
    else if (c == '\t') shown += "^I";
    else shown += c;
  }
  return shown;
}

}  // namespace mcpcell
