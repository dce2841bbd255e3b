#pragma once
// TrustFacts: what the policy may know about a server before it runs —
// where it comes from, whether the version is pinned, whether the registry
// knows it and at what tier, who publishes it, and what it asks for.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "source/server_ref.h"

namespace mcpcell {

struct RegistryEntry;

struct TrustFacts {
  ServerRef::Kind kind = ServerRef::Kind::kCommand;  ///< npx | uvx | docker | command (ToString)
  std::string source;           ///< canonical source, e.g. "npx://@scope/pkg@1.2.3"
  std::string name;             ///< package, image, or the command as given
  std::string version;          ///< version spec or tag as given ("" = latest/none)
  bool pinned = false;          ///< exact version, or an image digest
  bool in_registry = false;
  bool registry_pinned = false; ///< in the registry AND at the registry's pinned version/digest
  std::string registry_name;
  std::string registry_tier;    ///< official | verified | community | ""
  std::string publisher_scope;  ///< "@scope" for scoped npm packages, image namespace for docker
  std::string local_path;       ///< command: FindOnHostPath (util/path_search.h), "" if not found
  /// command run by an interpreter (source/interpreted_script.h): the script
  /// as given and its absolute path, or the module (`python -m pkg`).
  std::string script;
  std::string script_path;
  std::string module;
  /// A command line mcpcell could not read: every word that may be what
  /// runs (InterpretedScript::maybe_names), for deny rules by name.
  std::vector<std::string> maybe_names;
  /// A command that is no interpreter the source reads, run with
  /// arguments: its source names the program only, and the arguments may
  /// name the code it runs (`find -exec`, `sed e`, `setarch sh -c`, adv13).
  bool program_with_arguments = false;
  bool requests_network = false;  ///< the profile + flags ask for any outbound access
  bool requests_write = false;    ///< the profile + flags ask for any writable host path
  std::string write_asked_by;     ///< what asked for it: "--write", "profile X", a registry entry's arguments
};

/// Facts about a resolved reference (never kind kRegistry: expand it first).
/// `entry` is the registry entry for this package, or nullptr.
TrustFacts GatherTrustFacts(const ServerRef& ref, const RegistryEntry* entry);

nlohmann::json ToJson(const TrustFacts& facts);

}  // namespace mcpcell
