#pragma once
// Multi-pattern secret matching with Vectorscan (Debian libvectorscan-dev):
// all rules compiled once into one database, every byte of the input scanned
// in one pass, with no size cap. The compiled database is read-only and
// shared; a scratch space is not thread-safe, so each thread that scans has
// its own (the relay: one per direction, one for its audit records).

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "guard/secret_rules.h"
#include "util/error.h"

struct hs_database;
struct hs_scratch;

namespace mcpcell {

class SecretDbCache;

/// One secret found: rule index and the byte range [from, to) of the input.
struct SecretMatch {
  std::size_t rule = 0;
  std::size_t from = 0;
  std::size_t to = 0;
};

class SecretScanner {
 public:
  /// Compiles `rules`; a rule that Vectorscan refuses is named in the error
  /// ("secret rule my-rule: ..."), so a profile's rule can be fixed. With a
  /// `cache`, a database stored there for these rules is loaded instead, and
  /// a fresh compile is stored; any cache problem only means a compile.
  static Result<SecretScanner> Compile(std::vector<SecretRule> rules, const SecretDbCache* cache = nullptr);
  /// The built-in rules, compiled once per process (the first call pays),
  /// through the user's cache (DefaultCache()).
  static Result<std::shared_ptr<const SecretScanner>> Builtin();
  /// The cache in the user's XDG cache directory; null without a home.
  static const SecretDbCache* DefaultCache();

  SecretScanner(SecretScanner&&) noexcept;
  SecretScanner& operator=(SecretScanner&&) noexcept;
  ~SecretScanner();

  /// Every secret in `text`, ordered by start; overlapping matches of one
  /// rule are merged into one range. `scratch` must come from NewScratch().
  /// `breaks` (ascending offsets): where the text had a control character
  /// left out (JsonStrings::breaks()), a word boundary for the whole-word test.
  std::vector<SecretMatch> Scan(std::string_view text, hs_scratch* scratch,
                                std::span<const std::size_t> breaks = {}) const;
  /// Whether any rule matches anywhere in `text` (before the whole-word,
  /// checksum and tail steps, so it is true whenever Scan() finds something,
  /// and sometimes when it does not). Stops at the first match.
  bool AnyMatch(std::string_view text, hs_scratch* scratch) const;
  /// A scratch space for Scan (one per thread that scans).
  Result<std::shared_ptr<hs_scratch>> NewScratch() const;

  const SecretRule& rule(std::size_t i) const { return rules_[i]; }
  std::size_t size() const { return rules_.size(); }

 private:
  SecretScanner() = default;
  std::vector<SecretRule> rules_;
  std::vector<std::array<bool, 256>> tails_;  ///< per rule: the bytes its tail extends over
  std::vector<int> checks_;                   ///< per rule: its TokenCheck (token_checksum.h)
  hs_database* db_ = nullptr;
};

/// Checks that `regex` compiles as a secret rule; the error says why not.
Result<void> CheckSecretRegex(const SecretRule& rule);

}  // namespace mcpcell
