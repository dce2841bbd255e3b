#include "client/jsonc.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace mcpcell {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t SkipSpace(const std::string& s, std::size_t i) {
  while (i < s.size() && IsSpace(s[i])) ++i;
  return i;
}

/// The offset just past the string literal opening at `i` (s[i] == '"'), or npos.
std::size_t StringEnd(const std::string& s, std::size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    } else if (s[i] == '\n') {
      return std::string::npos;  // JSON strings hold no raw newline
    }
  }
  return std::string::npos;
}

/// The offset just past the value starting at `i` (strict JSON), or npos.
std::size_t ValueEnd(const std::string& s, std::size_t i, int depth = 0) {
  if (i >= s.size() || depth > 512) return std::string::npos;
  char c = s[i];
  if (c == '"') return StringEnd(s, i);
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    i = SkipSpace(s, i + 1);
    if (i < s.size() && s[i] == close) return i + 1;
    for (;;) {
      if (c == '{') {
        if (i >= s.size() || s[i] != '"') return std::string::npos;
        i = SkipSpace(s, StringEnd(s, i));
        if (i >= s.size() || s[i] != ':') return std::string::npos;
        i = SkipSpace(s, i + 1);
      }
      i = ValueEnd(s, i, depth + 1);
      if (i == std::string::npos) return i;
      i = SkipSpace(s, i);
      if (i < s.size() && s[i] == close) return i + 1;
      if (i >= s.size() || s[i] != ',') return std::string::npos;
      i = SkipSpace(s, i + 1);
    }
  }
  // number, true, false, null: up to the next delimiter
  std::size_t start = i;
  while (i < s.size() && !IsSpace(s[i]) && s[i] != ',' && s[i] != '}' && s[i] != ']') ++i;
  return i > start ? i : std::string::npos;
}

}  // namespace

std::string Splice(std::string text, std::vector<std::pair<Span, std::string>> edits) {
  std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) { return a.first.begin > b.first.begin; });
  for (const auto& [span, repl] : edits) text.replace(span.begin, span.end - span.begin, repl);
  return text;
}

int LineOf(const std::string& text, std::size_t offset) {
  int line = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n' ? 1 : 0;
  return line;
}

Result<std::string> BlankJsoncExtras(const std::string& text) {
  std::string out = text;
  // A UTF-8 byte order mark, which some editors write, is not part of the
  // JSON text (RFC 8259 section 8.1 lets a parser ignore it): blanked like a comment.
  if (out.rfind("\xEF\xBB\xBF", 0) == 0) out.replace(0, 3, "   ");
  std::size_t last_comma = std::string::npos;  // a comma not yet followed by a value
  for (std::size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    if (c == '"') {
      std::size_t end = StringEnd(out, i);
      if (end == std::string::npos) return MakeError("read JSON", "", "unterminated string at line " + std::to_string(LineOf(text, i)));
      i = end - 1;
      last_comma = std::string::npos;
    } else if (c == '/' && i + 1 < out.size() && (out[i + 1] == '/' || out[i + 1] == '*')) {
      bool line = out[i + 1] == '/';
      std::size_t end = line ? out.find('\n', i) : out.find("*/", i + 2);
      if (end == std::string::npos) {
        if (!line) return MakeError("read JSON", "", "unterminated /* comment at line " + std::to_string(LineOf(text, i)));
        end = out.size();
      } else if (!line) {
        end += 2;
      }
      for (std::size_t k = i; k < end; ++k) {
        if (out[k] != '\n') out[k] = ' ';
      }
      i = end - 1;
    } else if (c == ',') {
      last_comma = i;
    } else if ((c == '}' || c == ']') && last_comma != std::string::npos) {
      out[last_comma] = ' ';  // a trailing comma: JSONC allows it, JSON does not
      last_comma = std::string::npos;
    } else if (!IsSpace(c)) {
      last_comma = std::string::npos;
    }
  }
  return out;
}

Result<Span> TopValue(const std::string& json) {
  std::size_t b = SkipSpace(json, 0);
  std::size_t e = ValueEnd(json, b);
  if (e == std::string::npos || SkipSpace(json, e) != json.size()) {
    return MakeError("read JSON", "", "not one JSON value (near line " + std::to_string(LineOf(json, b)) + ")");
  }
  return Span{b, e};
}

Result<std::vector<Member>> ObjectMembers(const std::string& json, std::size_t i) {
  if (i >= json.size() || json[i] != '{') {
    return MakeError("read JSON", "", "expected an object at line " + std::to_string(LineOf(json, i)));
  }
  std::vector<Member> members;
  i = SkipSpace(json, i + 1);
  if (i < json.size() && json[i] == '}') return members;
  for (;;) {
    std::size_t key_end = i < json.size() && json[i] == '"' ? StringEnd(json, i) : std::string::npos;
    if (key_end == std::string::npos) return MakeError("read JSON", "", "expected a key at line " + std::to_string(LineOf(json, i)));
    nlohmann::json key = nlohmann::json::parse(json.substr(i, key_end - i), nullptr, false);
    if (!key.is_string()) return MakeError("read JSON", "", "bad key at line " + std::to_string(LineOf(json, i)));
    i = SkipSpace(json, key_end);
    if (i >= json.size() || json[i] != ':') return MakeError("read JSON", "", "expected ':' at line " + std::to_string(LineOf(json, i)));
    std::size_t vb = SkipSpace(json, i + 1);
    std::size_t ve = ValueEnd(json, vb);
    if (ve == std::string::npos) return MakeError("read JSON", "", "bad value at line " + std::to_string(LineOf(json, vb)));
    members.push_back({key.get<std::string>(), {vb, ve}});
    i = SkipSpace(json, ve);
    if (i < json.size() && json[i] == '}') return members;
    if (i >= json.size() || json[i] != ',') return MakeError("read JSON", "", "expected ',' or '}' at line " + std::to_string(LineOf(json, i)));
    i = SkipSpace(json, i + 1);
  }
}

}  // namespace mcpcell
