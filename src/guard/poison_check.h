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

/// Every finding in what a server asks of the client: `method` is
/// elicitation/create (asks the user: a question, a form, a URL) or
/// sampling/createMessage (asks the client's model), sent as a request (2025
/// era) or as an inputRequests entry of an input_required answer
/// (2026-07-28); `params` its params. An elicitation that asks for a
/// password, token, key or card number is "credential_request" (high): the
/// MCP specification says servers MUST NOT request sensitive information
/// through elicitation, so a form asking for one is how a hostile server
/// phishes. Hidden Unicode and instructions aimed at the model are high in
/// both; URLs (low) are read in elicitations only; sensitive paths in
/// neither (an elicitation is read by the user, who sees the path, and a
/// sampling prompt honestly quotes the files it is about). Other methods
/// (roots/list) carry nothing to check.
std::vector<PoisonFinding> CheckInputRequest(std::string_view method, const nlohmann::json& params);

bool HasHighSeverity(const std::vector<PoisonFinding>& findings);

nlohmann::json ToJson(const PoisonFinding& f);
nlohmann::json ToJson(const std::vector<PoisonFinding>& findings);
std::vector<PoisonFinding> FindingsFromJson(const nlohmann::json& j);

}  // namespace mcpcell
