#pragma once
// First-match evaluation of a policy against a server's TrustFacts, keeping
// a trace of every rule for `mcpcell policy explain` and the audit log.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/policy.h"
#include "policy/trust_facts.h"

namespace mcpcell {

struct RuleTrace {
  int index = 0;
  std::string name;
  nlohmann::json condition;
  std::string action;
  enum class State { kHeld, kNotHeld, kNotReached } state = State::kNotReached;
  std::string why;
};

struct Decision {
  PolicyAction::Kind action = PolicyAction::Kind::kIsolate;  ///< never kWarn
  std::string level = "auto";
  std::optional<std::string> profile;  ///< the deciding rule's profile, if it named one
  int rule_index = -1;                 ///< -1: the policy's default decided
  std::string rule;                    ///< "rule 0", "rule 2 \"block-docker\"", "default"
  std::string reason;                  ///< one sentence: what held and what it means
  std::string message;                 ///< the rule's own message, if any
  std::vector<std::string> warnings;   ///< from warn rules that held on the way
  std::vector<RuleTrace> trace;
};

/// Checks rules in order. The first that holds decides, except `warn`, which
/// records its warning and goes on. No rule → the default action.
Decision EvaluatePolicy(const Policy& policy, const TrustFacts& facts);

std::string ToString(RuleTrace::State state);
nlohmann::json ToJson(const Decision& decision);

}  // namespace mcpcell
