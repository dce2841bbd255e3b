#pragma once
// The decision step shared by `mcpcell run` and `mcpcell policy explain`:
// resolve the server against the registry, gather its TrustFacts, evaluate
// the policy, and pick the profile that applies. No side effects.

#include <optional>
#include <string>
#include <vector>

#include "policy/evaluate.h"
#include "policy/policy.h"
#include "profile/path_args.h"  // callers resolve directory arguments as Decide does
#include "profile/permission_profile.h"
#include "registry/catalog.h"
#include "source/server_ref.h"
#include "policy/trust_facts.h"
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

}  // namespace mcpcell
