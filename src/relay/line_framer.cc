#include "relay/line_framer.h"

#include <algorithm>
#include <cstring>

namespace mcpcell {
namespace {
constexpr std::size_t kMinRead = 64 * 1024;  // a pipe's default capacity
}  // namespace

LineFramer::LineFramer(std::size_t max_line) : max_line_(max_line) {}

void LineFramer::MakeRoom() {
  if (begin_ == end_) begin_ = end_ = scan_ = 0;
  if (cap_ - end_ >= kMinRead + kPadding) return;
  std::size_t pending = end_ - begin_;
  if (begin_ > 0 && cap_ - pending >= kMinRead + kPadding) {
    std::memmove(buf_.get(), buf_.get() + begin_, pending);
  } else {
    // Doubling keeps the copies of a growing line linear in its size; the
    // size stays below max_line + one read, because Next() stops keeping a
    // line once it is longer than max_line.
    std::size_t cap = std::max(cap_ * 2, pending + kMinRead + kPadding);
    auto grown = std::make_unique_for_overwrite<char[]>(cap);
    if (pending > 0) std::memcpy(grown.get(), buf_.get() + begin_, pending);
    buf_ = std::move(grown);
    cap_ = cap;
  }
  scan_ -= begin_;
  end_ = pending;
  begin_ = 0;
}

char* LineFramer::WritePtr(std::size_t* room) {
  MakeRoom();
  *room = cap_ - end_ - kPadding;
  return buf_.get() + end_;
}

void LineFramer::Commit(std::size_t n) { end_ += n; }

LineFramer::Line LineFramer::Oversize(std::size_t size) {
  Line l;
  l.text = std::string_view(prefix_.data(), prefix_.size() - kPadding);
  l.oversize = true;
  l.size = size;
  return l;
}

std::optional<LineFramer::Line> LineFramer::Next() {
  const char* base = buf_.get();
  if (skipping_) {
    const void* nl = std::memchr(base + begin_, '\n', end_ - begin_);
    if (nl == nullptr) {
      skipped_ += end_ - begin_;
      begin_ = end_ = scan_ = 0;
      return std::nullopt;
    }
    std::size_t at = static_cast<std::size_t>(static_cast<const char*>(nl) - base);
    skipped_ += at - begin_;
    begin_ = scan_ = at + 1;
    skipping_ = false;
    return Oversize(skipped_);
  }
  const void* nl = end_ > scan_ ? std::memchr(base + scan_, '\n', end_ - scan_) : nullptr;
  if (nl == nullptr) {
    scan_ = end_;
    if (end_ - begin_ > max_line_) {
      prefix_.assign(base + begin_, std::min(kKeptPrefix, end_ - begin_));
      prefix_.append(kPadding, '\0');
      skipping_ = true;
      skipped_ = end_ - begin_;
      begin_ = end_ = scan_ = 0;
    }
    return std::nullopt;
  }
  std::size_t at = static_cast<std::size_t>(static_cast<const char*>(nl) - base);
  Line l;
  l.text = std::string_view(base + begin_, at - begin_);
  l.size = l.text.size();
  begin_ = scan_ = at + 1;
  if (l.size > max_line_) {
    prefix_.assign(l.text.substr(0, kKeptPrefix));
    prefix_.append(kPadding, '\0');
    return Oversize(l.size);
  }
  return l;
}

std::optional<LineFramer::Line> LineFramer::Finish() {
  if (auto l = Next()) return l;
  if (skipping_) {
    skipping_ = false;
    return Oversize(skipped_);
  }
  if (begin_ == end_) return std::nullopt;
  Line l;
  l.text = std::string_view(buf_.get() + begin_, end_ - begin_);
  l.size = l.text.size();
  l.terminated = false;
  begin_ = end_ = scan_ = 0;
  if (l.size > max_line_) {
    prefix_.assign(l.text.substr(0, kKeptPrefix));
    prefix_.append(kPadding, '\0');
    return Oversize(l.size);
  }
  return l;
}

}  // namespace mcpcell
