// `mcpcell policy show-default` and `mcpcell policy explain SERVER --policy F [--json]`.
// Explain never installs or runs anything: it shows each rule, whether it held
// and why, the decision and the effective permissions.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/exit_codes.h"
#include "cli/launch_plan.h"
#include "core/run_request.h"
#include "policy/decide.h"
#include "policy/trust_facts.h"
#include "profile/lower.h"
#include "profile/permission_profile.h"
#include "registry/catalog.h"
#include "source/server_ref.h"
#include "util/diag.h"
#include "util/json_text.h"

namespace mcpcell {
namespace {

using nlohmann::json;

std::string List(const std::vector<std::string>& v) {
  return v.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(v, ", "));
}

// The plan `run` would make for the same request, with nothing installed and
// nothing run: explain and run cannot disagree.
Result<json> Explain(RunRequest req) {
  req.dry_run = true;
  MCPCELL_TRY(NormalizeRequest(&req));
  auto plan = PlanLaunch(req);
  if (!plan.ok()) return plan.error();
  return plan->explain;
}

void PrintText(const json& e) {
  const json& f = e["trust_facts"];
  std::printf("server:    %s  (%s)\n", e["server"].get<std::string>().c_str(), f["source"].get<std::string>().c_str());
  std::printf("facts:     kind=%s pinned=%s in_registry=%s%s registry_pinned=%s scope=%s\n",
              f["kind"].get<std::string>().c_str(), f["pinned"].get<bool>() ? "yes" : "no",
              f["in_registry"].get<bool>() ? "yes" : "no",
              f["in_registry"].get<bool>() ? (" (" + f["registry_name"].get<std::string>() + ", tier " +
                                              f["registry_tier"].get<std::string>() + ")").c_str() : "",
              f["registry_pinned"].get<bool>() ? "yes" : "no",
              f["publisher_scope"].get<std::string>().empty() ? "-" : f["publisher_scope"].get<std::string>().c_str());
  std::printf("           requests_network=%s requests_write=%s\n", f["requests_network"].get<bool>() ? "yes" : "no",
              f["requests_write"].get<bool>() ? "yes" : "no");
  std::printf("policy:    %s\n", e["policy"]["file"].get<std::string>().c_str());
  const json& d = e["decision"];
  for (const auto& r : d["rules"]) {
    std::string label = "rule " + std::to_string(r["index"].get<int>());
    if (r.contains("name")) label += " \"" + r["name"].get<std::string>() + "\"";
    std::printf("  %-28s %s -> %s: %s\n    why: %s\n", label.c_str(), JsonText(r["condition"]).c_str(),
                r["action"].get<std::string>().c_str(), r["result"].get<std::string>().c_str(),
                r["why"].get<std::string>().c_str());
  }
  std::printf("decision:  %s (level %s) by %s\n", d["action"].get<std::string>().c_str(),
              d["level"].get<std::string>().c_str(), d["rule"].get<std::string>().c_str());
  std::printf("           %s\n", d["reason"].get<std::string>().c_str());
  for (const auto& w : d["warnings"]) std::printf("warning:   %s\n", w.get<std::string>().c_str());
  if (d["action"] == "deny") return;
  const json& p = e["permissions"];
  std::printf("permissions (profile %s):\n", p["profile"].get<std::string>().c_str());
  std::printf("  read:    %s\n", List(p["read"].get<std::vector<std::string>>()).c_str());
  std::printf("  write:   %s\n", List(p["write"].get<std::vector<std::string>>()).c_str());
  std::printf("  network: %s\n", p["network"]["enforced"].get<std::string>().c_str());
  std::vector<std::string> secrets;
  for (const auto& sec : p["secrets"]) secrets.push_back(sec["name"].get<std::string>());
  std::printf("  secrets: %s\n", List(secrets).c_str());
  if (d["action"] == "allow") std::printf("  (allow: the server runs WITHOUT a cell; none of the above is enforced)\n");
}

}  // namespace

void AddPolicyCommand(CLI::App& app, int* exit_code, const CommandTail* tail) {
  auto* cmd = app.add_subcommand("policy", "Show the default policy, or explain a policy's decision for a server");
  cmd->require_subcommand(1);
  auto* show = cmd->add_subcommand("show-default", "Print the built-in policy used when no --policy is given");
  show->callback([exit_code] {
    std::fputs(std::string(DefaultPolicyJson()).c_str(), stdout);
    *exit_code = 0;
  });
  auto req = std::make_shared<RunRequest>();
  auto json_out = std::make_shared<bool>(false);
  auto* explain = cmd->add_subcommand(
      "explain", "Show each rule, whether it held and why, the decision and the permissions; takes what 'run' "
                 "takes (flags, SERVER and its ARGS, or -- COMMAND), installs and runs nothing");
  explain->add_flag("--json", *json_out, "print the explanation as JSON");
  AddRunOptions(explain, req.get(), RunOptionSet::kPlan, *tail);
  explain->callback([explain, req, json_out, exit_code, tail] {
    if (!TakeServerWords(*explain, *tail, req.get())) {
      *exit_code = kExitUsage;
      return;
    }
    auto e = Explain(*req);
    if (!e.ok()) {
      Say(e.error().Message());
      *exit_code = ExitCodeFor(e.error());
      return;
    }
    if (*json_out) std::printf("%s\n", JsonText(*e, 2).c_str());
    else PrintText(*e);
    *exit_code = 0;
  });
}

}  // namespace mcpcell
