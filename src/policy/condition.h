#pragma once
// Policy conditions: facts about a server (see policy/trust_facts.h) and the
// combinators all/any/not. Written in a policy either as a bare string
// ("untrusted_source") or as a one-key object ({"source": ["npx", "uvx"]}).

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "policy/trust_facts.h"
#include "util/error.h"

namespace mcpcell {

struct Condition {
  enum class Kind {
    kAlways, kUntrustedSource, kUnpinnedVersion, kNotInRegistry, kRequestsNetwork,
    kRequestsWrite, kSource, kName, kRegistryTier, kAll, kAny, kNot
  };
  Kind kind = Kind::kAlways;
  std::vector<std::string> values;    ///< kSource: kinds; kName: globs; kRegistryTier: tiers
  std::vector<Condition> children;    ///< kAll/kAny: the list; kNot: exactly one
};

/// What untrusted_source is measured against (from the policy file).
struct TrustSettings {
  std::vector<std::string> trusted_sources;             ///< globs over canonical sources
  std::vector<std::string> trusted_tiers{"official"};   ///< registry tiers trusted when pinned
};

/// Whether the condition held and why, in words a user can act on.
struct ConditionResult {
  bool held = false;
  std::string why;
};

/// Parses a condition at JSON `path` of `origin`; unknown names, wrong types
/// and globs that can never match are errors.
Result<Condition> ParseCondition(const nlohmann::json& j, const std::string& origin,
                                 const std::string& path);

/// Checks a trusted_sources glob: it must be able to match a canonical source.
Status CheckSourceGlob(const std::string& glob, const std::string& origin, const std::string& path);

/// Which way holding the condition moves a run. A deny rule that holds can
/// only make a run stricter, so its `name` conditions match every name the
/// command line may mean (TrustFacts::maybe_names: a line mcpcell could
/// not read); an allow rule's only the names it surely means; an isolate or
/// warn rule may be stricter or looser than the rules after it, so it takes
/// the sure names too. `not` swaps stricter and looser.
enum class RuleSide { kNeutral, kStricter, kLooser };

ConditionResult EvaluateCondition(const Condition& c, const TrustFacts& facts, const TrustSettings& trust,
                                  RuleSide side = RuleSide::kNeutral);

/// Back to the policy syntax (for explain).
nlohmann::json ToJson(const Condition& c);

}  // namespace mcpcell
