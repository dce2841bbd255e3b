#include "guard/secret_scanner.h"

#include <hs.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "guard/secret_db_cache.h"
#include "guard/token_checksum.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

unsigned FlagsOf(const SecretRule& r) {
  // SOM_LEFTMOST: the start of each match, so the mask covers the token and
  // nothing else. Byte mode (no HS_FLAG_UTF8): the rules are ASCII and a
  // message's invalid UTF-8 was refused by the envelope parser already.
  return HS_FLAG_SOM_LEFTMOST | (r.caseless ? HS_FLAG_CASELESS : 0u);
}

Error CompileError(const std::vector<SecretRule>& rules, hs_compile_error_t* err) {
  std::string which = err->expression >= 0 && static_cast<std::size_t>(err->expression) < rules.size()
                          ? rules[err->expression].name
                          : "(database)";
  Error e = MakeError("compile secret rule " + which, "", err->message);
  hs_free_compile_error(err);
  return e;
}

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Whether text[i] is the final letter of a terminal control sequence
// (ECMA-48 CSI: ESC '[' parameter bytes 0x30-0x3F, intermediates 0x20-0x2F,
// a final byte): "\x1b[1m" before a token is a colour, not part of a word
// (chalk and friends wrap a logged value in one). The ESC itself is not
// required: the scan of a JSON string leaves C0 controls out
// (invisible_chars.h), so there the token follows "[1m".
bool EndsControlSequence(std::string_view text, std::size_t i) {
  constexpr std::size_t kMaxParams = 32;
  std::size_t j = i;
  while (j > 0 && i - j < kMaxParams && text[j - 1] >= 0x20 && text[j - 1] <= 0x3F) --j;
  return j > 0 && text[j - 1] == '[';
}

// Whether text[i] is the letter of an escape: after an odd run of
// backslashes. JSON inside JSON (a tool result holding JSON.stringify(obj,
// null, 2), a server's JSON log line) writes a value's newline as '\\' 'n':
// a token that starts a line of the value follows the 'n', and is no part
// of a word "n...".
//
// Also the last hex digit of "\\uXXXX" (Python's json.dumps writes every
// non-ASCII character so: a token in typographic quotes follows "\\u201c")
// and of a URL's "%XX" ("%22" before a token in an encoded query).
bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool OddBackslashesBefore(std::string_view text, std::size_t i) {
  std::size_t j = i;
  while (j > 0 && text[j - 1] == '\\') --j;
  return (i - j) % 2 == 1;
}

bool EndsEscape(std::string_view text, std::size_t i) {
  if (OddBackslashesBefore(text, i) && !(text[i] >= '0' && text[i] <= '9')) return true;
  auto hex_run = [&](std::size_t from, std::size_t n) {
    for (std::size_t k = from; k < from + n; ++k) {
      if (!IsHex(text[k])) return false;
    }
    return true;
  };
  if (i >= 5 && text[i - 4] == 'u' && OddBackslashesBefore(text, i - 4) && hex_run(i - 3, 4)) return true;
  return i >= 2 && text[i - 2] == '%' && hex_run(i - 1, 2);
}

// A bounded rule's match is a word of its own: no letter or digit glued to
// either end, but for a control sequence's final letter, an escape's letter
// and a control character the text left out (`breaks`, ascending).
bool GluedToAWord(std::string_view text, std::size_t from, std::size_t to, std::span<const std::size_t> breaks) {
  auto broken = [&](std::size_t at) { return std::binary_search(breaks.begin(), breaks.end(), at); };
  bool before = from > 0 && IsAlnum(text[from - 1]) && !EndsControlSequence(text, from - 1) &&
                !EndsEscape(text, from - 1) && !broken(from);
  return before || (to < text.size() && IsAlnum(text[to]) && !broken(to));
}

// A rule's tail ("A-Za-z0-9/+=", or negated "^;\"' ") as a byte table. NUL
// is never in it: a match must not run into the next string of a message.
std::array<bool, 256> TailTable(std::string_view cls) {
  std::array<bool, 256> t{};
  if (cls.empty()) return t;
  bool negate = cls[0] == '^';
  if (negate) cls.remove_prefix(1);
  for (std::size_t i = 0; i < cls.size(); ++i) {
    auto lo = static_cast<unsigned char>(cls[i]), hi = lo;
    if (i + 2 < cls.size() && cls[i + 1] == '-') {
      hi = static_cast<unsigned char>(cls[i + 2]);
      i += 2;
    }
    for (unsigned c = lo; c <= hi; ++c) t[c] = true;
  }
  if (negate) {
    for (auto& b : t) b = !b;
  }
  t[0] = false;
  return t;
}

struct ScanState {
  std::vector<SecretMatch>* out;
  std::vector<std::size_t>* last;  ///< per rule: index of its last range in *out, or npos
};

// Called by Vectorscan for every (start, end) of every rule, in end order.
// A rule with an open-ended tail ([..]{20,}) reports every end; merging here
// keeps memory proportional to the secrets found, not to the bytes matched.
int OnMatch(unsigned id, unsigned long long from, unsigned long long to, unsigned, void* ctx) {
  auto* s = static_cast<ScanState*>(ctx);
  std::size_t& li = (*s->last)[id];
  if (li != SIZE_MAX) {
    SecretMatch& m = (*s->out)[li];
    // Overlapping ends of one token (an open-ended tail reports every end),
    // not two tokens that touch: each of those is judged on its own.
    if (from < m.to) {
      m.from = std::min<std::size_t>(m.from, from);
      m.to = std::max<std::size_t>(m.to, to);
      return 0;
    }
  }
  li = s->out->size();
  s->out->push_back({id, static_cast<std::size_t>(from), static_cast<std::size_t>(to)});
  return 0;
}

}  // namespace

SecretScanner::SecretScanner(SecretScanner&& o) noexcept
    : rules_(std::move(o.rules_)), tails_(std::move(o.tails_)), checks_(std::move(o.checks_)), db_(o.db_) {
  o.db_ = nullptr;
}

SecretScanner& SecretScanner::operator=(SecretScanner&& o) noexcept {
  if (this != &o) {
    hs_free_database(db_);
    rules_ = std::move(o.rules_);
    tails_ = std::move(o.tails_);
    checks_ = std::move(o.checks_);
    db_ = o.db_;
    o.db_ = nullptr;
  }
  return *this;
}

SecretScanner::~SecretScanner() { hs_free_database(db_); }

namespace {

Result<HsDatabase> CompileDatabase(const std::vector<SecretRule>& rules) {
  std::vector<const char*> exprs;
  std::vector<unsigned> flags, ids;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    exprs.push_back(rules[i].regex.c_str());
    flags.push_back(FlagsOf(rules[i]));
    ids.push_back(static_cast<unsigned>(i));
  }
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK,
                       nullptr, &db, &err) != HS_SUCCESS) {
    return CompileError(rules, err);
  }
  return HsDatabase(db);
}

}  // namespace

Result<SecretScanner> SecretScanner::Compile(std::vector<SecretRule> rules, const SecretDbCache* cache) {
  if (rules.empty()) return MakeError("compile secret rules", "", "no rules");
  HsDatabase db;
  std::string key;
  if (cache != nullptr) {
    key = SecretDbCache::Key(rules);
    if (auto cached = cache->Load(key); cached.ok()) db = std::move(*cached);
  }
  if (!db) {
    auto compiled = CompileDatabase(rules);
    if (!compiled.ok()) return compiled.error();
    db = std::move(*compiled);
    // A cache that cannot be written (a read-only home, a directory that is
    // not ours) costs the next start a compile, nothing else.
    if (cache != nullptr) (void)cache->Store(key, db.get());
  }
  SecretScanner s;
  for (const auto& r : rules) {
    s.tails_.push_back(TailTable(r.tail));
    s.checks_.push_back(static_cast<int>(BuiltinTokenCheck(r.name)));
  }
  s.rules_ = std::move(rules);
  s.db_ = db.release();
  return s;
}

const SecretDbCache* SecretScanner::DefaultCache() {
  static const std::string base = SecretDbCache::DefaultBase();
  static const SecretDbCache cache(base);
  return base.empty() ? nullptr : &cache;
}

Result<std::shared_ptr<const SecretScanner>> SecretScanner::Builtin() {
  static std::once_flag once;
  static Result<std::shared_ptr<const SecretScanner>> compiled = MakeError("compile secret rules");
  std::call_once(once, [] {
    auto s = Compile(BuiltinSecretRules(), DefaultCache());
    if (s.ok()) {
      compiled = std::shared_ptr<const SecretScanner>(std::make_shared<SecretScanner>(std::move(*s)));
    } else {
      compiled = s.error();
    }
  });
  return compiled;
}

Result<std::shared_ptr<hs_scratch>> SecretScanner::NewScratch() const {
  hs_scratch_t* scratch = nullptr;
  if (hs_alloc_scratch(db_, &scratch) != HS_SUCCESS) return MakeError("allocate the secret scanner's scratch space");
  return std::shared_ptr<hs_scratch>(scratch, [](hs_scratch_t* p) { hs_free_scratch(p); });
}

std::vector<SecretMatch> SecretScanner::Scan(std::string_view text, hs_scratch* scratch,
                                             std::span<const std::size_t> breaks) const {
  std::vector<SecretMatch> found;
  // hs_scan takes an unsigned int length: a larger input goes in pieces that
  // overlap by 64 KiB, longer than any token the rules describe.
  constexpr std::size_t kPiece = std::size_t{1} << 31, kOverlap = std::size_t{1} << 16;
  for (std::size_t at = 0;; at += kPiece - kOverlap) {
    std::size_t n = std::min(kPiece, text.size() - at);
    std::vector<SecretMatch> piece;
    std::vector<std::size_t> last(rules_.size(), SIZE_MAX);
    ScanState state{&piece, &last};
    if (hs_error_t e = hs_scan(db_, text.data() + at, static_cast<unsigned>(n), 0, scratch, OnMatch, &state);
        e != HS_SUCCESS) {
      // Only a broken invariant (scratch in use, no memory) gets here. An
      // unscanned message must not pass as a clean one, and no finding can
      // name what was not found: the relay (this process) stops, and with
      // it the cell (fail closed).
      Say(fmt::format("secret scan failed (Vectorscan error {}); stopping rather than pass an unscanned message", e));
      std::abort();
    }
    for (const SecretMatch& m : piece) found.push_back({m.rule, m.from + at, m.to + at});
    if (at + n >= text.size()) break;
  }
  // Whole words only, for the rules that ask (bounded): judged on the merged
  // and extended range, so an open-ended token is judged by its longest match.
  // A format's checksum is judged on that range too: a wrong one drops the
  // match, a right one keeps it even glued to a longer word. A match whose
  // checksum is right as found is not extended: two checksummed tokens
  // written back to back are two findings, not one 80-byte word.
  std::erase_if(found, [&](SecretMatch& m) {
    auto check = static_cast<TokenCheck>(checks_[m.rule]);
    if (CheckToken(check, text.substr(m.from, m.to - m.from)) == ChecksumVerdict::kValid) return false;
    const auto& tail = tails_[m.rule];
    while (m.to < text.size() && tail[static_cast<unsigned char>(text[m.to])]) ++m.to;
    switch (CheckToken(check, text.substr(m.from, m.to - m.from))) {
      case ChecksumVerdict::kInvalid: return true;
      case ChecksumVerdict::kValid: return false;  // stronger than a word boundary: "x" + token + "y" is reported
      case ChecksumVerdict::kNotApplicable: break;
    }
    return rules_[m.rule].bounded && GluedToAWord(text, m.from, m.to, breaks);
  });
  std::sort(found.begin(), found.end(), [](const SecretMatch& a, const SecretMatch& b) {
    return a.from != b.from ? a.from < b.from : a.to > b.to;
  });
  return found;
}

namespace {
int StopAtFirst(unsigned, unsigned long long, unsigned long long, unsigned, void*) { return 1; }
}  // namespace

bool SecretScanner::AnyMatch(std::string_view text, hs_scratch* scratch) const {
  // In pieces as Scan() does: hs_scan takes an unsigned int length.
  constexpr std::size_t kPiece = std::size_t{1} << 31, kOverlap = std::size_t{1} << 16;
  for (std::size_t at = 0;; at += kPiece - kOverlap) {
    std::size_t n = std::min(kPiece, text.size() - at);
    // HS_SCAN_TERMINATED: a match; any other failure is treated as one too
    // (the caller then runs the full scan, which reports its own trouble).
    if (hs_scan(db_, text.data() + at, static_cast<unsigned>(n), 0, scratch, StopAtFirst, nullptr) != HS_SUCCESS) {
      return true;
    }
    if (at + n >= text.size()) return false;
  }
}

Result<void> CheckSecretRegex(const SecretRule& rule) {
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile(rule.regex.c_str(), FlagsOf(rule), HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
    std::string why = err->message;
    hs_free_compile_error(err);
    return MakeError("compile secret rule " + rule.name, "", why);
  }
  hs_free_database(db);
  return {};
}

}  // namespace mcpcell
