#include "guard/json_strings.h"

#include <algorithm>

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

void JsonStrings::Add(std::string_view s, bool glue) {
  if (!text_.empty() && !(glue && last_glued_)) text_.push_back('\0');
  segments_.push_back({text_.size(), s.data(), s.size()});
  text_.append(s);
  last_glued_ = glue;
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

std::vector<JsonStrings::Segment> JsonStrings::Overlapping(std::size_t from, std::size_t to) const {
  std::vector<Segment> out;
  auto it = std::upper_bound(segments_.begin(), segments_.end(), from,
                             [](std::size_t v, const Segment& s) { return v < s.at; });
  if (it != segments_.begin()) --it;
  for (; it != segments_.end() && it->at < to; ++it) {
    if (it->at + it->size > from) out.push_back(*it);
  }
  return out;
}

std::string JsonStrings::Rewrite(element root, const Edits& edits) {
  std::string out;
  Write(root, edits, &out);
  return out;
}

}  // namespace mcpcell
