#include "guard/secret_guard.h"

#include <algorithm>
#include <set>

#include "audit/sha256.h"
#include "guard/json_strings.h"
#include "guard/secret_scanner.h"

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
    auto s = SecretScanner::Compile(std::move(rules));
    if (!s.ok()) return s.error();
    g->scanner_ = std::make_shared<const SecretScanner>(std::move(*s));
  }
  auto scratch = g->scanner_->NewScratch();
  if (!scratch.ok()) return scratch.error();
  g->scratch_ = *scratch;
  return g;
}

std::vector<SecretGuard::Hit> SecretGuard::Hits(const JsonStrings& strings) {
  std::vector<Hit> hits;
  for (const SecretMatch& m : scanner_->Scan(strings.text(), scratch_.get())) hits.push_back({m.rule, m.from, m.to});
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

std::string SecretGuard::Redact(simdjson::dom::element root, std::vector<SecretFinding>* found) {
  JsonStrings strings(root);
  std::vector<Hit> hits = Hits(strings);
  found->clear();
  if (hits.empty()) return JsonStrings::Rewrite(root, {});
  // Per string: the ranges to mask, merged where rules overlap (a bearer
  // header holding a JWT); the first rule by position names the mask.
  std::map<const char*, std::vector<JsonStrings::Edit>> edits;
  for (const Hit& h : hits) {
    const SecretRule& rule = scanner_->rule(h.rule);
    found->push_back(FindingOf(rule, strings.text(), h.from, h.to));
    for (const auto& seg : strings.Overlapping(h.from, h.to)) {
      auto [from, to] = seg.Original(std::max(h.from, seg.at) - seg.at, std::min(h.to, seg.at + seg.size) - seg.at);
      auto& list = edits[seg.id];
      if (!list.empty() && from <= list.back().to) {
        list.back().to = std::max(list.back().to, to);
        continue;
      }
      list.push_back({from, to, "[REDACTED:" + rule.name + "]"});
    }
  }
  return JsonStrings::Rewrite(root, edits);
}

std::string SecretGuard::RedactLine(std::string_view line, std::vector<SecretFinding>* found) {
  found->clear();
  auto doc = line_parser_.parse(line.data(), line.size(), true);
  if (doc.error()) return std::string(line);  // the relay's own output: always valid JSON
  std::string out = Redact(doc.value_unsafe(), found);
  return found->empty() ? std::string(line) : out;
}

}  // namespace mcpcell
