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

// The same bound for a key carried over the cuts of one long line, in pieces.
constexpr std::size_t kMaxKeyPieces = 4;

const std::string kKeyMask = "[REDACTED:private-key-block]";

}  // namespace

std::string StderrRedactor::WholeLine(std::string_view line) {
  if (cut_key_ != KeyBlock::kNone) {
    // The last piece of a line cut inside a key: its END may be on a later line.
    KeyBlock carried = cut_key_;
    std::string out = CarriedKey(line);
    if (cut_key_ != KeyBlock::kNone) keys_.Open(carried);
    cut_key_ = KeyBlock::kNone;
    return out;
  }
  if (keys_.Body(line)) {
    Masked("private-key-block");
    return kKeyMask;
  }
  return Line(line);
}

std::string StderrRedactor::CarriedKey(std::string_view piece) {
  if (piece.empty()) return {};
  Masked("private-key-block");
  std::size_t end = piece.find(KeyBlockEnd(cut_key_));
  if (end == std::string_view::npos) {
    if (++cut_pieces_ >= kMaxKeyPieces) cut_key_ = KeyBlock::kNone;
    return kKeyMask;
  }
  cut_key_ = KeyBlock::kNone;
  return kKeyMask + Line(piece.substr(end));
}

std::string StderrRedactor::Piece(std::string_view piece) {
  if (cut_key_ != KeyBlock::kNone) return CarriedKey(piece);
  if (!piece.empty()) {
    // Part of a line inside a key block (flushed at a quiet pipe, at the end
    // or at the hold): masked as its whole line would be, to the END.
    std::size_t body = keys_.BodyPart(piece);
    if (body == piece.size()) {
      Masked("private-key-block");
      return kKeyMask;
    }
    if (body != std::string_view::npos && body != 0) {
      Masked("private-key-block");
      return kKeyMask + Line(piece.substr(body));
    }
  }
  std::string out = Line(piece);
  cut_key_ = OpensKeyBlock(piece);
  cut_pieces_ = 0;
  return out;
}

namespace {

// How far back from the hold a cut looks for a byte no token contains:
// longer than any token the rules describe (a private key's one-line PEM is
// ~3.3 KiB), so a token is never split by the cut.
constexpr std::size_t kTokenReach = 8 * 1024;
// Longer than a keyword rule's match ("machine h login u password p",
// "Authorization: Bearer <token>"), which has spaces in it; and how many
// places to cut at are tried before the last.
constexpr std::size_t kKeywordReach = 512;
constexpr int kMaxCutTries = 32;

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

// Any byte but a letter or digit: a run of URL-encoded text ("%7B%22k%22",
// '&', '=', '+') has none of the above for kilobytes, and a token in it
// ("&access_token=ghp_...") ends at one. Tried last, each checked by
// SplitsAMatch like the rest.
bool EndsSomeTokens(char c) {
  return !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
}

}  // namespace

// Whether a cut of `held` at `at` splits what the scan masks: the bytes
// around it masked whole differ from its two sides masked apart (a keyword
// rule's match, "aws_secret_access_key = " then the key, has spaces).
bool StderrRedactor::SplitsAMatch(std::string_view held, std::size_t at) {
  std::size_t from = at > kKeywordReach ? at - kKeywordReach : 0;
  std::string_view left = held.substr(from, at - from), right = held.substr(at, kKeywordReach);
  std::vector<std::string> ignored;
  return redact_(held.substr(from, left.size() + right.size()), &ignored) !=
         redact_(left, &ignored) + redact_(right, &ignored);
}

// Where a held partial line of more than `hold` bytes is cut: just after the
// last byte that ends every token, at most kTokenReach before the hold, else
// after the last that ends a word token, and not inside what the scan masks
// (SplitsAMatch), so a token across the hold goes on whole with the next
// piece; failing both, after any byte but a letter or digit that splits no
// match (URL-encoded text); at the first such byte when every one tried splits a match, at the
// hold when there is none (a run that long is no token). A key block the
// cut does split is carried over to the next piece (Piece).
std::size_t StderrRedactor::CutAt(std::string_view held, std::size_t hold) {
  std::size_t first = 0;
  int tries = 0;
  for (bool (*ends)(char) : {EndsEveryToken, EndsWordTokens, EndsSomeTokens}) {
    for (std::size_t at = hold; at > 0 && hold - at < kTokenReach && tries < kMaxCutTries; --at) {
      if (!ends(held[at - 1])) continue;
      if (first == 0) first = at;
      if (++tries, !SplitsAMatch(held, at)) return at;
    }
  }
  return first != 0 ? first : hold;
}

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
    out += Piece(std::string_view(held_).substr(0, cut));
    held_.erase(0, cut);
  }
  return out;
}

std::string StderrRedactor::Flush() {
  if (held_.empty()) return {};
  std::string out = Piece(held_);
  held_.clear();
  return out;
}

std::vector<std::string> StderrRedactor::TakeMasked() { return std::exchange(masked_, {}); }

}  // namespace mcpcell
