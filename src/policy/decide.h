#pragma once
// The decision step shared by `mcpcell run` and `mcpcell policy explain`:
// resolve the server against the registry, gather its TrustFacts, evaluate
// the policy, and pick the profile that applies. No side effects.

#include <optional>
#include <string>
#include <vector>

#include "policy/evaluate.h"
#include "policy/policy.h"
#include "profile/permission_profile.h"
#include "registry/catalog.h"
#include "source/server_ref.h"
#include "source/trust_facts.h"
#include "util/error.h"

namespace mcpcell {

/// What the decision depends on besides the server itself.
struct DecideInputs {
  std::optional<std::string> policy_file;   ///< --policy; the built-in policy when empty
  std::optional<std::string> profile;       ///< --permission-profile
  bool requests_network_by_flags = false;   ///< --allow-host / --allow-port given
  bool requests_write_by_flags = false;     ///< --write given (or directory args bound writable)
  std::vector<std::string> read_by_flags;   ///< --read: narrows a directory argument to read-only
};

struct Decided {
  ServerRef ref;                         ///< resolved: a registry name becomes its pinned source
  std::optional<RegistryEntry> entry;    ///< the registry entry, when the server is a known one
  Policy policy;
  PermissionProfile requested;           ///< --permission-profile, else the registry default, else none
  TrustFacts facts;
  Decision decision;
  PermissionProfile profile;             ///< the one that applies: the rule's, else `requested`

  const RegistryEntry* entry_ptr() const { return entry ? &*entry : nullptr; }
};

/// Resolves `parsed` and decides. A registry entry whose arguments are
/// directories bound writable (path_args "write") counts as requesting write.
Result<Decided> Decide(const ServerRef& parsed, const DecideInputs& in);

/// What asks `d` for a writable host path ("" = nothing): --write, the
/// requested profile, a registry entry's directory arguments.
std::string WriteAskedBy(const Decided& d, const DecideInputs& in);

/// A registry entry's directory argument, resolved the way the server
/// resolves it (server-filesystem: expand "~", then path.resolve against its
/// cwd) but against the caller's $HOME and cwd, because inside the cell both
/// differ: "." would otherwise name the cell's temporary home.
/// Arguments that start with '-' are the server's flags, not directories.
bool IsPathArg(const std::string& arg);
std::string ResolvePathArg(const std::string& arg);

/// True when `dir` (a resolved directory argument) is also named by one of
/// the user's --read paths: an explicit --read narrows the entry's
/// read-write default to read-only.
bool NarrowedByRead(const std::string& dir, const std::vector<std::string>& read_flags);

/// True when an entry with path_args "write" gets at least one directory
/// argument bound writable (one not narrowed by --read).
bool HasWritablePathArg(const std::vector<std::string>& args, const std::vector<std::string>& read_flags);

}  // namespace mcpcell
