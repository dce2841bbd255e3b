#include "guard/tool_contract.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "audit/sha256.h"

namespace mcpcell {
namespace {

using json = nlohmann::json;

// Doubles hold every integer up to 2^53 exactly; beyond it "integral" says
// nothing about what the server meant, so such values stay as they were.
constexpr double kExactIntegers = 9007199254740992.0;

// Bytes [from, from + max_bytes) of `text`, saying what is left out on either side.
std::string Window(std::string_view text, std::size_t from, std::size_t max_bytes) {
  std::string head = from == 0 ? "" : fmt::format("…({} bytes as before)", from);
  std::string_view rest = text.substr(from);
  if (rest.size() <= max_bytes) return head + std::string(rest);
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(rest[cut]) & 0xc0) == 0x80) --cut;  // not inside a code point
  return fmt::format("{}{}…({} more bytes)", head, rest.substr(0, cut), rest.size() - cut);
}

// The two values of one changed field, each shown from a little before the
// first byte where they differ: a rug pull appended after a long honest
// description was cut away on both sides, and the user saw two equal
// prefixes (adversary pass, tests/unit/pin_diff_test.cc).
std::pair<std::string, std::string> DisplayedChange(const json& a, const json& b) {
  constexpr std::size_t kMax = 160, kContext = 40;
  std::string ta = VisibleText(CanonicalText(a)), tb = VisibleText(CanonicalText(b));
  std::size_t same = static_cast<std::size_t>(std::mismatch(ta.begin(), ta.end(), tb.begin(), tb.end()).first - ta.begin());
  std::size_t from = same > kContext ? same - kContext : 0;
  // The texts agree before `same`, so one boundary suits both.
  while (from > 0 && (static_cast<unsigned char>(ta[from]) & 0xc0) == 0x80) --from;
  return {Window(ta, from, kMax), Window(tb, from, kMax)};
}

void Diff(const json& a, const json& b, const std::string& path, std::vector<FieldChange>* out) {
  if (a == b) return;
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;  // in key order, whichever side has them
    for (const auto& [k, v] : a.items()) keys.insert(k);
    for (const auto& [k, v] : b.items()) keys.insert(k);
    for (const auto& k : keys) {
      // The key is the server's text, printed by `pins diff` and on stderr:
      // ESC [1A ESC [2K in it erased the diff line above (adversary pass).
      std::string p = path.empty() ? VisibleText(k) : path + "." + VisibleText(k);
      if (!b.contains(k)) {
        out->push_back({p, Displayed(a[k]), "(absent)"});
      } else if (!a.contains(k)) {
        out->push_back({p, "(absent)", Displayed(b[k])});
      } else {
        Diff(a[k], b[k], p, out);
      }
    }
    return;
  }
  if (a.is_array() && b.is_array()) {
    std::size_t n = std::max(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
      std::string p = fmt::format("{}[{}]", path, i);
      if (i >= a.size()) {
        out->push_back({p, "(absent)", Displayed(b[i])});
      } else if (i >= b.size()) {
        out->push_back({p, Displayed(a[i]), "(absent)"});
      } else {
        Diff(a[i], b[i], p, out);
      }
    }
    return;
  }
  auto [before, after] = DisplayedChange(a, b);
  out->push_back({path.empty() ? "(whole tool)" : path, std::move(before), std::move(after)});
}

}  // namespace

json CanonicalJson(const json& v) {
  if (v.is_object()) {
    json out = json::object();
    for (const auto& [k, x] : v.items()) out[k] = CanonicalJson(x);
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (const auto& x : v) out.push_back(CanonicalJson(x));
    return out;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) <= kExactIntegers) {
      return static_cast<std::int64_t>(d);  // also turns -0.0 into 0
    }
    return d;
  }
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(v.get<std::uint64_t>());  // 5 and 5u are one number
  }
  return v;
}

std::string CanonicalText(const json& v) {
  // Strict: the relay passes only valid UTF-8, so a replacement never happens silently.
  return CanonicalJson(v).dump(-1, ' ', false, json::error_handler_t::strict);
}

std::string ContractHash(const json& tool) { return Sha256Hex(CanonicalText(tool)); }

std::vector<FieldChange> DiffContracts(const json& before, const json& after) {
  std::vector<FieldChange> out;
  Diff(CanonicalJson(before), CanonicalJson(after), "", &out);
  return out;
}

char32_t NextCodePoint(std::string_view s, std::size_t* i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(*i);
  int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (len == 0 || *i + len > s.size()) {
    ++*i;
    return 0xFFFD;
  }
  char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
  for (int k = 1; k < len; ++k) {
    if ((b(*i + k) & 0xc0) != 0x80) {
      ++*i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (b(*i + k) & 0x3f);
  }
  *i += len;
  return cp;
}

std::string VisibleText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t start = i;
    char32_t cp = NextCodePoint(s, &i);
    if (IsInvisibleCodePoint(cp) || cp == '\n' || cp == '\t') {
      out += fmt::format("\\u{{{:04X}}}", static_cast<std::uint32_t>(cp));
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  return out;
}

std::string Displayed(const json& v, std::size_t max_bytes) {
  return Window(VisibleText(CanonicalText(v)), 0, max_bytes);
}

}  // namespace mcpcell
