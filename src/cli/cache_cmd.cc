// `mcpcell cache list|prune`: the npx and uvx install caches (source/npx_cache.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cell/cell_record.h"
#include "cli/commands.h"
#include "core/exit_codes.h"
#include "source/npx_cache.h"
#include "source/npx_install.h"
#include "source/uvx_install.h"
#include "util/json_text.h"
#include "util/state_dir.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

struct CacheOptions {
  bool json = false;
  bool all = false;
  bool dry_run = false;
  std::string only;
};

std::string Size(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  return buf;
}

nlohmann::json ToJson(const CachedPackage& p) {
  return {{"kind", p.kind}, {"package", p.package}, {"version", p.version}, {"dir", p.dir}, {"bytes", p.bytes},
          {"installed", p.installed}, {"in_use", p.in_use}};
}

// Both caches' versions, each marked with its kind; the roots for the summary line.
Result<std::vector<CachedPackage>> ListBoth(std::string* roots) {
  std::vector<CachedPackage> all;
  const auto in_use = CacheDirsInUse();
  for (auto [kind, root] : {std::pair{"npx", NpxCacheRoot()}, std::pair{"uvx", UvxCacheRoot()}}) {
    if (!root) return root.error();
    for (auto& p : ListNpxCache(*root, in_use)) {
      p.kind = kind;
      all.push_back(std::move(p));
    }
    *roots += (roots->empty() ? "" : " and ") + *root;
  }
  return all;
}

int List(const CacheOptions& o) {
  std::string roots;
  auto listed = ListBoth(&roots);
  if (!listed) {
    SayAs("cache", listed.error().Message());
    return kExitUsage;
  }
  const auto& cached = *listed;
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : cached) out.push_back(ToJson(p));
    std::printf("%s\n", JsonText(out, 2).c_str());
    return 0;
  }
  std::uint64_t total = 0;
  std::printf("%-4s  %-50s  %-14s  %10s  %s\n", "KIND", "PACKAGE", "VERSION", "SIZE", "IN USE");
  for (const auto& p : cached) {
    std::printf("%-4s  %-50s  %-14s  %10s  %s\n", p.kind.c_str(), p.package.c_str(), p.version.c_str(), Size(p.bytes).c_str(),
                p.in_use ? "yes" : "");
    total += p.bytes;
  }
  SayAs("cache", fmt::format("{} package version(s), {}, in {}", cached.size(), Size(total), roots));
  return 0;
}

int Prune(const CacheOptions& o) {
  std::string roots;
  auto listed = ListBoth(&roots);
  if (!listed) {
    SayAs("cache", listed.error().Message());
    return kExitUsage;
  }
  const auto& cached = *listed;
  auto chosen = ChoosePrune(cached, o.all, o.only);
  int removed = 0;
  std::uint64_t freed = 0;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : chosen) {
    bool ok = o.dry_run || RemoveCachedPackage(p);
    SayAs("cache", fmt::format("{} {}@{} ({}){}", o.dry_run ? "would remove" : "removed", p.package, p.version,
                               Size(p.bytes), ok ? "" : ": could not remove it"));
    if (!ok) continue;
    ++removed;
    freed += p.bytes;
    out.push_back(ToJson(p));
  }
  int in_use = 0;
  for (const auto& p : cached) in_use += p.in_use ? 1 : 0;
  SayAs("cache", fmt::format("{} checked, {} {} ({}), {} kept in use by a running cell", cached.size(), removed,
                             o.dry_run ? "to remove" : "removed", Size(freed), in_use));
  if (o.json) std::printf("%s\n", JsonText(out, 2).c_str());
  return removed == static_cast<int>(chosen.size()) ? 0 : 1;
}

}  // namespace

void AddCacheCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("cache", "List or prune the npx:// and uvx:// install caches");
  cmd->require_subcommand(1);
  auto o = std::make_shared<CacheOptions>();
  auto* list = cmd->add_subcommand("list", "List the installed package versions, their size and whether a running "
                                           "cell uses them");
  list->add_flag("--json", o->json, "print the list as JSON");
  list->callback([exit_code, o] { *exit_code = List(*o); });
  auto* prune = cmd->add_subcommand("prune", "Remove the older versions of each package (the newest install stays); "
                                             "never a version a running cell uses");
  prune->add_option("package", o->only, "only this package, or this PACKAGE@VERSION (then even the newest)");
  prune->add_flag("--all", o->all, "remove every version not in use, the newest too");
  prune->add_flag("--dry-run", o->dry_run, "say what would be removed; remove nothing");
  prune->add_flag("--json", o->json, "print what was removed as JSON");
  prune->callback([exit_code, o] { *exit_code = Prune(*o); });
}

}  // namespace mcpcell
