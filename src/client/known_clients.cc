#include "client/known_clients.h"

namespace mcpcell {

std::string ToString(KnownClient::Format f) {
  switch (f) {
    case KnownClient::Format::kJson: return "JSON";
    case KnownClient::Format::kJsonc: return "JSONC";
    case KnownClient::Format::kToml: return "TOML";
    case KnownClient::Format::kYaml: return "YAML";
  }
  return "?";
}

std::vector<KnownClient> KnownClients(const std::string& home, const std::string& xdg) {
  using F = KnownClient::Format;
  // JSON files are read as JSONC throughout: a comment or trailing comma in a
  // strict-JSON client's file is the user's, and is kept too.
  return {
      // Claude Desktop has no official Linux build; the community builds and
      // guides use Electron's appData: ~/.config/Claude (claudecodeguides.com
      // "claude_desktop_config.json: Complete Guide"; explainmcp.com). Key: mcpServers.
      {"claude-desktop", "Claude Desktop", xdg + "/Claude/claude_desktop_config.json", F::kJsonc, "mcpServers"},
      // Claude Code: ~/.claude.json, user scope in top-level mcpServers and
      // local scope (the default of `claude mcp add`) in
      // projects.<dir>.mcpServers (code.claude.com/docs/en/mcp, "MCP
      // installation scopes"). The project scope's .mcp.json: use --file.
      {"claude-code", "Claude Code", home + "/.claude.json", F::kJsonc, "mcpServers", true},
      // Cursor: global ~/.cursor/mcp.json, mcpServers (cursor.com/docs/mcp).
      {"cursor", "Cursor", home + "/.cursor/mcp.json", F::kJsonc, "mcpServers"},
      // VS Code: the user profile's mcp.json, top-level "servers"
      // (code.visualstudio.com/docs/copilot/reference/mcp-configuration); the
      // user profile on Linux is ~/.config/Code/User.
      {"vscode", "VS Code", xdg + "/Code/User/mcp.json", F::kJsonc, "servers"},
      // Windsurf: ~/.codeium/windsurf/mcp_config.json, mcpServers; remote
      // servers use serverUrl (docs.windsurf.com/windsurf/cascade/mcp).
      {"windsurf", "Windsurf", home + "/.codeium/windsurf/mcp_config.json", F::kJsonc, "mcpServers"},
      // Cline (VS Code extension saoudrizwan.claude-dev): its global storage
      // (docs.cline.bot MCP configuration; syllago.dev Cline provider page).
      {"cline", "Cline", xdg + "/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
       F::kJsonc, "mcpServers"},
      // Zed: settings.json (JSONC) under context_servers, each with
      // command/args/env (zed.dev/docs/ai/mcp).
      {"zed", "Zed", xdg + "/zed/settings.json", F::kJsonc, "context_servers"},
      // Gemini CLI: ~/.gemini/settings.json, mcpServers; remote = url/httpUrl
      // (github.com/google-gemini/gemini-cli docs/tools/mcp-server.md).
      {"gemini", "Gemini CLI", home + "/.gemini/settings.json", F::kJsonc, "mcpServers"},
      // Codex: ~/.codex/config.toml, one [mcp_servers.NAME] table each
      // (developers.openai.com/codex/mcp; openai/codex docs/config.md).
      {"codex", "Codex", home + "/.codex/config.toml", F::kToml, "mcp_servers"},
      // Goose: ~/.config/goose/config.yaml, "extensions" map with type: stdio,
      // cmd, args, envs (block.github.io/goose/docs/guides/config-files).
      {"goose", "Goose", xdg + "/goose/config.yaml", F::kYaml, "extensions"},
  };
}

}  // namespace mcpcell
