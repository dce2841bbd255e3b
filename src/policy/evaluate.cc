#include "policy/evaluate.h"

#include <nlohmann/json.hpp>

namespace mcpcell {
namespace {

std::string RuleLabel(const PolicyRule& r, std::size_t i) {
  std::string label = "rule " + std::to_string(i);
  if (!r.name.empty()) label += " \"" + r.name + "\"";
  return label;
}

}  // namespace

Decision EvaluatePolicy(const Policy& policy, const TrustFacts& facts) {
  Decision d;
  bool decided = false;
  for (std::size_t i = 0; i < policy.rules.size(); ++i) {
    const PolicyRule& r = policy.rules[i];
    RuleTrace t;
    t.index = static_cast<int>(i);
    t.name = r.name;
    t.condition = ToJson(r.condition);
    t.action = ToString(r.action.kind);
    if (decided) {
      t.why = "not evaluated: an earlier rule decided";
      d.trace.push_back(std::move(t));
      continue;
    }
    RuleSide side = r.action.kind == PolicyAction::Kind::kDeny    ? RuleSide::kStricter
                    : r.action.kind == PolicyAction::Kind::kAllow ? RuleSide::kLooser
                                                                  : RuleSide::kNeutral;
    ConditionResult c = EvaluateCondition(r.condition, facts, policy.trust, side);
    t.state = c.held ? RuleTrace::State::kHeld : RuleTrace::State::kNotHeld;
    t.why = c.why;
    d.trace.push_back(std::move(t));
    if (!c.held) continue;
    if (r.action.kind == PolicyAction::Kind::kWarn) {
      d.warnings.push_back(policy.origin + " " + RuleLabel(r, i) + ": " +
                           (r.action.message.empty() ? c.why : r.action.message));
      continue;
    }
    decided = true;
    d.action = r.action.kind;
    d.rule_index = static_cast<int>(i);
    d.rule = RuleLabel(r, i);
    d.profile = r.action.profile;
    d.level = r.action.level.value_or("auto");
    d.message = r.action.message;
    d.reason = policy.origin + " " + d.rule + " (" + ToString(d.action) + "): " + c.why;
  }
  if (!decided) {
    d.action = policy.default_action.kind;
    d.rule = "default";
    d.profile = policy.default_action.profile;
    d.level = policy.default_action.level.value_or("auto");
    d.message = policy.default_action.message;
    d.reason = policy.origin + " default (" + ToString(d.action) + "): no rule decided";
  }
  return d;
}

std::string ToString(RuleTrace::State state) {
  switch (state) {
    case RuleTrace::State::kHeld: return "held";
    case RuleTrace::State::kNotHeld: return "did not hold";
    case RuleTrace::State::kNotReached: return "not reached";
  }
  return "?";
}

nlohmann::json ToJson(const Decision& d) {
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& t : d.trace) {
    nlohmann::json j{{"index", t.index}, {"condition", t.condition}, {"action", t.action},
                     {"result", ToString(t.state)}, {"why", t.why}};
    if (!t.name.empty()) j["name"] = t.name;
    rules.push_back(std::move(j));
  }
  nlohmann::json j{{"action", ToString(d.action)}, {"rule", d.rule}, {"rule_index", d.rule_index},
                   {"level", d.level}, {"reason", d.reason}, {"warnings", d.warnings}, {"rules", rules}};
  if (d.profile) j["profile"] = *d.profile;
  if (!d.message.empty()) j["message"] = d.message;
  return j;
}

}  // namespace mcpcell
