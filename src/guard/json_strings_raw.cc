#include "guard/json_strings_raw.h"

#include <cstring>

#include "guard/json_strings.h"
#include "util/utf8.h"

namespace mcpcell {
namespace {

constexpr std::size_t npos = std::string_view::npos;

std::size_t Find(std::string_view s, char c, std::size_t from) {
  if (from >= s.size()) return npos;
  const void* p = std::memchr(s.data() + from, c, s.size() - from);
  return p == nullptr ? npos : static_cast<std::size_t>(static_cast<const char*>(p) - s.data());
}

// Keys "text" written without escapes: the string token "text" followed by
// a colon. A line without backslashes has no '"' inside a string, so every
// match is a whole string; with backslashes one more may be counted, which
// only sends the line to the full path.
int RawTextKeys(std::string_view line) {
  int n = 0;
  for (std::size_t at = line.find("\"text\""); at != npos; at = line.find("\"text\"", at + 6)) {
    std::size_t i = at + 6;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n')) ++i;
    if (i < line.size() && line[i] == ':') ++n;
  }
  return n;
}

// White space between a key and its colon or its colon and a string value:
// the text joins them with kMemberJoin, which the line then does not hold.
// Inside a string a '"' is escaped, so this never misses a member (it may
// see one in "\\\"  :", which only sends the line to the full path).
bool SpacedMember(std::string_view line) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  for (std::size_t at = Find(line, ':', 0); at != npos; at = Find(line, ':', at + 1)) {
    std::size_t k = at;
    while (k > 0 && space(line[k - 1])) --k;
    std::size_t v = at + 1;
    while (v < line.size() && space(line[v])) ++v;
    bool before = k < at && k > 0 && line[k - 1] == '"', after = v > at + 1 && v < line.size() && line[v] == '"';
    if (before || after) return true;
  }
  return false;
}

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code unit of "\uXXXX" at `at` (the backslash), or -1.
long Unit(std::string_view s, std::size_t at) {
  if (at + 6 > s.size() || s[at] != '\\' || s[at + 1] != 'u') return -1;
  long v = 0;
  for (std::size_t i = at + 2; i < at + 6; ++i) {
    int h = Hex(s[i]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

// One escape at `*at` (the backslash) decoded onto `out`; false for anything
// but JSON's escapes and well-paired surrogates (the full path decides then).
bool DecodeEscape(std::string_view s, std::size_t* at, std::string* out) {
  if (*at + 1 >= s.size()) return false;
  char e = s[*at + 1];
  static constexpr std::string_view kFrom = "\"\\/bfnrt", kTo = "\"\\/\b\f\n\r\t";
  if (std::size_t k = kFrom.find(e); k != npos) {
    out->push_back(kTo[k]);
    *at += 2;
    return true;
  }
  long hi = Unit(s, *at);
  if (hi < 0 || (hi >= 0xDC00 && hi <= 0xDFFF)) return false;
  // A control character written as an escape (\u0000 inside a token hid it:
  // the full path leaves it out, and here a NUL would read as the separator
  // between strings): the full path decides.
  if ((hi < 0x20 && hi != '\t' && hi != '\n' && hi != '\r') || hi == 0x7f) return false;
  if (hi < 0xD800 || hi > 0xDBFF) {
    AppendUtf8(static_cast<char32_t>(hi), out);
    *at += 6;
    return true;
  }
  long lo = Unit(s, *at + 6);
  if (lo < 0xDC00 || lo > 0xDFFF) return false;
  AppendUtf8(static_cast<char32_t>(0x10000 + ((static_cast<unsigned long>(hi) - 0xD800) << 10) + (static_cast<unsigned long>(lo) - 0xDC00)), out);
  *at += 12;
  return true;
}

// The strings of `line` that hold a backslash, decoded onto `out`, each
// followed by a NUL; `*text_keys` counts those that decode to "text";
// kTooMuch once `out` grows past `budget` (the fast path would scan most
// bytes twice: the full path scans them once). In
// JSON no '"' or '\' stands outside a string, so strings are found by their
// quotes alone. Runs between escapes are copied whole (memchr finds both
// ends), so a long string with a few escapes costs a copy, not a byte loop.
enum class Decoded { kOk, kUnknownEscape, kTooMuch };

// JsonStrings joins a member's key to its string value ("key\":\"value"):
// a decoded string that is such a value gets its key before it (decoded
// already, or as written), and such a key gets its value after it when the
// value has no escape (one that has comes next and joins itself).
// `last_close`: the closing quote of the string decoded before.
void JoinKeyBefore(std::string_view line, std::size_t open, std::size_t last_close, std::string* out) {
  if (open < 2 || line[open - 1] != ':' || line[open - 2] != '"') return;
  if (last_close == open - 2) {
    out->pop_back();  // the key's NUL
  } else {
    const void* q = memrchr(line.data(), '"', open - 2);
    if (q == nullptr) return;
    std::size_t kopen = static_cast<std::size_t>(static_cast<const char*>(q) - line.data());
    out->append(line.substr(kopen + 1, open - 2 - kopen - 1));
  }
  out->append(kMemberJoin);
}

void JoinValueAfter(std::string_view line, std::size_t close, std::size_t next_bs, std::string* out) {
  if (close + 2 >= line.size() || line[close + 1] != ':' || line[close + 2] != '"') return;
  std::size_t vclose = Find(line, '"', close + 3);
  if (vclose == npos || (next_bs != npos && next_bs < vclose)) return;
  out->append(kMemberJoin);
  out->append(line.substr(close + 3, vclose - close - 3));
}

Decoded DecodeEscapedStrings(std::string_view line, std::size_t budget, std::string* out, int* text_keys) {
  std::size_t next_bs = Find(line, '\\', 0);
  std::size_t i = 0, last_close = npos;
  while (next_bs != npos) {
    std::size_t open = Find(line, '"', i);
    if (open == npos || open > next_bs) return Decoded::kUnknownEscape;  // a backslash outside a string: not JSON
    std::size_t close = Find(line, '"', open + 1);
    if (close == npos) return Decoded::kUnknownEscape;
    if (close < next_bs) {
      i = close + 1;
      continue;
    }
    // Its size first (a quote after an odd run of backslashes is escaped):
    // a line that is mostly one long escaped text (tool output with "\n")
    // goes to the full path before any of it is decoded.
    // The search stops at the budget: past it the answer is known.
    if (out->size() >= budget) return Decoded::kTooMuch;
    std::string_view within = line.substr(0, std::min(line.size(), open + 2 + (budget - out->size())));
    std::size_t end = close;
    for (;;) {
      if (end == npos || end >= within.size()) return Decoded::kTooMuch;
      std::size_t k = end;
      while (k > open + 1 && line[k - 1] == '\\') --k;
      if ((end - k) % 2 == 0) break;
      end = Find(within, '"', end + 1);
    }
    if (out->size() + (end - open - 1) > budget) return Decoded::kTooMuch;
    JoinKeyBefore(line, open, last_close, out);
    std::size_t start = out->size(), j = open + 1;
    for (;;) {
      std::size_t stop = std::min(next_bs, close);
      out->append(line.substr(j, stop - j));
      if (stop == close) break;
      j = stop;
      if (!DecodeEscape(line, &j, out)) return Decoded::kUnknownEscape;
      next_bs = Find(line, '\\', j);
      if (close < j) close = Find(line, '"', j);  // the quote found was escaped
      if (close == npos) return Decoded::kUnknownEscape;
      if (out->size() > budget) return Decoded::kTooMuch;
    }
    if (std::string_view(*out).substr(start) == "text") ++*text_keys;
    i = close + 1;
    if (next_bs != npos && next_bs < i) next_bs = Find(line, '\\', i);
    JoinValueAfter(line, close, next_bs, out);
    out->push_back('\0');
    last_close = close;
  }
  return Decoded::kOk;
}

}  // namespace

RawScanPlan PlanRawScan(std::string_view line) {
  RawScanPlan plan;
  // Cheapest refusal first: a line that is mostly escaped text is told by
  // its first such string, before any other pass over the line.
  int text_keys = 0;
  switch (DecodeEscapedStrings(line, line.size() / 4, &plan.escaped, &text_keys)) {
    case Decoded::kOk:
      break;
    case Decoded::kUnknownEscape:
      plan.why = "an escape the fast path does not decode";
      plan.escaped.clear();
      return plan;
    case Decoded::kTooMuch:
      plan.why = "strings with escapes are over a quarter of the line";
      plan.escaped.clear();
      return plan;
  }
  if (HasInvisibleChar(line, false)) {
    plan.why = "an invisible format character";
    plan.escaped.clear();
    return plan;
  }
  if (HasInvisibleChar(plan.escaped, true)) {
    plan.why = "an invisible format character written as an escape";
    return plan;
  }
  if (SpacedMember(line)) {
    plan.why = "white space around a member's colon (the text joins key and value as \"key\":\"value\")";
    return plan;
  }
  text_keys += RawTextKeys(line);
  if (text_keys >= 2) {
    plan.why = "two or more \"text\" keys (content blocks are scanned glued)";
    return plan;
  }
  plan.usable = true;
  return plan;
}

namespace {

// Escapes a rule may use: none of them takes a NUL (\s is [\t\n\v\f\r ]).
bool SafeEscape(char e) { return std::strchr("\\.$/+-*?()[]{}|^\"'sdwtrn:@<>=,;~_&%#!`", e) != nullptr && e != '\0'; }

}  // namespace

bool RuleStaysInString(const SecretRule& rule) {
  std::string_view r = rule.regex;
  bool in_class = false, negated = false, excludes_nul = false;
  for (std::size_t i = 0; i < r.size(); ++i) {
    char c = r[i];
    if (c == '\0') return false;
    if (c == '\\') {
      if (i + 1 >= r.size()) return false;
      if (in_class && negated && r.substr(i, 4) == "\\x00") {
        excludes_nul = true;
        i += 3;
        continue;
      }
      if (!SafeEscape(r[++i])) return false;
      continue;
    }
    if (in_class) {
      if (c == '[') return false;  // a POSIX class ([:^alpha:]) may take a NUL
      if (c == ']') {
        if (negated && !excludes_nul) return false;
        in_class = false;
      }
      continue;
    }
    if (c == '.' || c == '^' || c == '$') return false;
    if (c == '(' && i + 1 < r.size() && r[i + 1] == '?' && r.substr(i, 3) != "(?:") return false;
    if (c == '[') {
      in_class = true;
      negated = i + 1 < r.size() && r[i + 1] == '^';
      excludes_nul = false;
      if (negated) ++i;
      if (i + 1 < r.size() && r[i + 1] == ']') ++i;  // a leading ']' is a literal
    }
  }
  return !in_class;
}

}  // namespace mcpcell
