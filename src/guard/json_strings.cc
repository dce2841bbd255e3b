#include "guard/json_strings.h"

#include <algorithm>
#include <cstring>

namespace mcpcell {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

bool IsBlockList(std::string_view key) { return key == "content" || key == "contents"; }

void Quote(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

void QuoteEdited(std::string_view s, const JsonStrings::Edits& edits, std::string* out) {
  auto it = edits.find(s.data());
  if (it == edits.end()) return Quote(s, out);
  std::string edited;
  std::size_t at = 0;
  for (const auto& e : it->second) {
    edited.append(s.substr(at, e.from - at));
    edited.append(e.with);
    at = e.to;
  }
  edited.append(s.substr(at));
  Quote(edited, out);
}

void Write(element e, const JsonStrings::Edits& edits, std::string* out) {
  switch (e.type()) {
    case element_type::OBJECT: {
      out->push_back('{');
      bool first = true;
      // A copy: value_unsafe() of a temporary result would dangle in a range-for.
      simdjson::dom::object members = e.get_object().value_unsafe();
      for (auto f : members) {
        if (!first) out->push_back(',');
        first = false;
        QuoteEdited(f.key, edits, out);
        out->push_back(':');
        Write(f.value, edits, out);
      }
      out->push_back('}');
      return;
    }
    case element_type::ARRAY: {
      out->push_back('[');
      bool first = true;
      simdjson::dom::array items = e.get_array().value_unsafe();
      for (element item : items) {
        if (!first) out->push_back(',');
        first = false;
        Write(item, edits, out);
      }
      out->push_back(']');
      return;
    }
    case element_type::STRING:
      return QuoteEdited(e.get_string().value_unsafe(), edits, out);
    default:
      // Numbers, booleans, null: simdjson prints numbers in their shortest
      // exact form (integers unchanged).
      out->append(simdjson::to_string(e));
  }
}

}  // namespace

JsonStrings::JsonStrings(element root) { Walk(root); }

// The UTF-8 length of an invisible format character at the start of `s`, or 0:
// U+00AD, U+034F, U+061C, U+180E, U+200B-U+200F, U+202A-U+202E, U+2060-U+2064,
// U+2066-U+206F, U+FE00-U+FE0F, U+FEFF, U+E0000-U+E007F (tag characters),
// U+E0100-U+E01EF. The pin display's IsInvisibleCodePoint (tool_contract.h)
// and more: each of these inside a token hid it (adversary pass,
// tests/unit/secret_invisible_test.cc).
// C0 controls but tab, LF and CR, and DEL: shown as nothing (NUL, BEL, ESC
// inside a token hid it; the separator between strings is added apart).
static bool IsHiddenControl(unsigned char c) { return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f; }

// Every invisible character above is a control byte or starts with one of these.
constexpr unsigned char kLead[] = {0xC2, 0xCD, 0xD8, 0xE1, 0xE2, 0xEF, 0xF3};

std::size_t InvisibleCharAt(std::string_view s) {
  auto b = [&](std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  if (!s.empty() && IsHiddenControl(static_cast<unsigned char>(s[0]))) return 1;
  if (b(0) == 0xC2 && b(1) == 0xAD) return 2;
  if (b(0) == 0xCD && b(1) == 0x8F) return 2;                       // U+034F combining grapheme joiner
  if (b(0) == 0xD8 && b(1) == 0x9C) return 2;                       // U+061C Arabic letter mark
  if (b(0) == 0xE1 && b(1) == 0xA0 && b(2) == 0x8E) return 3;       // U+180E Mongolian vowel separator
  if (b(0) == 0xEF && b(1) == 0xBB && b(2) == 0xBF) return 3;
  if (b(0) == 0xEF && b(1) == 0xB8 && b(2) >= 0x80 && b(2) <= 0x8F) return 3;  // variation selectors
  if (b(0) == 0xF3 && b(1) == 0xA0) {  // plane 14: tags U+E0000-E007F, selectors U+E0100-E01EF
    bool tag = b(2) == 0x80 || b(2) == 0x81;
    bool selector = (b(2) >= 0x84 && b(2) <= 0x86) || (b(2) == 0x87 && b(3) <= 0xAF);
    return (tag || selector) && b(3) >= 0x80 && b(3) <= 0xBF ? 4 : 0;
  }
  if (b(0) != 0xE2) return 0;
  if (b(1) == 0x80 && ((b(2) >= 0x8B && b(2) <= 0x8F) || (b(2) >= 0xAA && b(2) <= 0xAE))) return 3;
  if (b(1) == 0x81 && ((b(2) >= 0xA0 && b(2) <= 0xA4) || (b(2) >= 0xA6 && b(2) <= 0xAF))) return 3;
  return 0;
}

bool HasInvisibleChar(std::string_view s, bool nul_separates) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (IsHiddenControl(u) && !(nul_separates && u == 0)) return true;
  }
  for (unsigned char lead : kLead) {
    for (const char* p = s.data(); (p = static_cast<const char*>(
                                         std::memchr(p, lead, s.size() - static_cast<std::size_t>(p - s.data())))) != nullptr;
         ++p) {
      if (InvisibleCharAt(s.substr(static_cast<std::size_t>(p - s.data()))) != 0) return true;
      if (p + 1 == s.data() + s.size()) break;
    }
  }
  return false;
}

void JsonStrings::Add(std::string_view s, bool glue) {
  if (!text_.empty() && !(glue && last_glued_)) text_.push_back('\0');
  last_glued_ = glue;
  Segment seg{text_.size(), s.data(), s.size(), s.size(), {}};
  // Every invisible character starts with one of these lead bytes or is a
  // control byte: a string without them (memchr, vectorised) is copied as is.
  // The next position of each lead byte, and of a control byte in the last
  // slot (s.size() when none is left), so text between candidates is never
  // looked at twice.
  constexpr int kLeads = sizeof kLead + 1;
  std::size_t next[kLeads];
  auto find = [&](int k, std::size_t from) {
    if (k == kLeads - 1) {
      auto it = from < s.size() ? std::find_if(s.begin() + static_cast<std::ptrdiff_t>(from), s.end(),
                                               [](char c) { return IsHiddenControl(static_cast<unsigned char>(c)); })
                                : s.end();
      next[k] = static_cast<std::size_t>(it - s.begin());
      return;
    }
    const void* p = from < s.size() ? std::memchr(s.data() + from, kLead[k], s.size() - from) : nullptr;
    next[k] = p ? static_cast<std::size_t>(static_cast<const char*>(p) - s.data()) : s.size();
  };
  for (int k = 0; k < kLeads; ++k) find(k, 0);
  std::size_t run = 0;
  for (;;) {
    std::size_t i = *std::min_element(next, next + kLeads);
    if (i >= s.size()) break;
    std::size_t n = InvisibleCharAt(s.substr(i));
    if (n != 0) {
      text_.append(s.substr(run, i - run));
      run = i + n;
      std::size_t kept = text_.size() - seg.at;
      seg.cuts.emplace_back(kept, run - kept);
    }
    for (int k = 0; k < kLeads; ++k) {
      if (next[k] == i) find(k, i + (n ? n : 1));
      else if (next[k] < i + n) find(k, i + n);
    }
  }
  text_.append(s.substr(run));
  seg.size = text_.size() - seg.at;
  segments_.push_back(std::move(seg));
}

void JsonStrings::Walk(element e) {
  switch (e.type()) {
    case element_type::OBJECT: {
      simdjson::dom::object members = e.get_object().value_unsafe();
      for (auto f : members) {
        Add(f.key, false);
        if (IsBlockList(f.key) && f.value.type() == element_type::ARRAY) {
          WalkBlocks(f.value.get_array().value_unsafe());
        } else {
          Walk(f.value);
        }
      }
      return;
    }
    case element_type::ARRAY: {
      simdjson::dom::array items = e.get_array().value_unsafe();
      for (element item : items) Walk(item);
      return;
    }
    case element_type::STRING:
      return Add(e.get_string().value_unsafe(), false);
    default:
      return;
  }
}

// The blocks' texts first, glued; then everything else of each block (its
// other keys and values, a nested resource's text) as separate strings.
void JsonStrings::WalkBlocks(simdjson::dom::array blocks) {
  last_glued_ = false;
  for (element b : blocks) {
    if (b.type() != element_type::OBJECT) continue;
    auto t = b.get_object().value_unsafe().at_key("text");
    if (!t.error() && t.value_unsafe().type() == element_type::STRING) Add(t.value_unsafe().get_string().value_unsafe(), true);
  }
  last_glued_ = false;
  for (element b : blocks) {
    if (b.type() != element_type::OBJECT) {
      Walk(b);
      continue;
    }
    simdjson::dom::object members = b.get_object().value_unsafe();
    for (auto f : members) {
      Add(f.key, false);
      if (f.key == "text" && f.value.type() == element_type::STRING) continue;
      Walk(f.value);
    }
  }
}

std::pair<std::size_t, std::size_t> JsonStrings::OverlappingIndices(std::size_t from, std::size_t to) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), from,
                             [](std::size_t v, const Segment& s) { return v < s.at; });
  if (it != segments_.begin()) --it;
  while (it != segments_.end() && it->at + it->size <= from && it->at < to) ++it;
  auto first = static_cast<std::size_t>(it - segments_.begin()), last = first;
  while (last < segments_.size() && segments_[last].at < to) ++last;
  return {first, last};
}

std::vector<JsonStrings::Segment> JsonStrings::Overlapping(std::size_t from, std::size_t to) const {
  std::vector<Segment> out;
  auto [first, last] = OverlappingIndices(from, to);
  for (std::size_t i = first; i < last; ++i) {
    if (segments_[i].at + segments_[i].size > from) out.push_back(segments_[i]);
  }
  return out;
}

std::string JsonStrings::Rewrite(element root, const Edits& edits) {
  std::string out;
  Write(root, edits, &out);
  return out;
}

}  // namespace mcpcell
