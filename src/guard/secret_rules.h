#pragma once
// The secret formats the relay looks for (docs/SECRETS.md). Each rule is a
// Vectorscan pattern written from the vendor's documented token format: a
// fixed prefix, a keyword next to the value, or a structure (key blocks,
// JWTs, URLs with a password) that keeps false findings rare on ordinary text.

#include <string>
#include <vector>

namespace mcpcell {

struct SecretRule {
  std::string name;          ///< "github-pat-classic": what the audit log and a mask name
  std::string regex;         ///< Vectorscan (PCRE subset) syntax, matched on decoded text
  bool caseless = false;     ///< keywords in any case (AWS_SECRET_ACCESS_KEY, aws_secret_access_key)
  /// The match may not touch an ASCII letter or digit on either side: a token
  /// is a whole word, not the middle of a longer run of base64.
  bool bounded = true;
  /// Characters (ranges as in a regex class, "A-Za-z0-9/+=") a match is
  /// extended over after it ends: an open-ended token written as a fixed
  /// head plus this tail keeps Vectorscan's start-of-match state small
  /// ("{100,}" with start of match does not compile), and the mask still
  /// covers the whole token.
  std::string tail;
};

/// The built-in rules, in a fixed order (their index is stable within a build).
const std::vector<SecretRule>& BuiltinSecretRules();

}  // namespace mcpcell
