#include "relay/line_framer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "util/huge_pages.h"

namespace mcpcell {
namespace {
constexpr std::size_t kMinRead = 64 * 1024;  // a pipe's default capacity
}  // namespace

// True when `c` ends the top-level value being read (',' or the closing '}').
bool TopLevelIdScanner::Structural(char c) {
  if (in_string_) {
    if (escaped_) {
      escaped_ = false;
    } else if (c == '\\') {
      escaped_ = true;
      key_escaped_ = true;  // "\u0069d": the peer reads "id"; this scanner gives up on that key
    } else if (c == '"') {
      in_string_ = false;
      if (in_key_) key_is_id_ = !key_escaped_ && key_ == "id";
      in_key_ = false;
    } else if (in_key_ && key_.size() < 3) {
      key_ += c;
    }
    return false;
  }
  switch (c) {
    case '"':
      in_string_ = true;
      if (depth_ == 1 && expect_key_) {
        in_key_ = true;
        expect_key_ = false;
        key_.clear();
        key_escaped_ = key_is_id_ = false;
      }
      return false;
    case '{':
    case '[':
      if (depth_ == 0 && c == '[') dead_ = true;
      if (++depth_ == 1) expect_key_ = true;
      return false;
    case '}':
    case ']':
      if (depth_ == 0) dead_ = true;
      return !dead_ && --depth_ == 0;
    case ',':
      if (depth_ == 1) expect_key_ = true;
      return depth_ == 1;
    case ':':
      if (depth_ == 1 && key_is_id_) {
        ++ids_;
        capturing_ = true;
        value_.clear();
        key_is_id_ = false;
        return false;  // the value starts after the colon
      }
      return false;
    default:
      if (depth_ == 0 && c != ' ' && c != '\t' && c != '\r' && c != '\n') dead_ = true;
      return false;
  }
}

void TopLevelIdScanner::Step(char c) {
  bool was_capturing = capturing_;  // the colon that starts the value is not part of it
  bool end = Structural(c);
  if (!was_capturing) return;
  if (end) {
    capturing_ = false;
    return;
  }
  if (value_.size() <= kMaxId) value_ += c;
}

void TopLevelIdScanner::Feed(std::string_view bytes) {
  for (char c : bytes) {
    if (dead_) return;
    Step(c);
  }
}

std::string_view TopLevelIdScanner::Value() const {
  if (dead_ || ids_ != 1 || capturing_ || value_.size() > kMaxId) return "null";
  std::string_view v = value_;
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '\r' || v.front() == '\n')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r' || v.back() == '\n')) v.remove_suffix(1);
  return v.empty() ? std::string_view("null") : v;
}

LineFramer::LineFramer(std::size_t max_line) : max_line_(max_line) {}

GrowableBuffer::~GrowableBuffer() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

void GrowableBuffer::Resize(std::size_t size) {
  void* p = data_ == nullptr ? ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                             : ::mremap(data_, size_, size, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<char*>(p);
  size_ = size;
  AdviseHugePages(data_, size_);  // the VMA keeps the advice through later remaps
}

void LineFramer::MakeRoom() {
  if (begin_ == end_) {
    begin_ = end_ = scan_ = 0;
    // A long line is done: its pages go back to the kernel (the supervisor's
    // RSS returns to its idle size between large messages).
    if (buf_.size() > kKeptBuffer) buf_.Resize(kKeptBuffer);
  }
  std::size_t cap = buf_.size();
  if (cap - end_ >= kMinRead + kPadding) return;
  std::size_t pending = end_ - begin_;
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, pending);
    scan_ -= begin_;
    end_ = pending;
    begin_ = 0;
  }
  if (cap - end_ >= kMinRead + kPadding) return;
  // Doubling keeps the number of remaps logarithmic in the line's size; the
  // size stays below 2 x (max_line + one read), because Next() stops keeping
  // a line once it is longer than max_line.
  buf_.Resize(std::max({cap * 2, pending + kMinRead + kPadding, kKeptBuffer}));
}

char* LineFramer::WritePtr(std::size_t* room) {
  MakeRoom();
  *room = buf_.size() - end_ - kPadding;
  return buf_.data() + end_;
}

void LineFramer::Commit(std::size_t n) { end_ += n; }

LineFramer::Line LineFramer::Oversize(std::size_t size) {
  Line l;
  l.text = std::string_view(prefix_.data(), prefix_.size() - kPadding);
  l.oversize = true;
  l.size = size;
  l.id = id_.Value();
  return l;
}

std::optional<LineFramer::Line> LineFramer::Next() {
  const char* base = buf_.data();
  if (skipping_) {
    const void* nl = std::memchr(base + begin_, '\n', end_ - begin_);
    if (nl == nullptr) {
      id_.Feed(std::string_view(base + begin_, end_ - begin_));
      skipped_ += end_ - begin_;
      begin_ = end_ = scan_ = 0;
      return std::nullopt;
    }
    std::size_t at = static_cast<std::size_t>(static_cast<const char*>(nl) - base);
    id_.Feed(std::string_view(base + begin_, at - begin_));
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
      id_.Reset();
      id_.Feed(std::string_view(base + begin_, end_ - begin_));
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
    id_.Reset();
    id_.Feed(l.text);
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
  l.text = std::string_view(buf_.data() + begin_, end_ - begin_);
  l.size = l.text.size();
  l.terminated = false;
  begin_ = end_ = scan_ = 0;
  if (l.size > max_line_) {
    prefix_.assign(l.text.substr(0, kKeptPrefix));
    prefix_.append(kPadding, '\0');
    id_.Reset();
    id_.Feed(l.text);
    return Oversize(l.size);
  }
  return l;
}

}  // namespace mcpcell
