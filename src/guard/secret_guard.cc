#include "guard/secret_guard.h"

#include <algorithm>
#include <cstddef>
#include <set>

#include "audit/sha256.h"
#include "guard/json_strings.h"
#include "guard/json_strings_raw.h"
#include "guard/secret_scanner.h"
#include "util/lazy_library.h"

namespace mcpcell {

std::optional<SecretMode> ParseSecretMode(std::string_view s) {
  if (s == "off") return SecretMode::kOff;
  if (s == "audit") return SecretMode::kAudit;
  if (s == "redact") return SecretMode::kRedact;
  if (s == "block") return SecretMode::kBlock;
  return std::nullopt;
}

const char* SecretModeName(SecretMode m) {
  switch (m) {
    case SecretMode::kOff: return "off";
    case SecretMode::kAudit: return "audit";
    case SecretMode::kRedact: return "redact";
    case SecretMode::kBlock: return "block";
  }
  return "?";
}

struct SecretGuard::Hit {
  std::size_t rule;
  std::size_t from, to;  ///< in JsonStrings::text()
};

SecretGuard::~SecretGuard() = default;

Result<std::unique_ptr<SecretGuard>> SecretGuard::Create(const SecretPolicy& policy) {
  // A scanner library that cannot load would abort mcpcell at its first
  // call (util/lazy_library.h): asked first, so every caller fails closed
  // with the reason (the relay refuses messages, the stderr copy withholds).
  for (const LazyLibrary* lib : {&LazyHs(), &LazyNettle()}) MCPCELL_TRY(lib->Load());
  std::unique_ptr<SecretGuard> g(new SecretGuard());
  g->policy_ = policy;
  if (policy.rules.empty() && policy.disable.empty()) {
    auto builtin = SecretScanner::Builtin();
    if (!builtin.ok()) return builtin.error();
    g->scanner_ = *builtin;
  } else {
    std::vector<SecretRule> rules;
    std::set<std::string> off(policy.disable.begin(), policy.disable.end());
    for (const auto& r : BuiltinSecretRules()) {
      if (off.count(r.name) == 0) rules.push_back(r);
    }
    rules.insert(rules.end(), policy.rules.begin(), policy.rules.end());
    if (rules.empty()) return MakeError("compile secret rules", policy.origin, "every rule is disabled; use mode off instead");
    auto s = SecretScanner::Compile(std::move(rules), SecretScanner::DefaultCache());
    if (!s.ok()) return s.error();
    g->scanner_ = std::make_shared<const SecretScanner>(std::move(*s));
  }
  auto scratch = g->scanner_->NewScratch();
  if (!scratch.ok()) return scratch.error();
  g->scratch_ = *scratch;
  g->raw_ok_ = true;
  for (std::size_t i = 0; i < g->scanner_->size(); ++i) g->raw_ok_ = g->raw_ok_ && RuleStaysInString(g->scanner_->rule(i));
  return g;
}

Result<std::unique_ptr<SecretGuard>> SecretGuard::Fork() const {
  std::unique_ptr<SecretGuard> g(new SecretGuard());
  g->policy_ = policy_;
  g->scanner_ = scanner_;
  auto scratch = scanner_->NewScratch();
  if (!scratch.ok()) return scratch.error();
  g->scratch_ = *scratch;
  g->raw_ok_ = raw_ok_;
  return g;
}

std::vector<SecretGuard::Hit> SecretGuard::Hits(const JsonStrings& strings) {
  std::vector<Hit> hits;
  for (const SecretMatch& m : scanner_->Scan(strings.text(), scratch_.get(), strings.breaks())) hits.push_back({m.rule, m.from, m.to});
  return hits;
}

namespace {

SecretFinding FindingOf(const SecretRule& rule, std::string_view text, std::size_t from, std::size_t to) {
  // The hash is of the secret as the receiver would have read it: the
  // decoded bytes, without the NUL separators of unrelated strings.
  std::string secret(text.substr(from, to - from));
  std::erase(secret, '\0');
  return {rule.name, Sha256Hex(secret), secret.size()};
}

}  // namespace

std::vector<SecretFinding> SecretGuard::Scan(simdjson::dom::element root) {
  JsonStrings strings(root);
  std::vector<SecretFinding> out;
  for (const Hit& h : Hits(strings)) out.push_back(FindingOf(scanner_->rule(h.rule), strings.text(), h.from, h.to));
  return out;
}

bool SecretGuard::ClearedRaw(std::string_view line) {
  if (!raw_ok_) return false;
  RawScanPlan plan = PlanRawScan(line);
  if (!plan.usable) return false;
  // No rule matches empty text (Vectorscan refuses such a pattern without
  // HS_FLAG_ALLOWEMPTY), so a line with no escaped string skips that call.
  return !scanner_->AnyMatch(line, scratch_.get()) &&
         (plan.escaped.empty() || !scanner_->AnyMatch(plan.escaped, scratch_.get()));
}

std::vector<SecretFinding> SecretGuard::Scan(simdjson::dom::element root, std::string_view line) {
  if (ClearedRaw(line)) return {};
  return Scan(root);
}

namespace {

using Edit = JsonStrings::Edit;

// The string's own range, before `list` was applied, of bytes [from, to) of
// the string after it: a byte inside a mask stands for all the mask hides.
std::pair<std::size_t, std::size_t> BeforeEdits(const std::vector<Edit>& list, std::size_t from, std::size_t to) {
  std::size_t of = SIZE_MAX, ot = SIZE_MAX;
  std::ptrdiff_t delta = 0;  // edited offset minus original offset, before the current edit
  for (const Edit& e : list) {
    std::size_t at = e.from + delta, end = at + e.with.size();
    if (of == SIZE_MAX && from < end) of = from < at ? from - delta : e.from;
    if (ot == SIZE_MAX && to - 1 < end) ot = to - 1 < at ? to - delta : e.to;
    delta += static_cast<std::ptrdiff_t>(e.with.size()) - static_cast<std::ptrdiff_t>(e.to - e.from);
  }
  if (of == SIZE_MAX) of = from - delta;
  if (ot == SIZE_MAX) ot = to - delta;
  return {of, ot};
}

bool Overlaps(const Edit& e, std::size_t from, std::size_t to) { return from < e.to && e.from < to; }

// Adds `add` to the sorted, disjoint `list`, merged with every edit it
// overlaps; a merged mask keeps the name of the first edit it covers.
// False when `list` already covered the range.
bool AddEdit(std::vector<Edit>* list, Edit add) {
  std::vector<Edit> out;
  bool grew = true, named = false;
  for (const Edit& e : *list) {
    if (!Overlaps(e, add.from, add.to)) {
      out.push_back(e);
      continue;
    }
    if (e.from <= add.from && add.to <= e.to) grew = false;
    if (!named) add.with = e.with;
    named = true;
    add.from = std::min(add.from, e.from);
    add.to = std::max(add.to, e.to);
  }
  if (!grew) return false;
  auto at = std::find_if(out.begin(), out.end(), [&](const Edit& e) { return e.from > add.from; });
  out.insert(at, std::move(add));
  *list = std::move(out);
  return true;
}

std::string Mask(const SecretRule& rule) { return "[REDACTED:" + rule.name + "]"; }

}  // namespace

JsonStrings::Edits SecretGuard::FirstEdits(const JsonStrings& strings, const std::vector<Hit>& hits,
                                           std::vector<SecretFinding>* found) {
  // Per string: the ranges to mask, merged where rules overlap (a bearer
  // header holding a JWT); the first rule by position names the mask.
  JsonStrings::Edits edits;
  for (const Hit& h : hits) {
    const SecretRule& rule = scanner_->rule(h.rule);
    found->push_back(FindingOf(rule, strings.text(), h.from, h.to));
    for (const auto& seg : strings.Overlapping(h.from, h.to)) {
      if (seg.KeyOfMatchedValue(h.to)) continue;
      auto [from, to] = seg.Original(std::max(h.from, seg.at) - seg.at, std::min(h.to, seg.at + seg.size) - seg.at);
      auto& list = edits[seg.id];
      if (!list.empty() && from <= list.back().to) {
        list.back().to = std::max(list.back().to, to);
        continue;
      }
      list.push_back({from, to, Mask(rule)});
    }
  }
  return edits;
}

// One more round after a rescan of the masked message (`after`) found
// `hits`: each is mapped back onto the original strings (`before`). A hit
// that touches a mask was made by it, so the mask grows over the hit; a hit
// clear of every mask is a secret of its own (a key the first scan saw glued
// to a letter that is now a mask's bracket), masked and reported.
bool SecretGuard::Widen(const JsonStrings& before, const JsonStrings& after, const std::vector<Hit>& hits,
                        JsonStrings::Edits* edits, std::vector<SecretFinding>* found) {
  // `after` was written with the edits as they are now: every hit is mapped
  // back through these, not through the ones this round has grown.
  const JsonStrings::Edits applied = *edits;
  static const std::vector<Edit> kNone;
  auto applied_to = [&](const char* id) -> const std::vector<Edit>& {
    auto it = applied.find(id);
    return it == applied.end() ? kNone : it->second;
  };
  bool grew = false;
  for (const Hit& h : hits) {
    struct Part {
      const char* id;
      std::size_t from, to;
    };
    std::vector<Part> parts;
    bool made_by_mask = false;
    auto [first, last] = after.OverlappingIndices(h.from, h.to);
    for (std::size_t i = first; i < last; ++i) {
      const JsonStrings::Segment& seg = after.segments()[i];
      if (seg.size == 0 || seg.KeyOfMatchedValue(h.to)) continue;
      auto [f, t] = seg.Original(std::max(h.from, seg.at) - seg.at, std::min(h.to, seg.at + seg.size) - seg.at);
      const char* id = before.segments()[i].id;
      auto [of, ot] = BeforeEdits(applied_to(id), f, t);
      for (const Edit& e : applied_to(id)) made_by_mask |= Overlaps(e, of, ot);
      parts.push_back({id, of, ot});
    }
    const SecretRule& rule = scanner_->rule(h.rule);
    if (!made_by_mask && !parts.empty()) found->push_back(FindingOf(rule, after.text(), h.from, h.to));
    for (const Part& p : parts) grew |= AddEdit(&(*edits)[p.id], {p.from, p.to, Mask(rule)});
  }
  return grew;
}

// The last resort: every string a hit still touches becomes "".
bool SecretGuard::EmptyStrings(const JsonStrings& before, const JsonStrings& after, const std::vector<Hit>& hits,
                               JsonStrings::Edits* edits) {
  bool emptied = false;
  for (const Hit& h : hits) {
    auto [first, last] = after.OverlappingIndices(h.from, h.to);
    for (std::size_t i = first; i < last; ++i) {
      if (after.segments()[i].size == 0) continue;
      const JsonStrings::Segment& seg = before.segments()[i];
      (*edits)[seg.id] = {Edit{0, seg.own, ""}};
      emptied = true;
    }
  }
  return emptied;
}

std::optional<std::string> SecretGuard::Redact(simdjson::dom::element root, std::vector<SecretFinding>* found) {
  JsonStrings strings(root);
  found->clear();
  std::vector<Hit> hits = Hits(strings);
  if (hits.empty()) return JsonStrings::Rewrite(root, {});
  JsonStrings::Edits edits = FirstEdits(strings, hits, found);
  // A mask changes its neighbourhood: scan the result as the receiver will
  // read it until it is clean (fuzz/secret_scan_fuzz.cc found the first
  // case). Each round grows a mask or empties a string, so it ends; the
  // bound keeps a hostile message from buying many rounds.
  constexpr int kWidenRounds = 8, kRounds = 16;
  // The rescan's DOM is as large as the message: a large one's memory goes
  // back when Redact returns, not at the next redaction.
  struct Shrink {
    simdjson::dom::parser* parser;
    ~Shrink() {
      if (parser->capacity() > (std::size_t{1} << 20)) *parser = simdjson::dom::parser();
    }
  } shrink{&rescan_parser_};
  for (int round = 0; round < kRounds; ++round) {
    std::string out = JsonStrings::Rewrite(root, edits);
    auto doc = rescan_parser_.parse(out);
    if (doc.error()) return std::nullopt;
    JsonStrings after(doc.value_unsafe());
    if (after.segments().size() != strings.segments().size()) return std::nullopt;
    std::vector<Hit> again = Hits(after);
    if (again.empty()) return out;
    bool progress = round < kWidenRounds && Widen(strings, after, again, &edits, found);
    if (!progress && !EmptyStrings(strings, after, again, &edits)) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> SecretGuard::RedactLine(std::string_view line, std::vector<SecretFinding>* found) {
  found->clear();
  auto doc = line_parser_.parse(line.data(), line.size(), true);
  if (doc.error()) return std::string(line);  // the relay's own output: always valid JSON
  // The common case, an audit record with no secret: shown clean by a scan
  // of its bytes (as Scan does for messages), without decoding its strings
  // and writing the line again only to find it unchanged.
  if (ClearedRaw(line)) return std::string(line);
  auto out = Redact(doc.value_unsafe(), found);
  return found->empty() ? std::optional<std::string>(line) : out;
}

}  // namespace mcpcell
