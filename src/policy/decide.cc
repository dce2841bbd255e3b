#include "policy/decide.h"

#include <filesystem>

namespace mcpcell {

bool HasPathArg(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    std::error_code ec;
    if (!a.empty() && a[0] == '/' && std::filesystem::exists(a, ec)) return true;
  }
  return false;
}

Result<Decided> Decide(const ServerRef& parsed, const DecideInputs& in) {
  auto catalog = BundledCatalog();
  if (!catalog.ok()) return catalog.error();
  Decided d;
  d.ref = parsed;
  // A registry name stands for its pinned source; any other source may still be a known entry.
  const RegistryEntry* entry = nullptr;
  if (d.ref.kind == ServerRef::Kind::kRegistry) {
    entry = catalog->Find(d.ref.package);
    if (entry == nullptr && in.unknown_name_is_command) {
      d.ref.kind = ServerRef::Kind::kCommand;
    } else if (entry == nullptr) {
      return MakeError("find server", d.ref.package,
                       "not a registry name (see 'mcpcell registry list'); for a package write npx://" +
                           d.ref.package + ", for a command put it after --");
    } else {
      d.ref = entry->source;
      d.ref.args = parsed.args;
    }
  } else {
    entry = catalog->FindBySource(d.ref);
  }
  if (entry != nullptr) d.entry = *entry;

  Result<Policy> policy = in.policy_file ? LoadPolicy(*in.policy_file) : Result<Policy>(DefaultPolicy());
  if (!policy.ok()) return policy.error();
  d.policy = std::move(*policy);
  Result<PermissionProfile> requested = in.profile ? LoadProfile(*in.profile)
                                        : entry    ? Result<PermissionProfile>(entry->permissions)
                                                   : Result<PermissionProfile>(*BuiltinProfile("none"));
  if (!requested.ok()) return requested.error();
  d.requested = std::move(*requested);

  d.facts = GatherTrustFacts(d.ref, entry);
  d.facts.requests_network = d.requested.RequestsNetwork() || in.requests_network_by_flags;
  d.facts.requests_write = d.requested.RequestsWrite() || in.requests_write_by_flags ||
                           (entry != nullptr && entry->path_args == "write" && HasPathArg(d.ref.args));
  d.decision = EvaluatePolicy(d.policy, d.facts);
  if (d.decision.profile) {
    auto rule_profile = LoadProfile(*d.decision.profile);
    if (!rule_profile.ok()) return rule_profile.error();
    d.profile = std::move(*rule_profile);
  } else {
    d.profile = d.requested;
  }
  return d;
}

}  // namespace mcpcell
