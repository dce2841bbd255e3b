#pragma once
// A policy file: ordered rules, each a condition and an action; the first
// rule whose condition holds decides (a `warn` rule records and goes on); a
// `default` action applies when none does. Format: docs/POLICY.md.
//
//   { "trusted_sources": ["npx://@modelcontextprotocol/*"],
//     "rules": [{ "condition": "untrusted_source", "action": "isolate" }],
//     "default": "isolate" }

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "policy/condition.h"
#include "util/error.h"

namespace mcpcell {

struct PolicyAction {
  enum class Kind { kIsolate, kDeny, kWarn, kAllow };
  Kind kind = Kind::kIsolate;
  std::optional<std::string> profile;  ///< isolate only: built-in name or resolved file path
  std::optional<std::string> level;    ///< isolate only: native | container | gvisor | auto
  std::string message;                 ///< optional words for the user (deny/warn)
};

struct PolicyRule {
  std::string name;  ///< optional label
  Condition condition;
  PolicyAction action;
};

struct Policy {
  std::string origin;  ///< file path, or "built-in default"
  TrustSettings trust;
  std::vector<PolicyRule> rules;
  PolicyAction default_action;
};

/// Parses policy text. Syntax errors carry ORIGIN:LINE:COLUMN; everything
/// else the JSON path and what was expected. Profile files named by rules are
/// resolved against `base_dir` and loaded (so a bad one is refused now).
Result<Policy> ParsePolicy(std::string_view text, const std::string& origin,
                           const std::string& base_dir = ".");

/// Reads and parses a policy file.
Result<Policy> LoadPolicy(const std::string& path);

/// The policy used when no --policy is given: isolate everything.
std::string_view DefaultPolicyJson();
Policy DefaultPolicy();

std::string ToString(PolicyAction::Kind kind);
nlohmann::json ToJson(const PolicyAction& action);

}  // namespace mcpcell
