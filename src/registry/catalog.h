#pragma once
// The registry: a catalog of known MCP servers with a pinned source, a trust
// tier, a default permission profile and the env vars / secrets each needs.
// The bundled catalog is compiled into the binary (catalog_data.cc); the
// format is documented in docs/REGISTRY.md and also reads ToolHive registry
// entries ("image" instead of "source", capitalised tiers, extra metadata).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/permission_profile.h"
#include "source/server_ref.h"
#include "util/error.h"

namespace mcpcell {

struct RegistryEnvVar {
  std::string name;
  std::string description;
  bool required = false;
  bool secret = false;  ///< deliver with --secret NAME=FILE [--secret-env NAME], never --env
  /// ToolHive's "default": set in the cell when neither --env nor the profile
  /// sets NAME (never for a secret: a value in the catalog is no secret).
  std::optional<std::string> default_value;
};

struct RegistryEntry {
  std::string name;
  std::string description;
  ServerRef source;        ///< parsed "source" (or ToolHive "image")
  std::string tier;        ///< official | verified | community (lowercase)
  std::string status;      ///< active | deprecated
  std::string transport;   ///< stdio (others are listed, not run)
  std::string repository_url;
  std::string usage;       ///< what goes after `--`, e.g. "DIR..."
  std::vector<std::string> tags;
  std::vector<RegistryEnvVar> env_vars;
  PermissionProfile permissions;  ///< the default profile
  std::string path_args;   ///< "" | "read" | "write": absolute-path args are bound at the same path
  std::vector<std::string> args;  ///< ToolHive's "args": put before the user's arguments
  /// mcpcell only: a trade-off the entry makes that a user must hear (said on
  /// stderr at every launch), e.g. a browser's own sandbox turned off.
  std::string notice;
  /// mcpcell only: host files the server needs (Debian's Chromium); a missing
  /// one is a warning at launch naming `requires_hint`, e.g. the package to install.
  std::vector<std::string> requires_paths;
  std::string requires_hint;
};

class Catalog {
 public:
  explicit Catalog(std::vector<RegistryEntry> entries) : entries_(std::move(entries)) {}
  /// The entry called `name`, or nullptr.
  const RegistryEntry* Find(std::string_view name) const;
  /// The entry whose source has the same kind and package (any version), or nullptr.
  const RegistryEntry* FindBySource(const ServerRef& ref) const;
  const std::vector<RegistryEntry>& entries() const { return entries_; }
  /// Names a user may have meant by `word`: the nearest names by spelling,
  /// else entries whose description or tags mention it. Never a package name:
  /// an arbitrary npm package is not a suggestion to run.
  std::vector<std::string> Suggest(const std::string& word) const;

 private:
  std::vector<RegistryEntry> entries_;
};

/// One sentence for a name that is not in `catalog`: the nearest registry
/// names, and how to run a command instead.
std::string NotARegistryName(const Catalog& catalog, const std::string& word);

/// Parses a catalog document {"servers": {NAME: ENTRY, ...}}; errors name the
/// origin and the JSON path.
Result<Catalog> ParseCatalog(std::string_view text, const std::string& origin);

/// The catalog compiled into mcpcell.
Result<Catalog> BundledCatalog();

/// The raw bundled JSON (for `mcpcell registry list --json` and tests).
std::string_view BundledCatalogJson();

}  // namespace mcpcell
