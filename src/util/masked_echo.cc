#include "util/masked_echo.h"

#include <algorithm>

#include "util/write_all.h"

namespace mcpcell {
namespace {

constexpr std::size_t kLineBound = 64 * 1024;
constexpr std::string_view kMask = "[masked]";

}  // namespace

MaskedEcho::MaskedEcho(int fd, std::vector<std::string> masked) : fd_(fd) {
  std::erase_if(masked, [](const std::string& m) { return m.empty(); });
  for (const auto& m : masked) longest_ = std::max(longest_, m.size());
  masked_ = std::move(masked);
}

std::string MaskedEcho::Masked(std::string text, const std::vector<std::string>& masked) {
  // Longest first: a string that holds another is masked whole.
  std::vector<const std::string*> order;
  for (const auto& m : masked) order.push_back(&m);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->size() > b->size(); });
  for (const std::string* mp : order) {
    const std::string& m = *mp;
    if (m.empty()) continue;
    for (std::size_t at = text.find(m); at != std::string::npos; at = text.find(m, at + kMask.size())) {
      text.replace(at, m.size(), kMask);
    }
  }
  return text;
}

void MaskedEcho::Add(std::string_view bytes) {
  pending_.append(bytes);
  std::size_t end = pending_.rfind('\n');
  if (end != std::string::npos) {
    Write(pending_.substr(0, end + 1));
    pending_.erase(0, end + 1);
  }
  if (pending_.size() > kLineBound + longest_) {
    // A line with no end in sight: out with all but what could still be
    // the start of a masked string.
    std::size_t keep = longest_ == 0 ? 0 : longest_ - 1;
    std::string head = Masked(pending_, masked_);
    // Masking changed the lengths: cut on the masked text, keeping the
    // unmasked tail (at most keep bytes, none of it a whole masked string).
    std::string tail = pending_.substr(pending_.size() - keep);
    if (head.size() >= keep && head.compare(head.size() - keep, keep, tail) == 0) {
      head.resize(head.size() - keep);
      pending_ = tail;
    } else {
      pending_.clear();
    }
    if (fd_ >= 0) (void)WriteAll(fd_, head, "echo", "a tool's output");
  }
}

void MaskedEcho::Flush() {
  if (!pending_.empty()) Write(std::move(pending_));
  pending_.clear();
}

void MaskedEcho::Write(std::string text) {
  if (fd_ < 0) return;
  (void)WriteAll(fd_, Masked(std::move(text), masked_), "echo", "a tool's output");
}

}  // namespace mcpcell
