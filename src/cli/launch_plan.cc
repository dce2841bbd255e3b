// PlanLaunch: the decision pipeline of `mcpcell run`, one way through:
//   ServerRef → (registry) → TrustFacts → policy → Decision → profile + flags
//   → CellSpec (via BuildCellSpec) → LaunchPlan with an explain record.
// Nothing is installed for a denied server; nothing runs here.
#include "cli/launch_plan.h"
#include "cli/pins_plan.h"
#include "util/cache_dir.h"
#include "util/home_path.h"
#include "util/code_injecting_env.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cell/backend.h"
#include "cell/cell_network.h"
#include "cell/cell_record.h"
#include "cell/credentials.h"
#include "cell/hidden_dirs.h"
#include "cell/mount_plan.h"
#include "cell/script_cell.h"
#include "cell/spec_builder.h"
#include "core/exit_codes.h"
#include "policy/decide.h"
#include "profile/lower.h"
#include "profile/permission_profile.h"
#include "util/path_search.h"
#include "util/process_environment.h"
#include "util/state_dir.h"
#include "util/terminal_text.h"
#include "util/units.h"
#include "registry/catalog.h"
#include "source/host_tool.h"
#include "source/image_ref.h"
#include "guard/secret_check.h"
#include "source/npx_install.h"
#include "source/install_origin.h"
#include "source/public_sources.h"
#include "source/registry_url.h"
#include "source/uvx_install.h"
#include "source/server_ref.h"
#include "policy/trust_facts.h"
#include "util/units.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

using nlohmann::json;

/// For registry entries whose arguments are directories (filesystem): each
/// one is resolved against the caller's cwd and $HOME (ResolvePathArg), bound
/// at that path — read-write for path_args "write" unless the user's own
/// --read names it — and handed to the server as the absolute path. One that
/// cannot be bound is refused: skipping it would leave the server writing
/// into the cell's temporary home, lost at exit.
Status BindPathArgs(const RegistryEntry* entry, bool plain, ServerRef* ref, RunRequest* req,
                    std::vector<std::string>* notes) {
  if (plain) return {};  // no cell to bind into: the server sees the host's paths as given
  if (entry == nullptr || entry->path_args.empty()) return {};
  const std::vector<std::string> user_read = req->read;
  for (auto& a : ref->args) {
    if (!IsPathArg(a)) continue;
    std::string dir = ResolvePathArg(a);
    std::string shown = dir == a ? a : a + " (" + dir + ")";
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) {
      return MakeError("directory argument", shown,
                       "does not exist, so it cannot be bound into the cell (the server would write into the "
                       "cell's temporary home, lost at exit); create it first (mkdir -p " + dir +
                       ") or name an existing directory");
    }
    // The same refusals as --read/--write, worded for what the user typed.
    if (IsReservedTarget(dir)) return MakeError("directory argument", shown, "cannot be bound: reserved for the cell");
    if (dir == "/tmp" || dir == CellSpec().home) {
      return MakeError("directory argument", shown, "cannot be bound: the cell has its own " + dir +
                                                        " (a tmpfs); name a directory below it, e.g. " + dir + "/work");
    }
    if (!req->force_credentials) {
      char real[PATH_MAX];
      auto ok = CheckNotCredential(::realpath(dir.c_str(), real) != nullptr ? std::string(real) : dir);
      if (!ok) return MakeError("directory argument", shown, ok.error().Message());
    }
    bool narrowed = NarrowedByRead(dir, user_read);
    bool writable = entry->path_args == "write" && !narrowed;
    // Already bound by the user's own --read/--write: once is enough.
    if (!narrowed && !NarrowedByRead(dir, req->write)) (writable ? req->write : req->read).push_back(dir);
    notes->push_back("registry entry \"" + entry->name + "\" takes directories as arguments: " + shown + " is bound " +
                     (writable ? "read-write" : "read-only") +
                     (entry->path_args == "write" && !writable ? " (narrowed by --read)" : ""));
    a = dir;
  }
  return {};
}

// A variable the registry entry says the server needs, which nothing of
// this run passes (--env, the profile's env, --secret-env): said before the
// server fails asking for it (adv8: only `registry info` showed it).
void SayMissingRequiredVars(const RegistryEntry& entry, const RunRequest& merged, bool plain) {
  auto passed = [&](const std::string& name) {
    for (const auto& e : merged.env) {
      if (e == name || e.rfind(name + "=", 0) == 0) return true;
    }
    for (const auto& e : merged.secret_env) {
      std::size_t eq = e.find('=');
      if ((eq == std::string::npos ? e : e.substr(eq + 1)) == name) return true;
    }
    return false;
  };
  for (const auto& v : entry.env_vars) {
    if (!v.required || passed(v.name)) continue;
    // A run without a cell takes no --secret (RefuseCellFlagsOnAPlainRun).
    std::string how = v.secret && !plain ? "--secret " + v.name + "=FILE --secret-env " + v.name : "--env " + v.name;
    Say("warning: " + entry.name + " needs " + v.name + (v.description.empty() ? "" : " (" + v.description + ")") +
        ", which this run does not pass; pass it with " + how);
  }
}

/// What a registry entry carries for the server to start in a cell (browser
/// servers: the browser's path, headless, its own sandbox off): the entry's
/// arguments go before the user's; its env defaults go first, so the
/// profile's env and --env of the same name win. Its notice is said on every
/// launch: a trade-off the user must hear about, not only with -v.
void ApplyEntryDefaults(const RegistryEntry* entry, ServerRef* ref, RunRequest* merged, bool plain,
                        std::vector<std::string>* notes) {
  if (entry == nullptr) return;
  if (!entry->args.empty()) {
    ref->args.insert(ref->args.begin(), entry->args.begin(), entry->args.end());
    std::string shown;
    for (const auto& a : entry->args) shown += (shown.empty() ? "" : " ") + a;
    notes->push_back("registry entry \"" + entry->name + "\" puts its arguments first: " + shown);
  }
  std::vector<std::string> defaults;
  for (const auto& v : entry->env_vars) {
    if (v.default_value) defaults.push_back(v.name + "=" + *v.default_value);
  }
  merged->env.insert(merged->env.begin(), defaults.begin(), defaults.end());
  SayMissingRequiredVars(*entry, *merged, plain);
  if (!entry->notice.empty()) Say(entry->name + ": " + entry->notice);
  for (const auto& p : entry->requires_paths) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) {
      Say("warning: " + entry->name + " needs " + p + ", which this host does not have; its tools that use it will fail" +
          (entry->requires_hint.empty() ? "" : " (" + entry->requires_hint + ")"));
    }
  }
}

/// Files mcpcell reads or writes for itself must be out of the cell's reach:
/// a cell that can write its own audit log forges the record, one that can
/// write its policy or profile widens its next launch (issue 10 item 10).
Status CheckRecordsOutOfReach(const CellSpec& spec, const RunRequest& req, const Decision& decision) {
  // Each check below refuses only for a writable bind (CheckNotWritableByCell,
  // CheckDirNotWritableByCell): a cell without one reaches none of these
  // files, and the ~20 paths' realpath and stat calls (0.45 ms of CPU per
  // launch, bench/RESULTS.md fourth pass) are skipped.
  if (std::none_of(spec.mounts.begin(), spec.mounts.end(),
                   [](const MountSpec& m) { return m.kind == MountSpec::Kind::kBind && m.writable; })) {
    return {};
  }
  if (req.audit_log) MCPCELL_TRY(CheckNotWritableByCell(spec, "--audit-log", *req.audit_log));
  if (req.policy_file) MCPCELL_TRY(CheckNotWritableByCell(spec, "--policy", *req.policy_file));
  if (req.profile && !BuiltinProfile(*req.profile)) {
    MCPCELL_TRY(CheckNotWritableByCell(spec, "--permission-profile", *req.profile));
  }
  if (decision.profile && !BuiltinProfile(*decision.profile)) {
    MCPCELL_TRY(CheckNotWritableByCell(spec, "the policy's profile", *decision.profile));
  }
  // A secret file the cell can re-point (a symlinked directory on its way)
  // would make mcpcell read another file for it into /run/secrets: every
  // secret the cell gets, the profile's mcpcell.secrets as well as --secret
  // (adv8: a profile's secret below a --write directory read /root's files).
  for (const auto& s : spec.secrets) {
    bool flag = std::any_of(req.secrets.begin(), req.secrets.end(),
                            [&](const std::string& f) { return f.rfind(s.name + "=", 0) == 0; });
    std::string what = flag ? "--secret " + s.name : "the profile's mcpcell.secrets." + s.name;
    MCPCELL_TRY(CheckNotWritableByCell(spec, what, s.host_file));
  }
  // The npx cache holds the code of every npx:// server: a cell that can
  // write it (--write ~, ~/.cache) runs its own code in a later run of any
  // of them, with that server's grants (found by the adversary review).
  if (auto cache = NpxCacheRoot(); cache.ok()) MCPCELL_TRY(CheckDirNotWritableByCell(spec, "mcpcell's npx cache", *cache));
  if (auto cache = UvxCacheRoot(); cache.ok()) MCPCELL_TRY(CheckDirNotWritableByCell(spec, "mcpcell's uvx cache", *cache));
  // All of mcpcell's own state and caches, wherever this run's environment
  // and the account's defaults put them, whether this run uses them or not:
  // the compiled secret rules (Vectorscan's deserializer is not built for
  // hostile input, and the file's key and hash are public), the pins (a
  // cell that writes them approves its own rug pull), the grant scans (a
  // forged one hides a socket from the masks), the packages.
  // What the host's pip and npm read when they install, outside every cell,
  // and the default cache whatever XDG_CACHE_HOME this run has (another
  // run's cell must not plant what the default environment runs). First:
  // their refusals name the narrower thing.
  for (const auto& in : HostToolInputs()) MCPCELL_TRY(CheckNotWritableByCell(spec, in.what, in.path));
  for (const auto& own : McpcellOwnDirs()) {
    if (!own.others) MCPCELL_TRY(CheckDirNotWritableByCell(spec, own.what, own.path));  // theirs: masked only
  }
  return {};
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
  std::string plain_exe;  ///< LaunchPlan::plain_exe
  std::optional<InstalledPackage> installed;  ///< an npx:// or uvx:// package in the cache
};

// Host directories the cell may write: npm is never run from one of them.
std::vector<std::string> CellWritableHostDirs(const RunRequest& merged) {
  std::vector<std::string> out;
  for (const auto& w : merged.write) {
    std::string host = BindHostPath(w);
    if (!host.empty()) out.push_back(host);
  }
  return out;
}

// An install that failed, said as one: what, and what to check.
Error InstallError(Error e, const ServerRef& ref, const std::string& setting) {
  // A package's install script failed in its cell: its own error says what
  // to do (its last lines, --install-scripts=skip); the network is not it.
  const bool script = e.what.rfind("run the install scripts of", 0) == 0;
  e.detail += e.detail.empty() ? "" : "; ";
  e.detail += "could not install " + CanonicalSource(ref) + " (" + e.what + (e.path.empty() ? "" : " " + e.path) +
              (script ? ")" : "): check the network and " + setting + ", or install it yourself and run its command after --");
  e.what = kInstallServer;
  e.path.clear();
  return e;
}

/// `npm`: the launch's npm for an npx:// source (LaunchNpm), else null.
Result<Resolved> ResolveArgv(const ServerRef& ref, const RunRequest& req, const RunRequest& merged, PackageTool* npm) {
  Resolved r;
  if (req.install_scripts && ref.kind != ServerRef::Kind::kNpx) {
    return MakeError("--install-scripts", *req.install_scripts,
                     "applies to npx:// sources only (npm install scripts); this server's source is " + ToString(ref.kind));
  }
  if (!req.npm_scopes.empty() && ref.kind != ServerRef::Kind::kNpx) {
    return MakeError("--npm-scope", req.npm_scopes.front(),
                     "applies to npx:// sources only (npm's scoped registries); this server's source is " +
                         ToString(ref.kind));
  }
  // Only npx:// and uvx:// sources install anything (adv8: accepted, even as "bogus", and ignored).
  if (req.install_timeout && ref.kind != ServerRef::Kind::kNpx && ref.kind != ServerRef::Kind::kUvx) {
    return MakeError("--install-timeout", *req.install_timeout,
                     "applies to npx:// and uvx:// sources only (they are installed first); this server's source is " +
                         ToString(ref.kind));
  }
  switch (ref.kind) {
    case ServerRef::Kind::kCommand:
      r.argv = ref.args;
      return r;
    case ServerRef::Kind::kNpx: {
      auto root = NpxCacheRoot();
      if (!root.ok()) return root.error();
      auto limit = InstallTimeout(req);
      if (!limit.ok()) return limit.error();
      auto mode = ParseInstallScriptsMode(req.install_scripts.value_or("cell"));
      if (!mode.ok()) return mode.error();
      auto script_cell = MakeNativeScriptCell();
      auto inst = EnsureNpxPackage(ref, *npm, *root, !req.dry_run, NpxScripts{*mode, script_cell.get(), *limit, HoldsBuiltinSecret, CacheDirInUse});
      if (!inst.ok()) return InstallError(inst.error(), ref, "npm's registry setting");
      r.argv = {"node", inst->bin_path};
      r.argv.insert(r.argv.end(), ref.args.begin(), ref.args.end());
      r.installed = std::move(*inst);
      return r;
    }
    case ServerRef::Kind::kUvx: {
      auto root = UvxCacheRoot();
      if (!root.ok()) return root.error();
      auto limit = InstallTimeout(req);
      if (!limit.ok()) return limit.error();
      auto tool = MakePipTool(CellWritableHostDirs(merged), *limit);
      auto inst = EnsureUvxPackage(ref, *tool, *root, !req.dry_run);
      if (!inst.ok()) return InstallError(inst.error(), ref, "pip's index setting (pip config list; PIP_INDEX_URL)");
      // The venv's python (a link to Debian's, which the cell mounts) runs
      // the console script: its "#!" names the install directory, renamed since.
      r.argv = {inst->interpreter, inst->bin_path};
      r.argv.insert(r.argv.end(), ref.args.begin(), ref.args.end());
      r.installed = std::move(*inst);
      return r;
    }
    case ServerRef::Kind::kDocker:
    case ServerRef::Kind::kRegistry:
      r.argv = ref.args;
      return r;
  }
  return r;
}

json PermissionsJson(const RunRequest& merged, const CellSpec& spec, const NetworkPlan& net,
                     const PermissionProfile& profile, bool plain) {
  if (plain) {  // nothing of a profile holds without a cell (adv10: explain called its allow-list enforced)
    return json{{"profile", profile.name},
                {"network", {{"mode", "host"}, {"enforced", "not restricted: the policy runs this server without a cell"}}},
                {"files", "the host's, as the user's own"}};
  }
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

// What the cell would refuse later, refused now so --dry-run and explain
// refuse it too, with the same exit code and no cell set up: a server command
// or script not in the cell (an npx package not installed yet, under
// --dry-run, has no files to look for), a mount target named twice.
Status CheckPlannedCell(const ServerRef& ref, const RunRequest& req, const Resolved& resolved, const CellSpec& spec) {
  bool installed = !resolved.installed || resolved.installed->present;
  if (ref.kind != ServerRef::Kind::kDocker && !req.no_auto_mount && installed) {
    MCPCELL_TRY(CheckServerPaths(spec));
    for (const auto& w : UnreachableRelativeArgs(spec)) Say("warning: " + w);
  }
  auto planned = PlanMounts(spec.mounts);
  if (!planned) return planned.error();
  return {};
}

}  // namespace

/// MCP clients pass argv without a shell, so a `~` in a config's args reaches
/// mcpcell as it is (issue 18 item 14): expand it in mcpcell's own path options.
void ExpandPathOptions(RunRequest* req) {
  for (auto* opt : {&req->audit_log, &req->policy_file, &req->profile}) {
    if (*opt) **opt = ExpandHome(**opt);
  }
  for (auto* list : {&req->read, &req->write, &req->system_mounts}) {
    for (auto& p : *list) p = ExpandHome(p);
  }
  for (auto& s : req->secrets) {
    auto eq = s.find('=');
    if (eq != std::string::npos) s = s.substr(0, eq + 1) + ExpandHome(s.substr(eq + 1));
  }
}

Status NormalizeRequest(RunRequest* req) {
  ExpandPathOptions(req);
  bool is_level = req->isolate && ParseIsolationLevel(*req->isolate).has_value();
  if (req->isolate && !req->isolate->empty() && !is_level) {
    // `--isolate npx://pkg`: the optional level swallowed the SERVER.
    if (req->server) {
      return MakeError("--isolate", *req->isolate, std::string("unknown level (use ") + kIsolationLevelList + ")");
    }
    req->server = *req->isolate;
    req->isolate = "auto";
  }
  if (!req->server && req->command.empty()) {
    return MakeError("nothing to run", "", "give a SERVER or a command after --");
  }
  return {};
}

int ExitCodeFor(const Error& plan_error) {
  if (plan_error.what == kNotInCell) return kExitNotFound;
  if (plan_error.what == kInstallServer) return kExitSetupFailed;
  return kExitUsage;
}

std::string ToString(LaunchPlan::Action action) {
  switch (action) {
    case LaunchPlan::Action::kIsolate: return "isolate";
    case LaunchPlan::Action::kAllow: return "allow";
    case LaunchPlan::Action::kDeny: return "deny";
  }
  return "?";
}

// The relay's limits on calls (tools/call, resources/read, prompts/get), from
// flags or the profile's mcpcell block (MergeProfile put them in `req`).
static Status LowerRelayLimits(const RunRequest& req, RelaySpec* out) {
  if (req.call_rate) {
    auto rate = ParseRate(*req.call_rate);
    if (!rate.ok()) return MakeError("--call-rate", *req.call_rate, rate.error().detail);
    out->call_rate = rate->per_second;
    out->call_burst = rate->burst;
  }
  if (req.max_inflight) {
    auto n = ParseSize(*req.max_inflight);
    if (!n.ok() || *n == 0 || *n > 4096 || req.max_inflight->find_first_not_of("0123456789") != std::string::npos) {
      return MakeError("--max-inflight", *req.max_inflight, "expected a number of calls from 1 to 4096");
    }
    out->max_inflight = *n;
  }
  if (req.call_timeout) {
    auto t = ParseDuration(*req.call_timeout);
    if (!t.ok()) return MakeError("--call-timeout", *req.call_timeout, t.error().detail);
    if (t->count() <= 0) return MakeError("--call-timeout", *req.call_timeout, "must be more than 0, e.g. 30s");
    out->call_timeout = *t;
  }
  out->audit_content = req.audit_content;
  if (req.audit_content && !req.audit_log) {
    return MakeError("--audit-content", "", "there is no --audit-log to put the content in; add --audit-log FILE");
  }
  if (req.audit_content && req.relay == "off") {
    return MakeError("--audit-content", "", "calls are read only by the relay; drop --relay=off");
  }
  bool limits = req.call_rate || req.max_inflight || req.call_timeout || req.max_message;
  if (limits && req.relay == "off") {
    return MakeError("--relay=off", "", "call limits (--call-rate, --max-inflight, --call-timeout, --max-message or "
                                        "the profile's mcpcell block) are enforced only by the relay; drop --relay=off "
                                        "or the limits");
  }
  return {};
}

// The relay's settings. Tool rules are enforced only by the relay, which
// sits on every backend's stdio (cell/backend.cc); a server run without a
// cell has no relay, so it is refused while the profile has tool rules
// (never accepted and ignored), as is --relay=off.
static Status LowerRelay(const RunRequest& req, const PermissionProfile& profile, const LaunchPlan& plan, RelaySpec* out) {
  out->tools_allow = profile.ext.tools_allow;
  out->tools_deny = profile.ext.tools_deny;
  out->prompts_allow = profile.ext.prompts_allow;
  out->prompts_deny = profile.ext.prompts_deny;
  out->resources_allow = profile.ext.resources_allow;
  out->resources_deny = profile.ext.resources_deny;
  // On unless --relay=off, for every cell: the relay sits on every backend's
  // stdio (cell/backend.cc; a container cell's stdio pump feeds its pipes),
  // so a deny rule holds whatever --isolate says. Plain-text output still
  // passes: a line that cannot be a JSON-RPC message to any client goes
  // through unjudged (MayBeMessage).
  // The secret scan: the profile's mcpcell.secret_scan, else redact both ways.
  const auto& scan = profile.ext.secret_scan;
  out->secrets = scan.value_or(SecretPolicy{});
  if (!scan) out->secrets.origin = "the default: no mcpcell.secret_scan in profile " + profile.name;
  bool scan_asked = scan && (scan->to_server != SecretMode::kOff || scan->to_client != SecretMode::kOff);
  bool rules = !out->tools_allow.empty() || !out->tools_deny.empty() || !out->prompts_allow.empty() ||
               !out->prompts_deny.empty() || !out->resources_allow.empty() || !out->resources_deny.empty();
  out->on = req.relay != "off";
  out->tools_origin = "profile " + profile.name;
  if (req.max_message) {
    auto size = ParseSize(*req.max_message);
    if (!size.ok()) return MakeError("--max-message", *req.max_message, "expected a size such as 64m or 512k");
    if (*size < 4096) return MakeError("--max-message", *req.max_message, "must be at least 4k");
    out->max_message = *size;
  }
  MCPCELL_TRY(LowerRelayLimits(req, out));
  if (!rules && !scan_asked) return {};
  std::string where = "the profile " + profile.name + " has " + (rules ? "mcpcell.tools/prompts/resources rules" : "mcpcell.secret_scan") + ", ";
  if (!out->on) {
    return MakeError("--relay=off", "", where + "which only the relay enforces; drop --relay=off, or the rules (secret_scan: set its mode to off)");
  }
  if (plan.action == LaunchPlan::Action::kAllow) {
    return MakeError("run without a cell", plan.rule,
                     where + "which a server run without a cell would not be held to; isolate it, or drop the tool rules");
  }
  return {};
}

const std::vector<CellOnlyFlag>& CellOnlyFlags() {
  using R = const RunRequest&;
  static const std::vector<CellOnlyFlag> flags = {
      {"--read", [](R r) { return !r.read.empty(); }},
      {"--write", [](R r) { return !r.write.empty(); }},
      {"--secret", [](R r) { return !r.secrets.empty(); }},
      {"--secret-env", [](R r) { return !r.secret_env.empty(); }},
      {"--allow-host", [](R r) { return !r.allow_host.empty(); }},
      {"--allow-port", [](R r) { return !r.allow_port.empty(); }},
      {"--resolve", [](R r) { return !r.resolve.empty(); }},
      {"--memory", [](R r) { return r.memory.has_value(); }},
      {"--pids", [](R r) { return r.pids.has_value(); }},
      {"--cpus", [](R r) { return r.cpus.has_value(); }},
      {"--tmp-size", [](R r) { return r.tmp_size.has_value(); }},
      {"--timeout", [](R r) { return r.timeout.has_value(); }},
      {"--grace", [](R r) { return r.grace.has_value(); }},
      {"--uid", [](R r) { return r.uid.has_value(); }},
      {"--gid", [](R r) { return r.gid.has_value(); }},
      {"--system-mount", [](R r) { return !r.system_mounts.empty(); }},
      {"--idmap", [](R r) { return r.idmap == "on"; }},  // "off" asks for nothing
      {"--relay", [](R r) { return r.relay == "on"; }},  // "off" is what a plain run has
      {"--max-message", [](R r) { return r.max_message.has_value(); }},
      {"--call-rate", [](R r) { return r.call_rate.has_value(); }},
      {"--max-inflight", [](R r) { return r.max_inflight.has_value(); }},
      {"--call-timeout", [](R r) { return r.call_timeout.has_value(); }},
      {"--audit-content", [](R r) { return r.audit_content; }},
      // Every profile, "none" too, is a restriction a plain run does not
      // have (its stderr said "enforced" for the profile's allow-list).
      {"--permission-profile", [](R r) { return r.profile.has_value(); }},
      {"--no-auto-mount", [](R r) { return r.no_auto_mount; }},
      {"--force-credentials", [](R r) { return r.force_credentials; }},
      {"--fallback", [](R r) { return r.fallback != "none"; }},  // no engine to fall back from
  };
  return flags;
}

namespace {

// A policy "allow" rule runs the server with no cell and no relay, so a flag
// only a cell or the relay enforces would be accepted and ignored (adv8: the
// server ran past --timeout, with the host's network under --allow-host, and
// stderr said the allow-list was enforced). Refused, named, with the way out.
Status RefuseCellFlagsOnAPlainRun(const RunRequest& req, const LaunchPlan& plan) {
  if (plan.action != LaunchPlan::Action::kAllow) return {};
  std::vector<std::string> given;
  for (const auto& f : CellOnlyFlags()) {
    if (f.given(req)) given.emplace_back(f.flag);
  }
  // What the policy judged is the command line; a variable that loads other
  // code (NODE_OPTIONS=--require, BASH_ENV, LD_PRELOAD) would run a program
  // it never saw, with no cell around it (adv10).
  for (const auto& e : req.env) {
    std::string name = e.substr(0, e.find('='));
    // PIP_*/UV_*: where a trusted command's pip or uv installs from (adv13).
    if (InjectsCode(name) || ChoosesWhatRuns(name) || PicksPackageIndex(name)) {
      return MakeError("run without a cell", plan.rule,
                       "--env " + name + " chooses code or configuration the server loads, which the policy did not judge, and this rule runs "
                       "it with no cell; add --isolate to run it in a cell, or drop --env " + name);
    }
  }
  if (given.empty()) return {};
  std::string list;
  for (const auto& g : given) list += (list.empty() ? "" : ", ") + g + (g == "--idmap" || g == "--relay" ? "=on" : "");
  return MakeError("run without a cell", plan.rule,
                   "the rule runs this server with no cell and no relay, so " + list +
                       (given.size() == 1 ? " would" : " would all") +
                       " be ignored; add --isolate to run it in a cell, or drop " + (given.size() == 1 ? "it" : "them"));
}

// What a policy "allow" cannot run without a cell (adv10): an image runs
// only in a container (RunPlainly would exec the image's arguments on the
// host), and a registry entry with a notice carries settings the cell makes
// safe (Chromium's own sandbox off: the cell is the sandbox).
Status RefuseWhatNeedsACell(const ServerRef& ref, const RegistryEntry* entry, const LaunchPlan& plan) {
  if (plan.action != LaunchPlan::Action::kAllow) return {};
  if (ref.kind == ServerRef::Kind::kDocker) {
    return MakeError("run without a cell", plan.rule,
                     CanonicalSource(ref) + " is an image, which runs only in a container; an allow rule cannot run it "
                     "on the host: make the rule isolate it (\"action\": \"isolate\")");
  }
  if (entry != nullptr && !entry->notice.empty()) {
    return MakeError("run without a cell", plan.rule,
                     "registry entry \"" + entry->name + "\" is made to run in a cell (" + entry->notice +
                         "); without one it would have neither: make the rule isolate it (\"action\": \"isolate\")");
  }
  return {};
}

// A pinned npx/uvx version names a package, not its code: the registry and
// the cache decide what runs. An allow rule trusted the public registry's
// package; a run whose environment picks another registry or cache (a
// client's env block can: npm_config_registry, HOME's .npmrc,
// XDG_CACHE_HOME, any PIP_*/UV_*: PIP_INDEX_URL, PIP_TRUSTED_HOST,
// PIP_NO_INDEX with PIP_FIND_LINKS) would run other code with no cell (adv11).
std::string WhySourceIsSwappable(const ServerRef& ref, const RunRequest& req, PackageTool* npm) {
  std::string base = UserCacheBase();
  if (base != AccountCacheBase()) {
    return "its package cache is under $XDG_CACHE_HOME (" + VisibleOnTerminal(base) + "), not your account's";
  }
  std::vector<std::string> environment = ProcessEnvironment();
  if (std::string why = WhyCaEnvironmentIsNotPublic(environment); !why.empty()) return why;
  if (ref.kind == ServerRef::Kind::kUvx) {
    return WhyPipSettingsAreNotPublic(environment);
  }
  if (!req.npm_scopes.empty()) return "--npm-scope lets another registry serve its dependencies";
  auto config = npm->Config();
  if (!config.ok()) return "npm's registry could not be read (" + config.error().Message() + ")";
  return WhyNpmConfigIsNotPublic(*config, ref.package);
}

/// The `node` a plain run of an npx:// package runs, named absolutely in its
/// argv (and so in explain and --dry-run): found on PATH's absolute entries
/// only, so a client's cwd (a repository's node_modules/.bin, an empty
/// entry) does not choose it (adv13). A cell finds node in its own PATH.
Status NameThePlainNode(const ServerRef& ref, const LaunchPlan& plan, Resolved* resolved) {
  if (plan.action != LaunchPlan::Action::kAllow || ref.kind != ServerRef::Kind::kNpx) return {};
  if (resolved->argv.empty() || resolved->argv[0] != "node") return {};
  // By its real path: the file judged is the file started, whatever a link
  // on PATH points at by then (adv15: a link flipped after the check).
  std::string node = RealPathOf(FindOnAbsoluteHostPath("node"));
  if (node.empty()) return MakeError("run without a cell", "node", "not found in PATH's absolute directories");
  // Root's node only: an absolute PATH entry may still be a repository's
  // node_modules/.bin, as direnv writes it (adv14).
  if (!IsSystemProgram(node)) {
    return MakeError("run without a cell", VisibleOnTerminal(node),
                     "is the node PATH finds, but not a system program (root's, under /usr, /bin or /opt, in a directory only root can "
                     "change), so it is not the node the policy's trust assumed; run the server in a cell (add "
                     "--isolate) or put the system's node first on PATH");
  }
  resolved->argv[0] = node;  // named in explain and --dry-run; node's mode does not hang on it
  resolved->plain_exe = node;
  return {};
}

/// A plain run of a command starts the file the policy judged
/// (TrustFacts.local_path, a real path), not a second PATH search, which a
/// link or a PATH entry changed in between would answer otherwise (adv15).
void NameThePlainCommand(const ServerRef& ref, const LaunchPlan& plan, const TrustFacts& facts, Resolved* resolved) {
  if (plan.action != LaunchPlan::Action::kAllow || facts.local_path.empty()) return;
  if (ref.kind != ServerRef::Kind::kCommand && ref.kind != ServerRef::Kind::kRegistry) return;
  if (resolved->argv.empty() || resolved->argv[0] != ref.package) return;
  resolved->plain_exe = facts.local_path;
}

/// A plain run of `ref` refused for `why` (nothing when it is "").
Status RefusePlainRun(const ServerRef& ref, const LaunchPlan& plan, const std::string& why) {
  if (why.empty()) return {};
  return MakeError("run without a cell", plan.rule,
                   CanonicalSource(ref) + " is trusted by its name and version, but " + why +
                       ", so the code that runs is not what the policy trusted; run it in a cell (make the rule "
                       "isolate it), or run it without that setting");
}

/// `npm`: the launch's npm for an npx:// source (LaunchNpm), else null.
Status RefuseSwappableSourceOnAPlainRun(const ServerRef& ref, const RunRequest& req, const LaunchPlan& plan,
                                        PackageTool* npm) {
  if (plan.action != LaunchPlan::Action::kAllow) return {};
  if (ref.kind != ServerRef::Kind::kNpx && ref.kind != ServerRef::Kind::kUvx) return {};
  return RefusePlainRun(ref, plan, WhySourceIsSwappable(ref, req, npm));
}

/// After the install: what the cache holds, which an earlier run under
/// other settings may have put there (adv13), is the public registry's.
Status RefuseForeignInstallOnAPlainRun(const ServerRef& ref, const LaunchPlan& plan, const Resolved& resolved) {
  if (plan.action != LaunchPlan::Action::kAllow) return {};
  if (ref.kind != ServerRef::Kind::kNpx && ref.kind != ServerRef::Kind::kUvx) return {};
  if (!resolved.installed || !resolved.installed->present) return {};
  const std::string& dir = resolved.installed->cache_dir;
  // The settings it was installed under (which its lockfile cannot show:
  // adv14), then, for npm, every package's own record.
  std::string why = WhyOriginIsNotPublic(dir);
  if (why.empty() && ref.kind == ServerRef::Kind::kNpx) why = WhyInstallIsNotPublic(dir);
  return RefusePlainRun(ref, plan, why);
}


// The one npm of an npx:// launch (null for other sources): the allow check
// and the install ask the same tool, which reads npm's config once (npm
// config get + list, ~0.3 s), and the check judges the npm that installs
// (never one from a directory the cell may write).
Result<std::unique_ptr<PackageTool>> LaunchNpm(const ServerRef& ref, const RunRequest& req, const RunRequest& merged) {
  if (ref.kind != ServerRef::Kind::kNpx) return std::unique_ptr<PackageTool>();
  auto limit = InstallTimeout(req);
  if (!limit.ok()) return limit.error();
  return MakeNpmTool(CellWritableHostDirs(merged), *limit, req.npm_scopes);
}

// The program and its install, with an allow run's checks around the
// install: what this run's settings would fetch (before), what the cache
// holds (after), and the absolute node a plain npx:// run starts.
Result<Resolved> ResolveForPlan(const ServerRef& source, const ServerRef& ref, const RunRequest& req,
                                const RunRequest& merged, const LaunchPlan& plan, const TrustFacts& facts) {
  auto npm = LaunchNpm(ref, req, merged);
  if (!npm.ok()) return npm.error();
  MCPCELL_TRY(RefuseSwappableSourceOnAPlainRun(source, req, plan, npm->get()));
  auto resolved = ResolveArgv(ref, req, merged, npm->get());
  if (!resolved.ok()) return resolved.error();
  MCPCELL_TRY(RefuseForeignInstallOnAPlainRun(source, plan, *resolved));
  MCPCELL_TRY(NameThePlainNode(ref, plan, &*resolved));
  NameThePlainCommand(source, plan, facts, &*resolved);
  return resolved;
}

// The decision as values: the policy's action and level, made stricter (never
// looser) by --isolate; a docker:// image at auto runs in a container.
Result<LaunchPlan> DecidePlan(const RunRequest& req, const Decided& decided) {
  const Decision& decision = decided.decision;
  LaunchPlan plan;
  plan.decision = decision;
  plan.source = decided.ref;
  plan.rule = decided.policy.origin + " " + decision.rule;
  plan.reason = decision.reason;
  auto level = ParseIsolationLevel(decision.level);
  if (!level) return MakeError("policy level", decision.level, std::string("use ") + kIsolationLevelList);
  plan.level = *level;
  switch (decision.action) {
    case PolicyAction::Kind::kDeny: plan.action = LaunchPlan::Action::kDeny; break;
    case PolicyAction::Kind::kAllow: plan.action = LaunchPlan::Action::kAllow; break;
    default: plan.action = LaunchPlan::Action::kIsolate; break;
  }
  if (!decision.message.empty()) plan.reason += " — " + decision.message;
  // --isolate can only make things stricter: it turns allow into isolate, never overrides deny.
  if (req.isolate && plan.action != LaunchPlan::Action::kDeny) {
    bool rule_isolates = plan.action == LaunchPlan::Action::kIsolate;
    plan.action = LaunchPlan::Action::kIsolate;
    if (!req.isolate->empty() && *req.isolate != "auto") {
      auto asked = ParseIsolationLevel(*req.isolate);
      if (!asked) return MakeError("--isolate", *req.isolate, std::string("unknown level (use ") + kIsolationLevelList + ")");
      // Levels are not ordered (a container is not "stricter" than a native
      // cell in every way), so a rule's own level is never swapped (adv8).
      if (rule_isolates && plan.level != IsolationLevel::kAuto && *asked != plan.level) {
        return MakeError("--isolate", *req.isolate,
                         "the policy's " + plan.rule + " isolates at level \"" + decision.level +
                             "\"; --isolate only makes a run stricter and does not change a rule's level: drop the "
                             "level from --isolate, or change the rule");
      }
      plan.level = *asked;
    }
    plan.rule = "--isolate";
    plan.reason = "isolation asked for on the command line (the policy said: " + decision.reason + ")";
  }
  const ServerRef& ref = decided.ref;
  if (ref.kind == ServerRef::Kind::kDocker && plan.level == IsolationLevel::kAuto) plan.level = IsolationLevel::kContainer;
  plan.server = ref.kind == ServerRef::Kind::kCommand ? ref.package : CanonicalSource(ref);
  return plan;
}

// The decision rendered for people (--dry-run, policy explain, the audit log).
json DecisionJson(const LaunchPlan& plan, const ServerRef& parsed, const Decided& decided) {
  const RegistryEntry* entry = decided.entry_ptr();
  const Policy& policy = decided.policy;
  return json{{"server", plan.server},
              {"source", ToJson(parsed)},
              {"registry_entry", entry != nullptr ? json(entry->name) : json(nullptr)},
              {"trust_facts", ToJson(decided.facts)},
              {"policy", {{"file", policy.origin},
                          {"trusted_sources", policy.trust.trusted_sources},
                          {"trusted_tiers", policy.trust.trusted_tiers}}},
              {"decision", ToJson(plan.decision)},
              {"action", ToString(plan.action)},
              {"rule", plan.rule},
              {"reason", plan.reason},
              {"level", ToString(plan.level)},
              {"warnings", plan.decision.warnings}};
}

// A docker:// source: the image is the filesystem and names the command: the
// spec keeps what the user asked for (binds, secrets, env, limits), none of
// the host's system dirs; PATH and the working directory are the image's
// (the container cell completes argv, env, workdir and user from it).
Result<CellSpec> ImageCellSpec(const RunRequest& merged, const std::vector<std::string>& argv,
                               std::vector<std::string>* notes) {
  RunRequest image_req = merged;
  image_req.no_auto_mount = true;
  auto built = BuildCellSpec(image_req, argv, notes);
  if (!built.ok()) return built.error();
  CellSpec spec = std::move(*built);
  std::erase_if(spec.mounts, [](const MountSpec& m) { return IsHostSystem(m); });
  bool path_given = std::any_of(merged.env.begin(), merged.env.end(),
                                [](const std::string& e) { return e == "PATH" || e.rfind("PATH=", 0) == 0; });
  if (!path_given) spec.env.erase("PATH");
  spec.workdir.clear();
  spec.backend = "docker";
  notes->push_back("docker:// sources run in a container cell: the image's Entrypoint runs, with these args "
                   "replacing its Cmd (as docker run IMAGE ARGS); workdir \"\" = the image's");
  return spec;
}

// Secrets as files, and as a variable only where the cell can set one.
Status AddSecrets(std::vector<SecretSpec> secrets, IsolationLevel level, CellSpec* spec) {
  spec->secrets = std::move(secrets);
  for (const auto& s : spec->secrets) {
    // Said here, not only when the container is created: --dry-run must not
    // show a mapping that the run would refuse (create_body.cc says why).
    if (s.env_name && IsContainerLevel(level)) {
      return MakeError("--secret-env", s.name + "=" + *s.env_name,
                       "a " + ToString(level) + " cell cannot set it (the value would be visible in `docker inspect`): "
                       "read /run/secrets/" + s.name + " in the server, or use a native cell (--isolate=native), "
                       "whose PID 1 sets " + *s.env_name + " at exec");
    }
    // The cell's PID 1 sets the variable from the file at exec: one value, never two.
    if (s.env_name && spec->env.count(*s.env_name) != 0) {
      return MakeError("--secret-env", s.name + "=" + *s.env_name,
                       "the cell's environment already sets " + *s.env_name +
                           " (--env, the profile or mcpcell's own); keep one of them");
    }
  }
  return {};
}

// The npx package's cache dir, bound read-only like every other bind source:
// the cell binds it by fd and refuses a path with a symlink in it
// (src/cell/bind_source.h).
json AddNpxCache(const InstalledPackage& npx, const ServerRef& ref, CellSpec* spec) {
  MountSpec m;
  std::error_code ec;
  auto real = std::filesystem::weakly_canonical(npx.cache_dir, ec);
  m.source = ec ? npx.cache_dir : real.string();
  m.target = npx.cache_dir;
  m.writable = false;
  m.optional = !npx.present;
  m.why = ToString(ref.kind) + " package cache (installed outside the cell)";
  spec->mounts.push_back(std::move(m));
  return json{{"package", ref.package}, {"version", npx.version}, {"cache_dir", npx.cache_dir},
              {"bin", npx.bin_path}, {"installed_now", npx.installed_now}, {"present", npx.present}};
}

// What a user must know (a scan that gave up, a mount skipped) is said
// without -v; the rest only with it.
void SayPlanNotes(const RunRequest& req, const TrustFacts& facts, const CellSpec& spec, const NetworkPlan& net,
                  bool plain, const std::vector<std::string>& notes) {
  // A run without a cell has the host's network: the registry default's
  // allow-list is not enforced, and saying it is would be a lie.
  if (plain) {
    Say("network: not restricted (the host's): the policy runs this server without a cell");
  } else {
    for (const auto& w : net.warnings) Say(w);
    if (facts.requests_network || spec.network.mode != NetworkSpec::Mode::kNone) Say("network: " + net.enforced);
  }
  for (const auto& n : notes) {
    if (req.verbose || n.rfind("warning:", 0) == 0) Say(n);
  }
}

}  // namespace

Result<LaunchPlan> PlanLaunch(const RunRequest& req) {
  // Checked with every other flag, so --dry-run and policy explain refuse
  // what run would (adv8: they showed a plan run refused later).
  if (auto fallback = ParseFallback(req.fallback); !fallback) return fallback.error();
  auto parsed = ParseServerRef(req.server, req.command);
  if (!parsed.ok()) return parsed.error();
  DecideInputs in{req.policy_file, req.profile, !req.allow_host.empty() || !req.allow_port.empty(),
                  !req.write.empty(), req.read};
  auto decided = Decide(*parsed, in);
  if (!decided.ok()) return decided.error();
  for (const auto& w : decided->requested.warnings) Say("warning: " + w);
  const Decision& decision = decided->decision;
  for (const auto& w : decision.warnings) Say("warning: " + w);

  auto planned = DecidePlan(req, *decided);
  if (!planned) return planned.error();
  LaunchPlan plan = std::move(*planned);
  plan.explain = DecisionJson(plan, *parsed, *decided);
  if (plan.action == LaunchPlan::Action::kDeny) return plan;  // nothing installed, nothing built
  MCPCELL_TRY(RefuseCellFlagsOnAPlainRun(req, plan));
  MCPCELL_TRY(RefuseWhatNeedsACell(decided->ref, decided->entry_ptr(), plan));

  std::vector<std::string> notes;
  ServerRef ref = decided->ref;
  RunRequest with_args = req;
  const bool plain = plan.action == LaunchPlan::Action::kAllow;
  if (auto ok = BindPathArgs(decided->entry_ptr(), plain, &ref, &with_args, &notes); !ok) return ok.error();

  const PermissionProfile* profile = &decided->profile;
  if (decision.profile && req.profile && *decision.profile != *req.profile) {
    Say("note: the policy's " + decision.rule + " sets profile '" + *decision.profile +
        "', which replaces --permission-profile " + *req.profile);
  }
  plan.profile = profile->name;

  RunRequest merged = MergeProfile(*profile, with_args);
  ApplyEntryDefaults(decided->entry_ptr(), &ref, &merged, plain, &notes);
  auto resolved = ResolveForPlan(decided->ref, ref, req, merged, plan, decided->facts);
  if (!resolved.ok()) return resolved.error();
  auto secrets = LowerSecrets(merged.secrets, merged.secret_env);
  if (!secrets.ok()) return secrets.error();
  auto net = LowerNetwork(*profile, req.allow_host, req.allow_port, req.resolve);
  if (!net.ok()) return net.error();

  const bool image = ref.kind == ServerRef::Kind::kDocker;
  auto built = image ? ImageCellSpec(merged, resolved->argv, &notes) : BuildCellSpec(merged, resolved->argv, &notes);
  if (!built.ok()) return built.error();
  CellSpec spec = std::move(*built);
  if (image) {
    plan.image = ImageRefFrom(ref);
    plan.ids_given = req.uid.has_value() || req.gid.has_value();
    plan.explain["image"] = {{"reference", plan.image->Reference()}, {"user_given", plan.ids_given}};
  }
  ApplyCellNetwork(&spec, net->spec);
  MCPCELL_TRY(AddSecrets(std::move(*secrets), plan.level, &spec));
  if (spec.idmap == CellSpec::Idmap::kOn && (IsContainerLevel(plan.level) || plan.image)) {
    return MakeError("--idmap=on", ToString(plan.level),
                     "only native cells mount grants as their owner's; use --isolate=native or --idmap=auto");
  }
  if (resolved->installed) plan.explain["install"] = AddNpxCache(*resolved->installed, ref, &spec);
  MCPCELL_TRY(CheckPlannedCell(ref, req, *resolved, spec));
  SayPlanNotes(req, decided->facts, spec, *net, plain, notes);
  MCPCELL_TRY(CheckRecordsOutOfReach(spec, req, decision));
  MCPCELL_TRY(CheckHiddenDirsOutOfReach(spec));  // mcpcell's state is not even readable
  // The merged request: the profile's mcpcell.call_rate, max_message,
  // max_inflight and call_timeout are in it (adv8: they were dropped).
  MCPCELL_TRY(LowerRelay(merged, *profile, plan, &spec.relay));
  MCPCELL_TRY(LowerPins(ref, *profile, plan, &spec.relay));
  // A cell that can write its own pins approves its own changes.
  if (spec.relay.pins) MCPCELL_TRY(CheckDirNotWritableByCell(spec, "mcpcell's pin directory", spec.relay.pins_dir));
  plan.explain["permissions"] = PermissionsJson(merged, spec, *net, *profile, plain);
  plan.explain["profile"] = ToJson(*profile);
  plan.explain["notes"] = notes;
  plan.spec = std::move(spec);
  plan.plain_exe = resolved->plain_exe;
  return plan;
}

}  // namespace mcpcell
