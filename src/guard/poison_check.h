#pragma once
// Tool poisoning checks, local and offline: what in a tool's listing is aimed
// at the model rather than at the user who approves it (Invariant Labs' "tool
// poisoning" and "rug pull" write-ups, 2025). Each finding names the rule, the
// field (JSON path inside the tool) and a visible excerpt. Severity "high"
// findings are what the profile's "poisoning": "block" holds back until
// approved; "low" ones (a sibling tool named, a URL) are only reported,
// because honest servers do that too (server-filesystem: "Use read_text_file
// instead").

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mcpcell {

struct PoisonFinding {
  std::string rule;      ///< hidden_unicode, model_instruction, sensitive_path, url, tool_reference, oversized, name_charset
  std::string severity;  ///< "high" | "low"
  std::string field;     ///< "description", "inputSchema.properties.path.description"
  std::string excerpt;   ///< visible (VisibleText), short
};

/// Longest description (bytes) before "oversized": an order of magnitude
/// above the reference servers' longest (457 bytes, server-filesystem).
inline constexpr std::size_t kMaxDescriptionBytes = 4096;

/// Every finding in `tool` (a tools/list entry). `siblings` are the other
/// tool names the server lists, for tool_reference.
std::vector<PoisonFinding> CheckTool(const nlohmann::json& tool, const std::vector<std::string>& siblings);

bool HasHighSeverity(const std::vector<PoisonFinding>& findings);

nlohmann::json ToJson(const PoisonFinding& f);
nlohmann::json ToJson(const std::vector<PoisonFinding>& findings);
std::vector<PoisonFinding> FindingsFromJson(const nlohmann::json& j);

}  // namespace mcpcell
