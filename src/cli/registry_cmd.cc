// `mcpcell registry list [--json]` and `mcpcell registry info NAME [--json]`:
// the bundled catalog, with permissions shown the way a user checks them
// before running a server.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/exit_codes.h"
#include "profile/lower.h"
#include "registry/catalog.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

using nlohmann::json;

json EntryJson(const RegistryEntry& e) {
  json env = json::array();
  for (const auto& v : e.env_vars) {
    json one = {{"name", v.name}, {"description", v.description}, {"required", v.required}, {"secret", v.secret}};
    if (v.default_value) one["default"] = *v.default_value;
    env.push_back(std::move(one));
  }
  return json{{"name", e.name}, {"description", e.description}, {"source", CanonicalSource(e.source)},
              {"tier", e.tier}, {"status", e.status}, {"transport", e.transport},
              {"repository_url", e.repository_url}, {"usage", e.usage}, {"tags", e.tags},
              {"env_vars", env}, {"permissions", ToJson(e.permissions)},
              {"path_args", e.path_args}, {"args", e.args}, {"notice", e.notice},
              {"requires_paths", e.requires_paths}, {"requires_hint", e.requires_hint}};
}

// mcpcell's options before the name: every word after SERVER is the server's
// (commands.h, CommandTail).
std::string RunExample(const RegistryEntry& e) {
  std::string cmd = "mcpcell run";
  for (const auto& v : e.env_vars) {
    if (v.secret && v.required) {
      cmd += " --secret " + v.name + "=FILE --secret-env " + v.name;
    } else if (v.required) {
      cmd += " --env " + v.name + "=VALUE";
    }
  }
  if (!e.permissions.allow_host.empty() || !e.permissions.allow_port.empty()) {
    cmd += " --permission-profile network";
  }
  cmd += " " + e.name;
  if (!e.usage.empty()) cmd += " " + e.usage.substr(0, e.usage.find(' '));
  return cmd;
}

void PrintInfo(const RegistryEntry& e) {
  const PermissionProfile& p = e.permissions;
  std::printf("%s — %s\n", e.name.c_str(), e.description.c_str());
  std::printf("  source:     %s\n", CanonicalSource(e.source).c_str());
  std::printf("  tier:       %s%s\n", e.tier.c_str(), e.status == "deprecated" ? "  (deprecated: archived upstream)" : "");
  std::printf("  transport:  %s\n", e.transport.c_str());
  if (!e.repository_url.empty()) std::printf("  repository: %s\n", e.repository_url.c_str());
  if (!e.usage.empty()) std::printf("  arguments:  %s\n", e.usage.c_str());
  std::printf("  permissions (default profile):\n");
  std::printf("    read:     %s\n", p.read.empty() ? "(none)" : fmt::format("{}", fmt::join(p.read, ", ")).c_str());
  std::printf("    write:    %s\n", p.write.empty() ? (e.path_args == "write" ? "the directories given as arguments" : "(none)")
                                                     : fmt::format("{}", fmt::join(p.write, ", ")).c_str());
  if (p.insecure_allow_all) {
    std::printf("    network:  ANY host, any port (insecure_allow_all: still through mcpcell's proxy, every connection audited; internal addresses refused)\n");
  } else if (!p.allow_host.empty() || !p.allow_port.empty()) {
    std::printf("    network:  hosts %s on ports %s\n",
                p.allow_host.empty() ? "(any)" : fmt::format("{}", fmt::join(p.allow_host, ", ")).c_str(),
                p.allow_port.empty() ? "(any)" : fmt::format("{}", fmt::join(p.allow_port, ", ")).c_str());
    std::printf("              (enforced by mcpcell's egress proxy: the cell's only way out, every\n"
                "               connection and name lookup checked against this list and audited)\n");
  } else {
    std::printf("    network:  none (loopback only; a name the server looks up is reported on stderr with\n"
                "              the --allow-host flag that would allow it)\n");
  }
  if (!e.env_vars.empty()) {
    std::printf("  environment:\n");
    for (const auto& v : e.env_vars) {
      std::printf("    %-32s %s%s — %s%s\n", v.name.c_str(), v.required ? "required" : "optional",
                  v.secret ? ", SECRET (give it as a file: --secret)" : "", v.description.c_str(),
                  v.default_value ? (" (default in the cell: " + *v.default_value + ")").c_str() : "");
    }
  }
  if (!e.args.empty()) std::printf("  arguments put first: %s\n", fmt::format("{}", fmt::join(e.args, " ")).c_str());
  if (!e.notice.empty()) std::printf("  notice:     %s\n", e.notice.c_str());
  if (!e.requires_paths.empty()) {
    std::printf("  needs:      %s%s\n", fmt::format("{}", fmt::join(e.requires_paths, ", ")).c_str(),
                e.requires_hint.empty() ? "" : (" (" + e.requires_hint + ")").c_str());
  }
  std::printf("  run:        %s\n", RunExample(e).c_str());
}

}  // namespace

void AddRegistryCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("registry", "The bundled catalog of known MCP servers");
  cmd->require_subcommand(1);
  auto json_list = std::make_shared<bool>(false);
  auto* list = cmd->add_subcommand("list", "List the known servers");
  list->add_flag("--json", *json_list, "print the catalog as JSON");
  list->callback([json_list, exit_code] {
    auto cat = BundledCatalog();
    if (!cat.ok()) {
      Say(cat.error().Message());
      *exit_code = kExitSetupFailed;
      return;
    }
    if (*json_list) {
      json all = json::array();
      for (const auto& e : cat->entries()) all.push_back(EntryJson(e));
      std::printf("%s\n", all.dump(2).c_str());
    } else {
      std::printf("%-22s %-9s %-10s %s\n", "NAME", "TIER", "STATUS", "SOURCE");
      for (const auto& e : cat->entries()) {
        std::printf("%-22s %-9s %-10s %s\n", e.name.c_str(), e.tier.c_str(), e.status.c_str(),
                    CanonicalSource(e.source).c_str());
      }
    }
    *exit_code = 0;
  });
  auto name = std::make_shared<std::string>();
  auto json_info = std::make_shared<bool>(false);
  auto* info = cmd->add_subcommand("info", "Show one server: source, tier, permissions, env vars and secrets");
  info->add_option("name", *name, "registry name (see 'mcpcell registry list')")->required();
  info->add_flag("--json", *json_info, "print the entry as JSON");
  info->callback([name, json_info, exit_code] {
    auto cat = BundledCatalog();
    const RegistryEntry* e = cat.ok() ? cat->Find(*name) : nullptr;
    if (e == nullptr) {
      std::string why = cat.ok() ? NotARegistryName(*cat, *name) : cat.error().Message();
      Say("registry info " + *name + ": " + why);
      *exit_code = kExitUsage;
      return;
    }
    if (*json_info) std::printf("%s\n", EntryJson(*e).dump(2).c_str());
    else PrintInfo(*e);
    *exit_code = 0;
  });
}

}  // namespace mcpcell
