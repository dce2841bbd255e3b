#include "guard/key_block.h"

#include <algorithm>

namespace mcpcell {
namespace {

constexpr std::string_view kPuttyHeader = "PuTTY-User-Key-File-";

}  // namespace

KeyBlock OpensKeyBlock(std::string_view line) {
  std::size_t putty = line.find(kPuttyHeader);
  // "PuTTY-User-Key-File-3: " (or -2): a key file's header, not a mention of one.
  std::string_view after = putty == std::string_view::npos ? "" : line.substr(putty + kPuttyHeader.size());
  bool header = after.starts_with("2: ") || after.starts_with("3: ");
  if (header && line.find("Private-MAC:", putty) == std::string_view::npos) return KeyBlock::kPutty;
  if (std::size_t ssh2 = line.find("---- BEGIN SSH2 "); ssh2 != std::string_view::npos) {
    std::size_t key = line.find("PRIVATE KEY", ssh2);
    bool opens = key != std::string_view::npos && key - ssh2 < 40 && line.find("---- END SSH2", key) == std::string_view::npos;
    if (opens) return KeyBlock::kSsh2;
  }
  std::size_t begin = line.find("-----BEGIN");
  if (begin == std::string_view::npos) return KeyBlock::kNone;
  std::size_t key = line.find("PRIVATE KEY", begin);
  if (key == std::string_view::npos || key - begin > 40) return KeyBlock::kNone;
  return line.find("-----END", key) == std::string_view::npos ? KeyBlock::kPem : KeyBlock::kNone;
}

std::string_view KeyBlockEnd(KeyBlock key) {
  switch (key) {
    case KeyBlock::kPutty: return "Private-MAC:";
    case KeyBlock::kSsh2: return "---- END SSH2";
    default: return "-----END";
  }
}

bool IsBase64Line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  if (line.empty()) return false;
  return std::all_of(line.begin(), line.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
           c == '=';
  });
}

bool KeyBlockLines::Body(std::string_view line) {
  if (open_ == KeyBlock::kNone) {
    open_ = OpensKeyBlock(line);
    lines_ = 0;
    return false;
  }
  bool end = line.find(KeyBlockEnd(open_)) != std::string_view::npos;
  bool body = !end && (++lines_ < kMaxKeyBlockLines || IsBase64Line(line));
  if (!body) open_ = KeyBlock::kNone;
  return body;
}

std::size_t KeyBlockLines::BodyPart(std::string_view part) {
  if (open_ == KeyBlock::kNone) return std::string_view::npos;
  std::size_t end = part.find(KeyBlockEnd(open_));
  if (end != std::string_view::npos) {
    open_ = KeyBlock::kNone;
    return end;
  }
  if (lines_ < kMaxKeyBlockLines || IsBase64Line(part)) return part.size();
  open_ = KeyBlock::kNone;
  return std::string_view::npos;
}

}  // namespace mcpcell
