// `mcpcell install SERVER`: fetches an npx:// or uvx:// server (or a registry
// entry with such a source) into mcpcell's package cache ahead of time, exactly as
// `mcpcell run` would on first launch, so a client's first start of the
// server is fast and any install problem shows here, in a terminal, instead
// of as a client's timeout (issue 14.1). No policy is consulted: nothing runs
// but npm (--ignore-scripts) or pip (wheels only), outside any cell, as for
// `run`, and an npm package's install scripts, in native cells of their own
// (source/install_scripts.h; --install-scripts=skip: not at all).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cell/cell_record.h"
#include "cell/script_cell.h"
#include "cli/commands.h"
#include "core/exit_codes.h"
#include "registry/catalog.h"
#include "guard/secret_check.h"
#include "source/npx_install.h"
#include "source/uvx_install.h"
#include "source/server_ref.h"
#include "util/units.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

struct InstallRequest {
  std::string server;
  std::optional<std::string> install_timeout;
  std::optional<std::string> install_scripts;
  std::vector<std::string> npm_scopes;
};

/// The npx:// or uvx:// source SERVER names: itself, or its registry entry's source.
Result<ServerRef> PackageSource(const std::string& server) {
  auto ref = ParseServerRef(server, {});
  if (!ref.ok()) return ref.error();
  if (ref->kind == ServerRef::Kind::kRegistry) {
    auto catalog = BundledCatalog();
    if (!catalog.ok()) return catalog.error();
    const RegistryEntry* entry = catalog->Find(ref->package);
    if (entry == nullptr) return MakeError("install", server, NotARegistryName(*catalog, server));
    ref = entry->source;
  }
  if (ref->kind != ServerRef::Kind::kNpx && ref->kind != ServerRef::Kind::kUvx) {
    return MakeError("install", server,
                     "only npx:// and uvx:// sources are installed ahead of time (a " + ToString(ref->kind) +
                         " source is fetched by its own tool: docker pull for docker://)");
  }
  return *ref;
}

int Install(const InstallRequest& req) {
  auto ref = PackageSource(req.server);
  if (!ref.ok()) {
    SayAs("install", ref.error().Message());
    return kExitUsage;
  }
  std::chrono::milliseconds limit = kDefaultInstallTimeout;
  if (req.install_timeout) {
    auto v = ParseDuration(*req.install_timeout);
    if (!v.ok() || v->count() <= 0) {
      SayAs("install", "--install-timeout " + *req.install_timeout + ": expected a duration above 0, e.g. 10m");
      return kExitUsage;
    }
    limit = *v;
  }
  const bool uvx = ref->kind == ServerRef::Kind::kUvx;
  if (uvx && !req.npm_scopes.empty()) {
    SayAs("install", "--npm-scope applies to npx:// sources only (npm's scoped registries); " + req.server +
                         " is a uvx:// source");
    return kExitUsage;
  }
  if (uvx && req.install_scripts) {
    SayAs("install", "--install-scripts applies to npx:// sources only (npm install scripts); " + req.server +
                         " is a uvx:// source (pip installs wheels, which run nothing)");
    return kExitUsage;
  }
  auto mode = ParseInstallScriptsMode(req.install_scripts.value_or("cell"));
  if (!mode.ok()) {
    SayAs("install", mode.error().Message());
    return kExitUsage;
  }
  auto script_cell = MakeNativeScriptCell();
  auto root = uvx ? UvxCacheRoot() : NpxCacheRoot();
  if (!root.ok()) {
    SayAs("install", root.error().Message());
    return 1;
  }
  auto inst = uvx ? EnsureUvxPackage(*ref, *MakePipTool({}, limit), *root, true)
                  : EnsureNpxPackage(*ref, *MakeNpmTool({}, limit, req.npm_scopes), *root, true,
                                     NpxScripts{*mode, script_cell.get(), limit, HoldsBuiltinSecret, CacheDirInUse});
  if (!inst.ok()) {
    SayAs("install", inst.error().Message());
    return 1;
  }
  SayAs("install", ref->package + "@" + inst->version + " " +
                       (inst->installed_now ? "installed" : "already installed") + " in " + inst->cache_dir);
  return 0;
}

}  // namespace

void AddInstallCommand(CLI::App& app, int* exit_code) {
  auto req = std::make_shared<InstallRequest>();
  auto* cmd = app.add_subcommand("install", "Fetch an npx:// or uvx:// server into mcpcell's cache now, so its first run is fast");
  cmd->add_option("server", req->server, "npx://pkg[@ver], uvx://pkg[@ver] or a registry name with such a source")->required();
  cmd->add_option("--install-timeout", req->install_timeout,
                  "stop npm or pip (and each package's install-script cell) after this long, e.g. 10m (default 5m)");
  cmd->add_option("--install-scripts", req->install_scripts,
                  "npx:// packages' install scripts (native modules): cell (default) runs them in a native cell of "
                  "their own that can write only that package's directory and reach only the npm registries they came "
                  "from; skip does not run them")
      ->check(CLI::IsMember({"cell", "skip"}));
  cmd->add_option("--npm-scope", req->npm_scopes,
                  "let packages of SCOPE (@name) come from the registry your npm config names for it, with your "
                  "credentials there, when a package of another registry depends on them (npx:// only; by default "
                  "they are looked up on the installed package's own registry)")
      ->type_name("SCOPE");
  cmd->callback([req, exit_code] { *exit_code = Install(*req); });
}

}  // namespace mcpcell
