#include "cell/stderr_redact.h"

#include <algorithm>
#include <utility>

namespace mcpcell {

std::string StderrRedactor::Line(std::string_view line) {
  std::vector<std::string> rules;
  std::string out = redact_(line, &rules);
  for (auto& r : rules) {
    if (std::find(masked_.begin(), masked_.end(), r) == masked_.end()) masked_.push_back(std::move(r));
  }
  return out;
}

std::string StderrRedactor::Feed(std::string_view chunk) {
  std::string out;
  held_.append(chunk);
  std::size_t at = 0;
  for (std::size_t nl; (nl = held_.find('\n', at)) != std::string::npos; at = nl + 1) {
    out += Line(std::string_view(held_).substr(at, nl - at));
    out += '\n';
  }
  held_.erase(0, at);
  // A line without an end is not held for ever.
  while (held_.size() > kStderrLineHold) {
    out += Line(std::string_view(held_).substr(0, kStderrLineHold));
    held_.erase(0, kStderrLineHold);
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
