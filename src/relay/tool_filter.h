#pragma once
// mcpcell.tools.allow / deny from the permission profile: fnmatch(3) globs
// on the decoded tool name; the same for mcpcell.prompts (prompt names) and
// mcpcell.resources (resource URIs; '*' matches '/' too). Deny wins over allow; a non-empty allow list
// denies every name it does not match. Every verdict names the rule, so a
// refusal can say what to change.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpcell {

struct ToolRules {
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  std::string origin;  ///< where the rules come from: "profile fs.json"
  std::string kind = "tool";          ///< what a name is, for refusals: "tool", "prompt", "resource"
  std::string key = "mcpcell.tools";  ///< the profile key the rules are under

  bool empty() const { return allow.empty() && deny.empty(); }
};

class ToolFilter {
 public:
  ToolFilter() = default;
  explicit ToolFilter(ToolRules rules) : rules_(std::move(rules)) {}

  bool active() const { return !rules_.empty(); }
  /// Why `name` may not be listed or called (the rule and how to allow it),
  /// or nullopt when it may. A name with a control character is denied while
  /// rules exist: globs cannot say what such a name is.
  std::optional<std::string> Denial(std::string_view name) const;
  const ToolRules& rules() const { return rules_; }

 private:
  ToolRules rules_;
};

}  // namespace mcpcell
