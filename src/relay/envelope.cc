#include "relay/envelope.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "relay/line_framer.h"
#include "util/huge_pages.h"

// GCC 12 reports -Wnull-dereference inside simdjson's inlined object end()
// (the library's tape access, not ours) where TopMembersOf is inlined into
// Parse; mcp_relay.cc and json_strings.cc have the same exemption.
#pragma GCC diagnostic ignored "-Wnull-dereference"

namespace mcpcell {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// JavaScript numbers are doubles: two integer ids above 2^53 can compare equal
// in the client or server while the relay tells them apart.
constexpr std::int64_t kMaxSafeInteger = (std::int64_t{1} << 53) - 1;

}  // namespace

std::optional<RpcId> DecodeId(element v, std::string* why) {
  switch (v.type()) {
    case element_type::STRING: {
      std::string_view s = v.get_string().value_unsafe();
      if (s.size() > kMaxIdBytes) {
        *why = fmt::format("the id is a string of {} bytes; the relay keeps unanswered ids of up to {} bytes", s.size(),
                           kMaxIdBytes);
        return std::nullopt;
      }
      return RpcId{JsonQuote(s), "s:" + std::string(s)};
    }
    case element_type::INT64: {
      std::int64_t n = v.get_int64().value_unsafe();
      if (n > kMaxSafeInteger || n < -kMaxSafeInteger) break;
      return RpcId{std::to_string(n), "n:" + std::to_string(n)};
    }
    case element_type::UINT64:
      break;
    case element_type::NULL_VALUE:
      *why = "the id is null (a request needs a string or integer id; a notification has none)";
      return std::nullopt;
    default:
      *why = "the id must be a string or an integer";
      return std::nullopt;
  }
  *why = "the id is an integer beyond 2^53, which JavaScript peers cannot tell apart";
  return std::nullopt;
}

namespace {

Refusal Refuse(int code, std::string message, std::string id_json = "null", std::string id_key = {}) {
  return Refusal{code, std::move(message), std::move(id_json), std::move(id_key)};
}

// A key that occurs twice among `members`, if any. Most objects in MCP
// messages have a handful of keys: those are compared pairwise on the stack
// (no allocation per object, which cost more than the parse of a 1 KiB line);
// larger ones are sorted.
std::optional<std::string_view> DuplicateKeyOf(simdjson::dom::object members) {
  constexpr std::size_t kSmall = 16;
  std::string_view small[kSmall];
  std::size_t n = 0;
  for (auto field : members) {
    if (n == kSmall) break;
    for (std::size_t i = 0; i < n; ++i) {
      if (small[i] == field.key) return small[i];
    }
    small[n++] = field.key;
  }
  if (n < kSmall) return std::nullopt;
  std::vector<std::string_view> keys;
  for (auto field : members) keys.push_back(field.key);
  std::sort(keys.begin(), keys.end());
  auto dup = std::adjacent_find(keys.begin(), keys.end());
  if (dup == keys.end()) return std::nullopt;
  return *dup;
}

// The path of the first duplicate key is built only once one is found (on the
// way back up), so a clean document costs no string per node. simdjson's
// parser already bounds the depth (1024).
bool DuplicateIn(element e, std::string* where) {
  if (e.type() == element_type::ARRAY) {
    std::size_t i = 0;
    // A copy: value_unsafe() of a temporary result would dangle in a range-for.
    simdjson::dom::array items = e.get_array().value_unsafe();
    for (element v : items) {
      if (DuplicateIn(v, where)) {
        *where = fmt::format("[{}]", i) + (where->empty() || (*where)[0] == '[' ? "" : ".") + *where;
        return true;
      }
      ++i;
    }
    return false;
  }
  if (e.type() != element_type::OBJECT) return false;
  // A copy: value_unsafe() of a temporary result would dangle in a range-for.
  simdjson::dom::object members = e.get_object().value_unsafe();
  if (auto dup = DuplicateKeyOf(members)) {
    *where = std::string(*dup);
    return true;
  }
  for (auto field : members) {
    if (DuplicateIn(field.value, where)) {
      *where = std::string(field.key) + ((*where)[0] == '[' ? "" : ".") + *where;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string JsonQuote(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ErrorResponse(std::string_view id_json, int code, std::string_view message) {
  return fmt::format(R"({{"jsonrpc":"2.0","id":{},"error":{{"code":{},"message":{}}}}})", id_json, code,
                     JsonQuote(message));
}

std::optional<std::string> FindDuplicateKey(element e) {
  std::string where;
  if (DuplicateIn(e, &where)) return where;
  return std::nullopt;
}

std::optional<element> Member(element obj, std::string_view key) {
  if (obj.type() != element_type::OBJECT) return std::nullopt;
  auto v = obj.get_object().value_unsafe().at_key(key);
  if (v.error()) return std::nullopt;
  return v.value_unsafe();
}

std::optional<std::string_view> StringMember(element obj, std::string_view key) {
  auto v = Member(obj, key);
  if (!v || v->type() != element_type::STRING) return std::nullopt;
  return v->get_string().value_unsafe();
}

namespace {

// The envelope's members, found in one pass over the top-level object (keys
// are unique here: duplicates were refused before).
struct TopMembers {
  std::optional<element> id, jsonrpc, method, params, result, error;
};

TopMembers TopMembersOf(simdjson::dom::object obj) {
  TopMembers m;
  for (auto field : obj) {
    std::string_view k = field.key;
    if (k == "id") m.id = field.value;
    else if (k == "jsonrpc") m.jsonrpc = field.value;
    else if (k == "method") m.method = field.value;
    else if (k == "params") m.params = field.value;
    else if (k == "result") m.result = field.value;
    else if (k == "error") m.error = field.value;
  }
  return m;
}

// A request or notification's method and params, into `env` (its root, id,
// has_result and has_error already set).
std::optional<Refusal> ReadMethod(const TopMembers& m, Envelope* env, const std::string& id_json,
                                  const std::string& id_key) {
  if (env->has_result || env->has_error) {
    return Refuse(kInvalidRequest, "mcpcell relay: a message with both a method and a result/error", id_json, id_key);
  }
  if (!m.method->is_string()) {
    return Refuse(kInvalidRequest, "mcpcell relay: the method must be a string", id_json, id_key);
  }
  std::string_view method = m.method->get_string().value_unsafe();
  if (method.size() > kMaxMethodBytes) {
    return Refuse(kInvalidRequest,
                  fmt::format("mcpcell relay: the method is a string of {} bytes; method names of up to {} bytes "
                              "are passed", method.size(), kMaxMethodBytes),
                  id_json, id_key);
  }
  env->method = std::string(method);
  env->kind = env->id ? Envelope::Kind::kRequest : Envelope::Kind::kNotification;
  if (m.params) {
    env->params = *m.params;
    env->has_params = true;
    if (env->params.type() != element_type::OBJECT && env->params.type() != element_type::ARRAY) {
      return Refuse(kInvalidRequest, "mcpcell relay: params must be an object", id_json, id_key);
    }
  }
  return std::nullopt;
}

}  // namespace

namespace {

// What one token and one string cost (DomBytesBound): an index entry is a
// uint32; a tape word 8 bytes, a number or literal two of them; a decoded
// string its length prefix (4) and NUL, and a string_view (16) if it is a key
// of a large object FindDuplicateKey sorts.
constexpr std::size_t kIndexEntry = 4, kTapeWord = 8, kPerString = 4 + 1 + 16;
// simdjson allocates at most this much per byte of input (index 4, tape 8,
// strings 5/3), so a line this much smaller than the bound needs no count.
constexpr std::size_t kMostPerByte = 14;
// Root words, the index's end entries, a block of overwritten index entries,
// and the partial pages of each allocation.
constexpr std::size_t kFixedCost = 64 * 1024;

// Where the string whose opening quote is at `open` ends (at its closing
// quote), or s.size(): the next quote not preceded by an odd run of
// backslashes, as simdjson's stage 1 tells them.
std::size_t StringEnd(std::string_view s, std::size_t open) {
  std::size_t i = open + 1;
  for (;;) {
    const void* q = std::memchr(s.data() + i, '"', s.size() - i);
    if (q == nullptr) return s.size();
    std::size_t at = static_cast<const char*>(q) - s.data();
    std::size_t backslashes = 0;
    while (at - backslashes > open + 1 && s[at - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return at;
    i = at + 1;
  }
}

}  // namespace

std::size_t DomBytesBound(std::string_view s) {
  std::size_t bytes = kFixedCost, backslashes = 0;
  bool in_scalar = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool escaped = backslashes % 2 == 1;
    backslashes = c == '\\' ? backslashes + 1 : 0;
    if (c == '"' && !escaped) {
      std::size_t end = StringEnd(s, i);
      bytes += kIndexEntry + kTapeWord + kPerString + (end - i);
      i = end;
      in_scalar = false;
    } else if (c == '{' || c == '[' || c == '}' || c == ']' || c == '\f' || c == '\x1a') {
      // simdjson's SIMD kernels find operators as (byte | 0x20) in "{},:",
      // so FF and SUB are operators to its stage 1 too (relay_fuzz found it).
      bytes += kIndexEntry + kTapeWord;
      in_scalar = false;
    } else if (c == ',' || c == ':') {
      bytes += kIndexEntry;
      in_scalar = false;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      in_scalar = false;
    } else if (!in_scalar) {  // a number or literal (or a stray byte simdjson makes a token of)
      bytes += kIndexEntry + 2 * kTapeWord;
      in_scalar = true;
    }
  }
  return bytes;
}

EnvelopeParser::EnvelopeParser(std::size_t max_message)
    : max_message_(max_message), max_dom_(kDomPerMaxMessage * max_message + kDomSlack), parser_(max_message + 64) {}

// A line whose DOM would outgrow the bound is refused like an oversize one:
// with its id (read as the framer reads an oversize line's), audited by the caller.
std::optional<Refusal> EnvelopeParser::TooDense(std::string_view line) const {
  if (line.size() <= (max_dom_ - kFixedCost) / kMostPerByte) return std::nullopt;
  std::size_t bound = DomBytesBound(line);
  if (bound <= max_dom_) return std::nullopt;
  TopLevelIdScanner id;
  id.Feed(line);
  Refusal r{kMessageTooLarge,
            fmt::format("mcpcell relay: a message of {} bytes would take up to {} bytes to parse (numbers, brackets "
                        "and short strings cost the relay up to 13 times their size), more than {} times the maximum "
                        "message size of {} bytes; refused (raise it with --max-message)",
                        line.size(), bound, kDomPerMaxMessage, max_message_),
            IdFromValue(id.Value()), {}};
  if (r.id_json != "null") {
    r.id_key = r.id_json[0] == '"' ? "s:" + r.id_json.substr(1, r.id_json.size() - 2) : "n:" + r.id_json;
  }
  return r;
}

// A large line's DOM is allocated here rather than inside parse(), so its
// decoded-string buffer and tape can be advised huge pages before they are
// first written (util/huge_pages.h); parse() then reuses the capacity.
void EnvelopeParser::Reserve(std::size_t size) {
  if (size <= kKeptCapacity || parser_.doc.capacity() >= size) return;
  // The document (strings, tape) first: parser::allocate sizes only the index.
  if (parser_.doc.allocate(size) != simdjson::SUCCESS) return;  // parse() tries again and reports it
  std::size_t words = (size + 3 + 63) / 64 * 64;
  AdviseHugePages(parser_.doc.string_buf.get(), 5 * size / 3);
  AdviseHugePages(parser_.doc.tape.get(), words * sizeof(std::uint64_t));
}

void EnvelopeParser::Shrink() {
  if (parser_.capacity() > kKeptCapacity) parser_ = simdjson::dom::parser(max_message_ + 64);
}

std::variant<Envelope, Refusal> EnvelopeParser::Parse(std::string_view line) {
  // simdjson keeps the capacity of its largest document (tape, strings and
  // index: several times the message). After a large message the next small
  // one gets a fresh parser, so the supervisor's RSS drops back.
  if (parser_.capacity() > kKeptCapacity && line.size() <= kKeptCapacity) {
    parser_ = simdjson::dom::parser(max_message_ + 64);
  }
  if (auto refused = TooDense(line)) return std::move(*refused);
  Reserve(line.size());
  auto doc = parser_.parse(line.data(), line.size(), false);
  if (doc.error()) {
    return Refuse(kParseError, fmt::format("mcpcell relay: the message is not valid JSON ({}); refused",
                                           simdjson::error_message(doc.error())));
  }
  element root = doc.value_unsafe();
  if (root.type() == element_type::ARRAY) {
    return Refuse(kInvalidRequest,
                  "mcpcell relay: JSON-RPC batches are refused (removed from MCP in 2025-06-18); send one message per line");
  }
  if (root.type() != element_type::OBJECT) {
    return Refuse(kInvalidRequest, "mcpcell relay: a JSON-RPC message must be an object");
  }
  // The id is read only when it is the sole "id": with two, the peer takes the last.
  std::string id_json = "null";
  std::optional<std::string> dup = FindDuplicateKey(root);
  TopMembers m = TopMembersOf(root.get_object().value_unsafe());
  std::string why;
  std::optional<RpcId> id;
  if (m.id) id = DecodeId(*m.id, &why);
  std::string id_key;
  if (id && !(dup && *dup == "id")) {
    id_json = id->json;
    id_key = id->key;
  }
  if (dup) {
    return Refuse(kInvalidRequest,
                  fmt::format("mcpcell relay: duplicate key \"{}\" in the message; peers disagree on which one counts, "
                              "so it is refused", *dup),
                  id_json, id_key);
  }
  if (!m.jsonrpc || !m.jsonrpc->is_string() || m.jsonrpc->get_string().value_unsafe() != "2.0") {
    return Refuse(kInvalidRequest, "mcpcell relay: \"jsonrpc\": \"2.0\" is missing", id_json, id_key);
  }
  Envelope env;
  env.root = root;
  bool has_method = m.method.has_value();
  env.has_result = m.result.has_value();
  env.has_error = m.error.has_value();
  if (m.id && !id) return Refuse(kInvalidRequest, "mcpcell relay: " + why);
  env.id = id;
  if (has_method) {
    if (auto refused = ReadMethod(m, &env, id_json, id_key)) return std::move(*refused);
    return env;
  }
  if (env.has_result == env.has_error || !id) {
    return Refuse(kInvalidRequest,
                  "mcpcell relay: not a request, notification or response (a response has an id and exactly one of "
                  "result and error)",
                  id_json, id_key);
  }
  env.kind = Envelope::Kind::kResponse;
  env.result = env.has_result ? *m.result : *m.error;
  return env;
}

namespace {

// The length of the white space (in MayBeMessage's wide sense) at `s`'s start, or 0.
std::size_t SkippableAt(std::string_view s) {
  auto b = [&](std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  if (s.empty()) return 0;
  unsigned c0 = b(0);
  if (c0 <= 0x20 || c0 == 0x7f || c0 == 0x85 || c0 == 0xa0) return 1;
  if (s.size() < 2) return 0;
  if (c0 == 0xc2 && (b(1) == 0x85 || b(1) == 0xa0)) return 2;
  if (s.size() < 3) return 0;
  unsigned c1 = b(1), c2 = b(2);
  if (c0 == 0xef && c1 == 0xbb && c2 == 0xbf) return 3;  // U+FEFF, the BOM
  if (c0 == 0xe1 && ((c1 == 0x9a && c2 == 0x80) || (c1 == 0xa0 && c2 == 0x8e))) return 3;  // U+1680, U+180E
  if (c0 == 0xe2 && c1 == 0x80 && (c2 <= 0x8b || c2 == 0xa8 || c2 == 0xa9 || c2 == 0xaf)) return 3;  // U+2000-200B, 2028, 2029, 202F
  if (c0 == 0xe2 && c1 == 0x81 && c2 == 0x9f) return 3;  // U+205F
  if (c0 == 0xe3 && c1 == 0x80 && c2 == 0x80) return 3;  // U+3000
  return 0;
}

}  // namespace

namespace {

// The length of a line break some reader splits on at `s`'s start, or 0:
// Python's text stdin (universal newlines, the Python SDK's server) splits on
// a lone CR, Node's readline too; str.splitlines() also on VT, FF, FS-RS,
// NEL, U+2028 and U+2029. Every C0 control counts (a superset).
std::size_t BreakAt(std::string_view s) {
  auto b = [&](std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  if (s.empty()) return 0;
  if (b(0) < 0x20 || b(0) == 0x85) return 1;
  if (b(0) == 0xc2 && b(1) == 0x85) return 2;
  if (b(0) == 0xe2 && b(1) == 0x80 && (b(2) == 0xa8 || b(2) == 0xa9)) return 3;
  return 0;
}

// Where the first byte after the skippable run at `at` is.
std::size_t SkipFrom(std::string_view s, std::size_t at) {
  while (std::size_t n = SkippableAt(s.substr(at))) at += n;
  return at;
}

bool JsonStartAt(std::string_view s, std::size_t at) { return at < s.size() && (s[at] == '{' || s[at] == '['); }

}  // namespace

bool MayBeMessage(std::string_view line) {
  std::size_t i = SkipFrom(line, 0);
  if (JsonStartAt(line, i)) return true;
  // What follows any line break a reader might split on is a line of its own to that reader.
  // Every break is skippable too, so a run of them is scanned once (linear, not quadratic).
  while (i < line.size()) {
    std::size_t n = BreakAt(line.substr(i));
    if (n == 0) {
      ++i;
      continue;
    }
    i = SkipFrom(line, i + n);
    if (JsonStartAt(line, i)) return true;
  }
  return false;
}

std::optional<std::string> WithoutRawBreaks(std::string_view s) {
  constexpr std::string_view kNel = "\xc2\x85", kLs = "\xe2\x80\xa8", kPs = "\xe2\x80\xa9";
  auto has = [&](std::string_view what) { return s.find(what) != std::string_view::npos; };
  if (s.find('\r') == std::string_view::npos && !has(kNel) && !has(kLs) && !has(kPs)) return std::nullopt;
  std::string out;
  out.reserve(s.size() + 16);
  for (std::size_t i = 0; i < s.size();) {
    // In valid UTF-8 these byte sequences are always these code points.
    if (s[i] == '\r') {
      out += ' ';
      i += 1;
    } else if (s.substr(i, 2) == kNel) {
      out += "\\u0085";
      i += 2;
    } else if (s.substr(i, 3) == kLs || s.substr(i, 3) == kPs) {
      out += s.substr(i, 3) == kLs ? "\\u2028" : "\\u2029";
      i += 3;
    } else {
      out += s[i++];
    }
  }
  return out;
}

std::string IdFromPrefix(std::string_view p) {
  // A small scanner of the top-level object's members: "key": value, with
  // values skipped by bracket depth and string escapes.
  std::size_t i = 0;
  auto ws = [&] { while (i < p.size() && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n')) ++i; };
  auto skip_string = [&]() -> bool {  // at the opening quote
    for (++i; i < p.size(); ++i) {
      if (p[i] == '\\') { ++i; continue; }
      if (p[i] == '"') { ++i; return true; }
    }
    return false;
  };
  ws();
  if (i >= p.size() || p[i] != '{') return "null";
  ++i;
  for (;;) {
    ws();
    if (i >= p.size() || p[i] != '"') return "null";
    std::size_t key_start = i;
    if (!skip_string()) return "null";
    std::string_view key = p.substr(key_start, i - key_start);
    ws();
    if (i >= p.size() || p[i] != ':') return "null";
    ++i;
    ws();
    std::size_t value_start = i;
    int depth = 0;
    while (i < p.size()) {
      char c = p[i];
      if (c == '"') {
        if (!skip_string()) return "null";
        if (depth == 0) break;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (depth == 0) break;
        --depth;
      }
      if (c == ',' && depth == 0) break;
      ++i;
    }
    if (i >= p.size()) return "null";  // the value runs past the kept prefix
    std::string_view value = p.substr(value_start, i - value_start);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r')) value.remove_suffix(1);
    if (key == "\"id\"") return IdFromValue(value);
    ws();
    if (i < p.size() && p[i] == ',') ++i;
  }
}

std::string IdFromValue(std::string_view value) {
  if (value.empty()) return "null";
  if (value == "-0") return "0";  // as Parse reads it: simdjson gives the integer 0
  bool is_int = value.size() > (value[0] == '-' ? 1u : 0u) && value.size() < 17 &&
                std::all_of(value.begin() + (value[0] == '-' ? 1 : 0), value.end(),
                            [](char c) { return c >= '0' && c <= '9'; });
  bool is_plain_string = value.size() >= 2 && value.front() == '"' && value.back() == '"' &&
                         value.find('\\') == std::string_view::npos;
  if (is_int) return std::string(value);
  return is_plain_string ? JsonQuote(value.substr(1, value.size() - 2)) : "null";
}

}  // namespace mcpcell
