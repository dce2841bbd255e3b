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

namespace {

// A registry name stands for its pinned source; any other source may still be
// a known entry. A command is none: an entry's source is an npx://, uvx:// or
// docker:// one (ReadSource), so the bundled catalog — 0.9 ms of CPU to parse
// and check, bench/RESULTS.md fourth pass — is not read for a command.
Status FindEntry(const ServerRef& parsed, Decided* d) {
  if (parsed.kind == ServerRef::Kind::kCommand) return {};
  auto catalog = BundledCatalog();
  if (!catalog.ok()) return catalog.error();
  if (parsed.kind != ServerRef::Kind::kRegistry) {
    if (const RegistryEntry* entry = catalog->FindBySource(parsed)) d->entry = *entry;
    return {};
  }
  const RegistryEntry* entry = catalog->Find(parsed.package);
  if (entry == nullptr) return MakeError("find server", parsed.package, NotARegistryName(*catalog, parsed.package));
  d->ref = entry->source;
  d->ref.args = parsed.args;
  d->entry = *entry;
  return {};
}

}  // namespace

Result<Decided> Decide(const ServerRef& parsed, const DecideInputs& in) {
  Decided d;
  d.ref = parsed;
  MCPCELL_TRY(FindEntry(parsed, &d));
  const RegistryEntry* entry = d.entry_ptr();

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
