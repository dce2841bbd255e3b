// PlanLaunch: the decision pipeline of `mcpcell run`, one way through:
//   ServerRef → (registry) → TrustFacts → policy → Decision → profile + flags
//   → CellSpec (via BuildCellSpec) → LaunchPlan with an explain record.
// Nothing is installed for a denied server; nothing runs here.
#include "cli/launch_plan.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "cell/spec_builder.h"
#include "egress/cell_net.h"
#include "policy/decide.h"
#include "profile/lower.h"
#include "profile/permission_profile.h"
#include "registry/catalog.h"
#include "source/image_ref.h"
#include "source/npx_install.h"
#include "source/server_ref.h"
#include "source/trust_facts.h"
#include "util/units.h"

namespace mcpcell {
namespace {

using nlohmann::json;

void Say(const std::string& line) { std::fprintf(stderr, "mcpcell: %s\n", line.c_str()); }

/// For registry entries whose arguments are directories (filesystem): bind
/// each absolute, existing argument at the same path, read-only or writable.
void AddPathArgs(const RegistryEntry* entry, const std::vector<std::string>& args, RunRequest* req,
                 std::vector<std::string>* notes) {
  if (entry == nullptr || entry->path_args.empty()) return;
  for (const auto& a : args) {
    std::error_code ec;
    if (a.empty() || a[0] != '/' || !std::filesystem::exists(a, ec)) continue;
    (entry->path_args == "write" ? req->write : req->read).push_back(a);
    notes->push_back("registry entry \"" + entry->name + "\" takes directories as arguments: " + a +
                     " is bound " + (entry->path_args == "write" ? "read-write" : "read-only"));
  }
}

/// The system files a networked runtime needs (resolv.conf, certs, gai.conf),
/// added when the cell has a network; BuildCellSpec built for no network. An
/// allow-list cell gets its own resolv.conf (the DNS stub, written by the
/// cell), never the host's.
void AddNetworkSystemMounts(CellSpec* spec) {
  for (auto& m : SystemMounts(true)) {
    if (spec->network.mode == NetworkSpec::Mode::kAllowList && m.target == "/etc/resolv.conf") continue;
    bool have = false;
    for (const auto& existing : spec->mounts) have = have || existing.target == m.target;
    if (!have) spec->mounts.push_back(std::move(m));
  }
}

/// Proxy-aware programs (curl, Python requests, npm, git) speak to the
/// egress proxy directly; others are redirected to it anyway. A value the
/// user set with --env wins. NO_PROXY keeps the cell's own loopback direct.
void AddProxyEnvironment(CellSpec* spec) {
  const std::string http = CellProxyUrl();
  const std::string socks = fmt::format("socks5h://{}:{}", kCellProxyAddress, kCellProxyPort);
  for (const char* k : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}) spec->env.emplace(k, http);
  for (const char* k : {"ALL_PROXY", "all_proxy"}) spec->env.emplace(k, socks);
  for (const char* k : {"NO_PROXY", "no_proxy"}) spec->env.emplace(k, "localhost,127.0.0.1,::1");
}

/// --install-timeout, else the default; a limit of zero would stop every install at once.
Result<std::chrono::milliseconds> InstallTimeout(const RunRequest& req) {
  if (!req.install_timeout) return kDefaultInstallTimeout;
  auto v = ParseDuration(*req.install_timeout);
  if (!v.ok()) return MakeError("--install-timeout", *req.install_timeout, v.error().Message());
  if (v->count() <= 0) return MakeError("--install-timeout", *req.install_timeout, "must be more than 0, e.g. 10m");
  return *v;
}

struct Resolved {
  std::vector<std::string> argv;
  std::optional<InstalledPackage> npx;
};

Result<Resolved> ResolveArgv(const ServerRef& ref, const RunRequest& req) {
  Resolved r;
  switch (ref.kind) {
    case ServerRef::Kind::kCommand:
      r.argv = ref.args;
      return r;
    case ServerRef::Kind::kNpx: {
      auto root = NpxCacheRoot();
      if (!root.ok()) return root.error();
      auto limit = InstallTimeout(req);
      if (!limit.ok()) return limit.error();
      auto tool = MakeNpmTool(*limit);
      auto inst = EnsureNpxPackage(ref, *tool, *root, !req.dry_run);
      if (!inst.ok()) return inst.error();
      r.argv = {"node", inst->bin_path};
      r.argv.insert(r.argv.end(), ref.args.begin(), ref.args.end());
      r.npx = std::move(*inst);
      return r;
    }
    case ServerRef::Kind::kUvx:
      if (!req.dry_run) {
        return MakeError("resolve", CanonicalSource(ref),
                         "uvx:// sources are decided by the policy but cannot be launched yet: installing "
                         "PyPI packages outside the cell is not implemented; install the server yourself "
                         "and run its command after --");
      }
      r.argv = {"uvx", ref.package + (ref.version.empty() ? "" : "==" + ref.version)};
      r.argv.insert(r.argv.end(), ref.args.begin(), ref.args.end());
      return r;
    case ServerRef::Kind::kDocker:
    case ServerRef::Kind::kRegistry:
      r.argv = ref.args;
      return r;
  }
  return r;
}

json PermissionsJson(const RunRequest& merged, const CellSpec& spec, const NetworkPlan& net,
                     const PermissionProfile& profile) {
  json secrets = json::array();
  for (const auto& s : spec.secrets) {
    json j{{"name", s.name}, {"path", "/run/secrets/" + s.name}};
    if (s.env_name) j["env"] = *s.env_name;
    secrets.push_back(std::move(j));
  }
  return json{{"profile", profile.name},
              {"read", merged.read},
              {"write", merged.write},
              {"network", {{"mode", ToString(net.spec.mode)},
                           {"allow_all", net.spec.allow_all},
                           {"allow_hosts", net.spec.allow_hosts},
                           {"allow_ports", net.spec.allow_ports},
                           {"resolve", ToJson(spec)["network"]["resolve"]},
                           {"enforced", net.enforced}}},
              {"secrets", secrets},
              {"tools", {{"allow", profile.ext.tools_allow}, {"deny", profile.ext.tools_deny}}}};
}

}  // namespace

std::string ToString(LaunchPlan::Action action) {
  switch (action) {
    case LaunchPlan::Action::kIsolate: return "isolate";
    case LaunchPlan::Action::kAllow: return "allow";
    case LaunchPlan::Action::kDeny: return "deny";
  }
  return "?";
}

Result<LaunchPlan> PlanLaunch(const RunRequest& req) {
  auto parsed = ParseServerRef(req.server, req.command);
  if (!parsed.ok()) return parsed.error();
  DecideInputs in{req.policy_file, req.profile, !req.allow_host.empty() || !req.allow_port.empty(),
                  !req.write.empty(), false};
  auto decided = Decide(*parsed, in);
  if (!decided.ok()) return decided.error();
  const ServerRef& ref = decided->ref;
  const RegistryEntry* entry = decided->entry_ptr();
  const Policy* policy = &decided->policy;
  const TrustFacts& facts = decided->facts;
  const Decision& decision = decided->decision;
  for (const auto& w : decided->requested.warnings) Say("warning: " + w);

  std::vector<std::string> notes;
  RunRequest with_args = req;
  AddPathArgs(entry, ref.args, &with_args, &notes);

  for (const auto& w : decision.warnings) Say("warning: " + w);

  LaunchPlan plan;
  std::string decided_by = policy->origin + " " + decision.rule;
  plan.rule = decided_by;
  plan.reason = decision.reason;
  plan.level = decision.level;
  switch (decision.action) {
    case PolicyAction::Kind::kDeny: plan.action = LaunchPlan::Action::kDeny; break;
    case PolicyAction::Kind::kAllow: plan.action = LaunchPlan::Action::kAllow; break;
    default: plan.action = LaunchPlan::Action::kIsolate; break;
  }
  if (!decision.message.empty()) plan.reason += " — " + decision.message;
  // --isolate can only make things stricter: it turns allow into isolate, never overrides deny.
  if (req.isolate && plan.action != LaunchPlan::Action::kDeny) {
    plan.action = LaunchPlan::Action::kIsolate;
    if (!req.isolate->empty() && *req.isolate != "auto") plan.level = *req.isolate;
    plan.rule = "--isolate";
    plan.reason = "isolation asked for on the command line (the policy said: " + decision.reason + ")";
  }
  if (ref.kind == ServerRef::Kind::kDocker && plan.level == "auto") plan.level = "container";

  std::string server = ref.kind == ServerRef::Kind::kCommand ? ref.package : CanonicalSource(ref);
  plan.explain = json{{"server", server},
                      {"source", ToJson(*parsed)},
                      {"registry_entry", entry != nullptr ? json(entry->name) : json(nullptr)},
                      {"trust_facts", ToJson(facts)},
                      {"policy", {{"file", policy->origin},
                                  {"trusted_sources", policy->trust.trusted_sources},
                                  {"trusted_tiers", policy->trust.trusted_tiers}}},
                      {"decision", ToJson(decision)},
                      {"action", ToString(plan.action)},
                      {"rule", plan.rule},
                      {"reason", plan.reason},
                      {"level", plan.level},
                      {"warnings", decision.warnings}};
  if (plan.action == LaunchPlan::Action::kDeny) return plan;  // nothing installed, nothing built

  const PermissionProfile* profile = &decided->profile;
  if (decision.profile && req.profile && *decision.profile != *req.profile) {
    Say("note: the policy's " + decision.rule + " sets profile '" + *decision.profile +
        "', which replaces --permission-profile " + *req.profile);
  }

  auto resolved = ResolveArgv(ref, req);
  if (!resolved.ok()) return resolved.error();
  RunRequest merged = MergeProfile(*profile, with_args);
  auto secrets = LowerSecrets(merged.secrets, merged.secret_env);
  if (!secrets.ok()) return secrets.error();
  auto net = LowerNetwork(*profile, req.allow_host, req.allow_port, req.resolve);
  if (!net.ok()) return net.error();

  CellSpec spec;
  if (ref.kind == ServerRef::Kind::kDocker) {
    // The image is the filesystem and names the command: the spec keeps what
    // the user asked for (binds, secrets, env, limits), none of the host's
    // system dirs; PATH and the working directory are the image's (the
    // container cell completes argv, env, workdir and user from it).
    RunRequest image_req = merged;
    image_req.no_auto_mount = true;
    auto built = BuildCellSpec(image_req, resolved->argv, &notes);
    if (!built.ok()) return built.error();
    spec = std::move(*built);
    std::erase_if(spec.mounts, [](const MountSpec& m) { return m.why == "system"; });
    bool path_given = std::any_of(merged.env.begin(), merged.env.end(),
                                  [](const std::string& e) { return e == "PATH" || e.rfind("PATH=", 0) == 0; });
    if (!path_given) spec.env.erase("PATH");
    spec.workdir.clear();
    spec.backend = "docker";
    plan.explain["image"] = {{"reference", ImageRefFrom(ref).Reference()},
                             {"user_given", req.uid.has_value() || req.gid.has_value()}};
    notes.push_back("docker:// sources run in a container cell: the image's Entrypoint runs, with these args "
                    "replacing its Cmd (as docker run IMAGE ARGS); workdir \"\" = the image's");
  } else {
    auto built = BuildCellSpec(merged, resolved->argv, &notes);
    if (!built.ok()) return built.error();
    spec = std::move(*built);
  }
  spec.network = net->spec;
  if (spec.network.mode != NetworkSpec::Mode::kNone) AddNetworkSystemMounts(&spec);
  if (spec.network.mode == NetworkSpec::Mode::kAllowList) AddProxyEnvironment(&spec);
  spec.secrets = std::move(*secrets);
  if (resolved->npx) {
    MountSpec m;
    m.source = resolved->npx->cache_dir;
    m.target = resolved->npx->cache_dir;
    m.writable = false;
    m.optional = !resolved->npx->present;
    m.why = "npx package cache (installed outside the cell)";
    spec.mounts.push_back(std::move(m));
    plan.explain["install"] = {{"package", ref.package}, {"version", resolved->npx->version},
                               {"cache_dir", resolved->npx->cache_dir}, {"bin", resolved->npx->bin_path},
                               {"installed_now", resolved->npx->installed_now},
                               {"present", resolved->npx->present}};
  }
  for (const auto& w : net->warnings) Say(w);
  if (facts.requests_network || spec.network.mode != NetworkSpec::Mode::kNone) {
    Say("network: " + net->enforced);
  }
  if (req.verbose) {
    for (const auto& n : notes) Say(n);
  }
  plan.explain["permissions"] = PermissionsJson(merged, spec, *net, *profile);
  plan.explain["profile"] = ToJson(*profile);
  plan.explain["notes"] = notes;
  plan.spec = std::move(spec);
  return plan;
}

}  // namespace mcpcell
