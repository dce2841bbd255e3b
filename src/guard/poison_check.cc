#include "guard/poison_check.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "guard/text_fold.h"
#include "guard/tool_contract.h"

namespace mcpcell {
namespace {

using json = nlohmann::json;

constexpr std::size_t kExcerptBytes = 80;
// A finding's field path and the findings of one tool or request are
// bounded: a path grows with every nested key, and each finding kept its own
// copy, so 1,000 levels of 1,000-byte keys (shown as \u{007F} each) took the
// supervisor to gigabytes from a 250 KB line (adversary pass, 2026-11-28).
constexpr std::size_t kMaxFieldBytes = 160;
constexpr std::size_t kMaxFindings = 32;

// Phrases that address the model, not a human reading a tool list. Lowercase;
// matched against the lowercased text. Kept to phrases no honest tool
// description needs (none of the reference servers' 36 tools has one).
constexpr std::array kModelInstructions = {
    "ignore previous", "ignore all previous", "ignore the above", "ignore any previous",
    "disregard previous", "disregard all", "forget previous", "forget all previous",
    "do not tell the user", "don't tell the user", "do not mention", "don't mention",
    "do not inform the user", "without telling the user", "without informing the user",
    "the user must not know", "hide this from the user", "not visible to the user",
    "<important>", "</important>", "<instructions>", "<system>", "[system]", "system prompt",
    "you are now", "new instructions", "before using this tool", "before calling any",
    "instead of the user", "override the", "is very very important", "otherwise the tool will not work",
};

// Files an exfiltrating description asks for. Substrings of the lowercased
// text, not std::regex: libstdc++'s regex recurses per character matched, and
// a hostile server chooses the text.
constexpr std::array kSensitivePaths = {
    "~/", "$home/", "${home}", "/home/", "/root/", ".ssh", "id_rsa", "id_ed25519", "id_ecdsa", "authorized_keys",
    "known_hosts", "/etc/passwd", "/etc/shadow", "/etc/sudoers", ".aws/", ".kube/config", ".docker/config",
    ".npmrc", ".pypirc", ".netrc", ".git-credentials", ".gnupg", "mcp.json", "claude_desktop_config", ".cursor/",
    "credentials.json", ".bash_history",
};

// What an elicitation must not ask the user for (MCP 2025-06-18 and later,
// client/elicitation: "Servers MUST NOT use elicitation to request sensitive
// information"). Matched as whole words, with a plural "s" or "es", in the
// folded text (text_fold.h: look-alike letters, camelCase and separators
// undone): "token" and "tokens", "accessToken", "pаssword" with a Cyrillic
// а; not "ssn" in "lessons". A list cannot know every word for a secret:
// the check is a tripwire for the obvious phishing form, not a guarantee.
constexpr std::array kCredentialWords = {
    "password", "passwd", "pwd", "pass word", "passphrase", "pass phrase", "passcode", "pass code", "passkey",
    "pin code", "pin number", "bank pin", "api key", "apikey", "access key", "secret", "secret key",
    "client secret", "token", "access token", "auth token", "bearer", "private key", "ssh key", "seed phrase",
    "seed words", "recovery phrase", "recovery words", "recovery code", "backup code", "mnemonic", "credential",
    "session cookie", "auth cookie", "credit card", "card number", "cvv", "cvc", "security code", "routing number",
    "account number", "iban", "sort code", "social security number", "ssn", "one time code", "one time password",
    "otp", "2fa", "mfa", "2fa code", "mfa code", "verification code", "login code", "digit code", "auth code",
    // The same in other languages written in Latin letters (diacritics folded: contraseña, lösenord, hasło, şifre).
    "passwort", "kennwort", "contrasena", "mot de passe", "senha", "wachtwoord", "losenord", "haslo", "heslo",
    "jelszo", "salasana", "adgangskode", "sifre",
};

// ... and in other scripts, found as they are written (no word boundaries in CJK).
constexpr std::array kCredentialWordsOtherScripts = {
    "пароль", "Пароль", "ПАРОЛЬ", "パスワード", "暗証番号", "密码", "密碼", "비밀번호", "كلمة المرور", "סיסמה", "पासवर्ड",
};

constexpr std::array kUrlSchemes = {"http://", "https://", "file://", "ftp://", "ws://", "wss://", "data:text", "data:application"};

bool IsWordByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (static_cast<unsigned char>(c) >= 0x80);
}

// ".env" as a word of its own (".env", ".env.local"), not "get-env" or ".environment".
std::size_t FindDotEnv(const std::string& low) {
  for (std::size_t at = low.find(".env"); at != std::string::npos; at = low.find(".env", at + 1)) {
    bool before = at == 0 || !IsWordByte(low[at - 1]);
    bool after = at + 4 == low.size() || !IsWordByte(low[at + 4]);
    if (before && after) return at;
  }
  return std::string::npos;
}

// "tokens" is a sampling budget as often as a secret: only the singular counts.
constexpr std::string_view kNoPlural = "token";

// The first of `words` in `low` as a whole word (bounded by non-word
// bytes), a plural "s" or "es" after it allowed.
template <typename List>
std::size_t FindWord(const std::string& low, const List& words) {
  std::size_t best = std::string::npos;
  for (std::string_view w : words) {
    for (std::size_t at = low.find(w); at != std::string::npos && at < best; at = low.find(w, at + 1)) {
      std::size_t end = at + w.size();
      if (w == kNoPlural) {
      } else if (low.compare(end, 2, "es") == 0 && (end + 2 == low.size() || !IsWordByte(low[end + 2]))) {
        end += 2;
      } else if (end < low.size() && low[end] == 's') {
        ++end;
      }
      bool before = at == 0 || !IsWordByte(low[at - 1]);
      bool after = end == low.size() || !IsWordByte(low[end]);
      if (before && after) {
        best = at;
        break;
      }
    }
  }
  return best;
}

// The phrases of kModelInstructions no honest text needs even in another
// spelling, looked for in folded prose too ("Ignore  previous", "ɪgnore
// previous", "IGNORE_PREVIOUS"). Not "system prompt" and the like: a schema
// key "systemPrompt" folds to it.
constexpr std::array kFoldedInstructions = {
    "ignore previous", "ignore all previous", "ignore the above", "ignore any previous", "disregard previous",
    "disregard all", "forget previous", "forget all previous", "do not tell the user", "do not mention",
    "do not inform the user", "without telling the user", "without informing the user", "the user must not know",
    "hide this from the user", "not visible to the user",
};


template <typename List>
std::size_t FindAny(const std::string& low, const List& needles) {
  std::size_t best = std::string::npos;
  for (std::string_view n : needles) best = std::min(best, low.find(n));
  return best;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string Excerpt(std::string_view s, std::size_t at) {
  std::size_t start = at > 20 ? at - 20 : 0;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80) --start;
  std::size_t end = std::min(s.size(), start + kExcerptBytes);
  while (end < s.size() && (static_cast<unsigned char>(s[end]) & 0xc0) == 0x80) ++end;
  return VisibleText(s.substr(start, end - start));
}

/// Which rules a Checker applies to the strings it reads.
enum class Reading { kToolListing, kElicitation, kSampling };

struct Checker {
  const std::vector<std::string>& siblings;
  std::vector<PoisonFinding> out;
  Reading reading = Reading::kToolListing;

  void Add(std::string rule, std::string severity, const std::string& field, std::string excerpt) {
    if (out.size() >= kMaxFindings) return;
    out.push_back({std::move(rule), std::move(severity), field.empty() ? "(value)" : field, std::move(excerpt)});
  }

  // path + "." + key, shown visibly; past kMaxFieldBytes the path stops
  // growing ("…" marks the cut), so deep nesting costs no more per level.
  static std::string Child(const std::string& path, std::string_view key) {
    if (path.ends_with("…")) return path;
    std::string shown = VisibleText(key.substr(0, kMaxFieldBytes));
    std::string p = path.empty() ? shown : path + "." + shown;
    if (p.size() <= kMaxFieldBytes) return p;
    std::size_t cut = kMaxFieldBytes;
    while (cut > 0 && (static_cast<unsigned char>(p[cut]) & 0xc0) == 0x80) --cut;
    return p.substr(0, cut) + "…";
  }

  void HiddenUnicode(std::string_view s, const std::string& field) {
    for (std::size_t i = 0; i < s.size();) {
      std::size_t at = i;
      char32_t cp = NextCodePoint(s, &i);
      // A newline or tab in a description is honest formatting; a carriage
      // return can overwrite a line where a listing or a form is shown, so it
      // counts there (the first version skipped it; adversary pass). Text for
      // the model (sampling) may honestly carry CRLF line ends.
      if ((cp != '\r' || reading != Reading::kSampling) && IsInvisibleCodePoint(cp)) {
        Add("hidden_unicode", "high", field, fmt::format("U+{:04X} at byte {}: {}", static_cast<std::uint32_t>(cp), at, Excerpt(s, at)));
        return;  // one per string is enough to block it
      }
    }
  }

  void ModelInstruction(std::string_view s, const std::string& low, const std::string& folded, const std::string& field,
                        bool prose) {
    for (std::string_view phrase : kModelInstructions) {
      if (auto at = low.find(phrase); at != std::string::npos) return Add("model_instruction", "high", field, Excerpt(s, at));
    }
    if (!prose && reading == Reading::kToolListing) return;  // a listing's keys and name: identifiers
    for (std::string_view phrase : kFoldedInstructions) {
      if (auto at = folded.find(phrase); at != std::string::npos) {
        return Add("model_instruction", "high", field, "as read: " + Excerpt(folded, at));
      }
    }
  }

  // What a form must not ask for, and a word spelled in two scripts to pass for another.
  void CredentialRequest(std::string_view s, const std::string& folded, const std::string& field) {
    if (auto at = FindWord(folded, kCredentialWords); at != std::string::npos) {
      Add("credential_request", "high", field, "as read: " + Excerpt(folded, at));
    } else if (auto other = FindAny(std::string(s), kCredentialWordsOtherScripts); other != std::string::npos) {
      Add("credential_request", "high", field, Excerpt(s, other));
    }
    if (auto at = FindMixedScriptWord(s); at != std::string_view::npos) {
      Add("confusable_text", "high", field, Excerpt(s, at));
    }
  }

  void Text(std::string_view s, const std::string& field, bool prose) {
    HiddenUnicode(s, field);
    std::string low = Lower(s);
    std::string folded = FoldForMatching(s);
    ModelInstruction(s, low, folded, field, prose);
    if (reading == Reading::kSampling) return;
    if (reading == Reading::kElicitation) CredentialRequest(s, folded, field);
    // An elicitation is read by the user, who sees a path it names ("your
    // project, e.g. ~/code"); a listing is read by the model, which may fetch it.
    std::size_t path_at = std::min(FindAny(low, kSensitivePaths), FindDotEnv(low));
    if (path_at != std::string::npos && reading == Reading::kToolListing) {
      Add("sensitive_path", "high", field, Excerpt(s, path_at));
    }
    if (auto at = FindAny(low, kUrlSchemes); at != std::string::npos) Add("url", "low", field, Excerpt(s, at));
    if (prose && reading == Reading::kToolListing) {
      for (const auto& name : siblings) {
        if (name.size() >= 3 && s.find(name) != std::string_view::npos) {
          Add("tool_reference", "low", field, Excerpt(s, s.find(name)));
          break;
        }
      }
      if (s.size() > kMaxDescriptionBytes) {
        Add("oversized", "high", field, fmt::format("{} bytes (limit {})", s.size(), kMaxDescriptionBytes));
      }
    }
  }

  // Every string in the tool is read, keys included: a client may render any
  // of them, and a schema's property names reach the model as they are.
  void Walk(const json& v, const std::string& path) {
    // JSON Schema's own identifiers ("$schema": "http://json-schema.org/...") are not prose.
    bool schema_id = path.ends_with("$schema") || path.ends_with("$id") || path.ends_with("$ref");
    if (v.is_string() && schema_id) {
      HiddenUnicode(v.get_ref<const std::string&>(), path);
    } else if (v.is_string()) {
      Text(v.get_ref<const std::string&>(), path, true);
    } else if (v.is_object()) {
      for (const auto& [k, x] : v.items()) {
        // Shown on stderr and by `pins diff`: the key visibly, never its escapes.
        std::string p = Child(path, k);
        Text(k, p + " (key)", false);
        if (path.empty() && k == "name") {
          Text(x.is_string() ? x.get_ref<const std::string&>() : "", p, false);  // its own rule: name_charset
        } else {
          Walk(x, p);
        }
      }
    } else if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        Walk(v[i], path.ends_with("…") || path.size() > kMaxFieldBytes ? path : fmt::format("{}[{}]", path, i));
      }
    }
  }
};

// MCP 2025-11-25 (SEP-986): tool names SHOULD be 1–128 of A-Z a-z 0-9 _ - .
// Anything else (a Cyrillic "а" in "reаd_file", a space, a slash) is a name
// a user cannot tell apart from another one.
bool NameCharsetOk(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

}  // namespace

std::vector<PoisonFinding> CheckTool(const json& tool, const std::vector<std::string>& siblings) {
  std::vector<std::string> others;
  std::string name = tool.contains("name") && tool["name"].is_string() ? tool["name"].get<std::string>() : "";
  for (const auto& s : siblings) {
    if (s != name) others.push_back(s);
  }
  Checker c{others, {}};
  if (!NameCharsetOk(name)) c.Add("name_charset", "high", "name", VisibleText(name));
  c.Walk(tool, "");
  return std::move(c.out);
}

std::vector<PoisonFinding> CheckInputRequest(std::string_view method, const json& params) {
  static const std::vector<std::string> kNoSiblings;
  Checker c{kNoSiblings, {}};
  if (method == "elicitation/create") {
    c.reading = Reading::kElicitation;
  } else if (method == "sampling/createMessage") {
    c.reading = Reading::kSampling;
  } else {
    return {};
  }
  c.Walk(params, "params");
  return std::move(c.out);
}

bool HasHighSeverity(const std::vector<PoisonFinding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const PoisonFinding& f) { return f.severity == "high"; });
}

json ToJson(const PoisonFinding& f) {
  return {{"rule", f.rule}, {"severity", f.severity}, {"field", f.field}, {"excerpt", f.excerpt}};
}

json ToJson(const std::vector<PoisonFinding>& findings) {
  json a = json::array();
  for (const auto& f : findings) a.push_back(ToJson(f));
  return a;
}

std::vector<PoisonFinding> FindingsFromJson(const json& j) {
  std::vector<PoisonFinding> out;
  if (!j.is_array()) return out;
  for (const auto& f : j) {
    if (!f.is_object()) continue;
    out.push_back({f.value("rule", ""), f.value("severity", ""), f.value("field", ""), f.value("excerpt", "")});
  }
  return out;
}

}  // namespace mcpcell
