#include "policy/decide.h"

namespace mcpcell {

// Names what asks for a writable host path, so a deny blames the right thing.
std::string WriteAskedBy(const Decided& d, const DecideInputs& in) {
  std::vector<std::string> by;
  if (in.requests_write_by_flags) by.push_back("--write");
  if (d.requested.RequestsWrite()) by.push_back("the permission profile '" + d.requested.name + "'");
  if (d.entry && d.entry->path_args == "write" && HasWritablePathArg(d.ref.args, in.read_by_flags)) {
    std::string dirs;
    for (const auto& a : d.ref.args) {
      if (IsPathArg(a) && !NarrowedByRead(ResolvePathArg(a), in.read_by_flags)) dirs += (dirs.empty() ? "" : " ") + a;
    }
    by.push_back("registry entry \"" + d.entry->name + "\", which binds its directory arguments read-write (" + dirs +
                 "; --read DIR keeps one read-only)");
  }
  std::string out;
  for (std::size_t i = 0; i < by.size(); ++i) out += (i ? " and " : "") + by[i];
  return out;
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
    if (entry == nullptr) {
      return MakeError("find server", d.ref.package, NotARegistryName(*catalog, d.ref.package));
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
  d.facts.write_asked_by = WriteAskedBy(d, in);
  d.facts.requests_write = !d.facts.write_asked_by.empty();
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
