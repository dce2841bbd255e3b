// SecretGuard::RedactText: the secret scan of text that is no JSON (a
// server's stderr): the matches masked in place, then the result scanned
// again, as Redact() does for a message.
#include <algorithm>

#include "guard/secret_guard.h"
#include "guard/secret_scanner.h"

namespace mcpcell {
namespace {

struct Range {
  std::size_t from, to, rule;
};

// The matches (ordered by start), merged where they overlap or touch; the
// first names the mask.
std::vector<Range> Merged(const std::vector<SecretMatch>& matches) {
  std::vector<Range> out;
  for (const SecretMatch& m : matches) {
    if (!out.empty() && m.from <= out.back().to) {
      out.back().to = std::max(out.back().to, m.to);
      continue;
    }
    out.push_back({m.from, m.to, m.rule});
  }
  return out;
}

}  // namespace

std::string SecretGuard::RedactText(std::string_view text, std::vector<std::string>* rules) {
  std::vector<SecretMatch> matches = scanner_->Scan(text, scratch_.get());
  if (matches.empty()) return std::string(text);
  std::string out;
  std::string first;
  std::size_t at = 0;
  for (const Range& r : Merged(matches)) {
    const std::string& name = scanner_->rule(r.rule).name;
    if (first.empty()) first = name;
    rules->push_back(name);
    out.append(text.substr(at, r.from - at));
    out += "[REDACTED:" + name + "]";
    at = r.to;
  }
  out.append(text.substr(at));
  // A mask and its neighbours may read as a new secret (a URL's password
  // next to a masked user): then nothing of the text is kept.
  if (!scanner_->Scan(out, scratch_.get()).empty()) return "[REDACTED:" + first + "]";
  return out;
}

}  // namespace mcpcell
