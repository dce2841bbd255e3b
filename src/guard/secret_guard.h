#pragma once
// The secret scan of MCP messages, both directions (docs/SECRETS.md): every
// decoded string of a message is scanned with the built-in rules plus the
// profile's; the relay then passes the message (audit), passes it with each
// secret masked (redact) or refuses it (block). Neither a masked message nor
// a refusal contains the secret; the audit record names the rule and carries
// the secret's SHA-256, never its bytes.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

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

  const SecretPolicy& policy() const { return policy_; }

  /// The secrets in the message `root`, in order of position (no copy of
  /// the message is made when it has none).
  std::vector<SecretFinding> Scan(simdjson::dom::element root);
  /// `root` as JSON with every secret replaced by "[REDACTED:rule]", and the
  /// findings in `*found`.
  std::string Redact(simdjson::dom::element root, std::vector<SecretFinding>* found);
  /// Redact() of a line the relay built itself (a filtered tools/list);
  /// the line unchanged when it has no secret.
  std::string RedactLine(std::string_view line, std::vector<SecretFinding>* found);

 private:
  SecretGuard() = default;
  struct Hit;
  std::vector<Hit> Hits(const class JsonStrings& strings);

  SecretPolicy policy_;
  std::shared_ptr<const SecretScanner> scanner_;
  std::shared_ptr<hs_scratch> scratch_;
  simdjson::dom::parser line_parser_;
};

}  // namespace mcpcell
