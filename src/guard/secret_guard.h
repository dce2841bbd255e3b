#pragma once
// The secret scan of MCP messages, both directions (docs/SECRETS.md): every
// decoded string of a message is scanned with the built-in rules plus the
// profile's; the relay then passes the message (audit), passes it with each
// secret masked (redact) or refuses it (block). Neither a masked message nor
// a refusal contains the secret; the audit record names the rule and carries
// the secret's SHA-256, never its bytes.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "guard/json_strings.h"
#include "guard/secret_policy.h"
#include "util/error.h"

struct hs_scratch;

namespace mcpcell {

class SecretScanner;

/// One secret in a message: the rule, the SHA-256 (hex) of its bytes and its size.
struct SecretFinding {
  std::string rule;
  std::string sha256;
  std::size_t bytes = 0;
};

class SecretGuard {
 public:
  /// Compiles the rules once (the built-in database is shared when the
  /// profile adds or disables none).
  static Result<std::unique_ptr<SecretGuard>> Create(const SecretPolicy& policy);
  ~SecretGuard();

  /// A guard with the same rules (the compiled database is shared, not
  /// compiled again) and its own scratch space and parsers: a guard is not
  /// thread-safe, so each thread that scans needs one (the relay: one per
  /// direction, one for its records).
  Result<std::unique_ptr<SecretGuard>> Fork() const;

  const SecretPolicy& policy() const { return policy_; }

  /// The secrets in the message `root`, in order of position (no copy of
  /// the message is made when it has none).
  std::vector<SecretFinding> Scan(simdjson::dom::element root);
  /// Scan(root) of the message whose JSON text is `line` (what was parsed
  /// into `root`): cleared by one scan of the line's own bytes when
  /// ClearedRaw() can show it clean, else the full scan.
  std::vector<SecretFinding> Scan(simdjson::dom::element root, std::string_view line);
  /// Whether `line` (a JSON text simdjson accepted) holds no secret, shown
  /// without decoding it (json_strings_raw.h); false means "not shown", and
  /// the full scan must decide. Every byte of the line is scanned.
  bool ClearedRaw(std::string_view line);
  /// `root` as JSON with every secret replaced by "[REDACTED:rule]", and the
  /// findings in `*found`. The result scans clean: where a mask and its
  /// neighbours read as a new secret ("postgres://" + mask + "@host" is a
  /// URL with a password, ':' coming from the mask), the mask is widened
  /// over them, and a string that still cannot be made clean is emptied.
  /// nullopt when even that fails (a profile rule that matches the NUL
  /// between strings): the caller must block the message.
  std::optional<std::string> Redact(simdjson::dom::element root, std::vector<SecretFinding>* found);
  /// Redact() of a line the relay built itself (a filtered tools/list);
  /// the line unchanged when it has no secret.
  std::optional<std::string> RedactLine(std::string_view line, std::vector<SecretFinding>* found);
  /// Plain text (a line of a server's stderr, guard/secret_text.cc) with
  /// every secret replaced by "[REDACTED:rule]", the rules' names added to
  /// `*rules`. The result scans clean: where masks and their neighbours
  /// still read as a secret, the whole text becomes one mask.
  std::string RedactText(std::string_view text, std::vector<std::string>* rules);

 private:
  SecretGuard() = default;
  struct Hit;
  std::vector<Hit> Hits(const JsonStrings& strings);
  JsonStrings::Edits FirstEdits(const JsonStrings& strings, const std::vector<Hit>& hits,
                                std::vector<SecretFinding>* found);
  bool Widen(const JsonStrings& before, const JsonStrings& after, const std::vector<Hit>& hits,
             JsonStrings::Edits* edits, std::vector<SecretFinding>* found);
  bool EmptyStrings(const JsonStrings& before, const JsonStrings& after, const std::vector<Hit>& hits,
                    JsonStrings::Edits* edits);

  SecretPolicy policy_;
  std::shared_ptr<const SecretScanner> scanner_;
  std::shared_ptr<hs_scratch> scratch_;
  bool raw_ok_ = false;  ///< every rule stays inside one string (RuleStaysInString): ClearedRaw may answer
  simdjson::dom::parser line_parser_;
  simdjson::dom::parser rescan_parser_;  ///< Redact's check of its own output
};

}  // namespace mcpcell
