#include "cell/stderr_redact.h"

#include <algorithm>
#include <utility>

namespace mcpcell {

void StderrRedactor::Masked(std::string rule) {
  if (std::find(masked_.begin(), masked_.end(), rule) == masked_.end()) masked_.push_back(std::move(rule));
}

std::string StderrRedactor::Line(std::string_view line) {
  std::vector<std::string> rules;
  std::string out = redact_(line, &rules);
  for (auto& r : rules) Masked(std::move(r));
  return out;
}

namespace {

// An RSA 16384-bit key is ~200 lines of 64 bytes; a block that never ends is
// not allowed to mask the rest of a run's stderr.
constexpr std::size_t kMaxKeyLines = 256;

// "-----BEGIN ... PRIVATE KEY-----" (PEM, OpenSSH, "PRIVATE KEY BLOCK" of
// PGP) with no END line after it on the same line: its body follows.
bool OpensKeyBlock(std::string_view line) {
  std::size_t begin = line.find("-----BEGIN");
  if (begin == std::string_view::npos) return false;
  std::size_t key = line.find("PRIVATE KEY", begin);
  if (key == std::string_view::npos || key - begin > 40) return false;
  return line.find("-----END", key) == std::string_view::npos;
}

}  // namespace

std::string StderrRedactor::WholeLine(std::string_view line) {
  if (in_key_) {
    bool end = line.find("-----END") != std::string_view::npos;
    if (end || ++key_lines_ >= kMaxKeyLines) in_key_ = false;
    if (!end) {
      Masked("private-key-block");
      return "[REDACTED:private-key-block]";
    }
    return Line(line);
  }
  std::string out = Line(line);
  if (OpensKeyBlock(line)) {
    in_key_ = true;
    key_lines_ = 0;
  }
  return out;
}

namespace {

// How far back from the hold a cut looks for a byte no token contains:
// longer than any token the rules describe (a private key's one-line PEM is
// ~3.3 KiB), so a token is never split by the cut.
constexpr std::size_t kTokenReach = 8 * 1024;

// Bytes no token contains, not even a private key's one-line PEM (whose
// body the rule reads across spaces, '\\' escapes and tabs): quotes and
// controls ('\r' of a redrawn progress line included).
bool EndsEveryToken(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u < 0x20 && c != '\t') || u == 0x7f || c == '"' || c == '\'' || c == '`';
}

// Bytes that end every token but a PEM's: white space, brackets, separators.
// Not ':', '/', '@' or '%': a connection string's password sits between them.
bool EndsWordTokens(char c) {
  switch (c) {
    case ' ': case '\t': case ',': case ';': case '<': case '>': case '(': case ')':
    case '[': case ']': case '{': case '}': case '\\': case '|':
      return true;
    default:
      return false;
  }
}

// Where a held partial line of more than `hold` bytes is cut: just after the
// last byte that ends every token, at most kTokenReach before the hold, else
// after the last that ends a word token, so a token across the hold goes on
// whole with the next piece; at the hold when there is neither (a run that
// long is no token).
std::size_t CutAt(std::string_view held, std::size_t hold) {
  for (bool (*ends)(char) : {EndsEveryToken, EndsWordTokens}) {
    for (std::size_t at = hold; at > 0 && hold - at < kTokenReach; --at) {
      if (ends(held[at - 1])) return at;
    }
  }
  return hold;
}

}  // namespace

std::string StderrRedactor::Feed(std::string_view chunk) {
  std::string out;
  held_.append(chunk);
  std::size_t at = 0;
  for (std::size_t nl; (nl = held_.find('\n', at)) != std::string::npos; at = nl + 1) {
    out += WholeLine(std::string_view(held_).substr(at, nl - at));
    out += '\n';
  }
  held_.erase(0, at);
  // A line without an end is not held for ever.
  while (held_.size() > kStderrLineHold) {
    std::size_t cut = CutAt(held_, kStderrLineHold);
    out += Line(std::string_view(held_).substr(0, cut));
    held_.erase(0, cut);
  }
  return out;
}

std::string StderrRedactor::Flush() {
  if (held_.empty()) return {};
  std::string out = Line(held_);
  held_.clear();
  return out;
}

std::vector<std::string> StderrRedactor::TakeMasked() { return std::exchange(masked_, {}); }

}  // namespace mcpcell
