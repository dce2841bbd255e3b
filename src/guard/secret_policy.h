#pragma once
// The secret scan's settings (profile key mcpcell.secrets, docs/PROFILES.md),
// without the scanner: the relay's config and the profile include this.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "guard/secret_rules.h"

namespace mcpcell {

enum class SecretMode { kOff, kAudit, kRedact, kBlock };

/// "off", "audit", "redact", "block"; nullopt for anything else.
std::optional<SecretMode> ParseSecretMode(std::string_view s);
const char* SecretModeName(SecretMode m);

/// What the profile says (mcpcell.secret_scan); the defaults protect a user who
/// configures nothing: redact both ways.
struct SecretPolicy {
  SecretMode to_server = SecretMode::kRedact;  ///< client → server: tool arguments, answers to the server's requests
  SecretMode to_client = SecretMode::kRedact;  ///< server → client: results, errors, notifications
  std::vector<SecretRule> rules;               ///< the profile's own rules, added to the built-in ones
  std::vector<std::string> disable;            ///< built-in rule names turned off
  std::string origin = "built-in default";     ///< "profile fs.json": where the policy came from, for messages
};

}  // namespace mcpcell
