#include "policy/decide.h"

#include <climits>
#include <cstdlib>
#include <filesystem>

namespace mcpcell {
namespace {

std::string ExpandHome(const std::string& p) {
  if (p != "~" && p.rfind("~/", 0) != 0) return p;
  const char* home = std::getenv("HOME");
  return home != nullptr ? std::string(home) + p.substr(1) : p;
}

// The path with symlinks resolved, or "" when it does not exist.
std::string RealPathOrEmpty(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

// --read accepts HOST:CELL; the host side is what names the directory.
std::string HostSide(const std::string& flag) {
  auto colon = flag.rfind(':');
  if (colon != std::string::npos && colon + 1 < flag.size() && flag[colon + 1] == '/') return flag.substr(0, colon);
  return flag;
}

}  // namespace

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

bool IsPathArg(const std::string& arg) { return !arg.empty() && arg[0] != '-'; }

std::string ResolvePathArg(const std::string& arg) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(ExpandHome(arg), ec);
  if (ec) return arg;
  std::string out = abs.lexically_normal().string();
  if (out.size() > 1 && out.back() == '/') out.pop_back();  // "dir/." normalizes to "dir/"
  return out;
}

bool NarrowedByRead(const std::string& dir, const std::vector<std::string>& read_flags) {
  std::string real = RealPathOrEmpty(dir);
  if (real.empty()) return false;
  for (const auto& r : read_flags) {
    if (RealPathOrEmpty(ResolvePathArg(HostSide(r))) == real) return true;
  }
  return false;
}

bool HasWritablePathArg(const std::vector<std::string>& args, const std::vector<std::string>& read_flags) {
  for (const auto& a : args) {
    if (IsPathArg(a) && !NarrowedByRead(ResolvePathArg(a), read_flags)) return true;
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
