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
#include "util/terminal_text.h"

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

// Every string here may come from a file name or a package (adv10: a
// script path's ESC and CR reached the terminal raw): shown, not obeyed.
std::string V(const json& j) { return VisibleOnTerminal(j.get<std::string>()); }

void PrintText(const json& e) {
  const json& f = e["trust_facts"];
  std::printf("server:    %s  (%s)\n", V(e["server"]).c_str(), V(f["source"]).c_str());
  std::printf("facts:     kind=%s pinned=%s in_registry=%s%s registry_pinned=%s scope=%s\n",
              V(f["kind"]).c_str(), f["pinned"].get<bool>() ? "yes" : "no",
              f["in_registry"].get<bool>() ? "yes" : "no",
              f["in_registry"].get<bool>() ? (" (" + V(f["registry_name"]) + ", tier " +
                                              V(f["registry_tier"]) + ")").c_str() : "",
              f["registry_pinned"].get<bool>() ? "yes" : "no",
              V(f["publisher_scope"]).empty() ? "-" : V(f["publisher_scope"]).c_str());
  std::printf("           requests_network=%s requests_write=%s\n", f["requests_network"].get<bool>() ? "yes" : "no",
              f["requests_write"].get<bool>() ? "yes" : "no");
  std::printf("policy:    %s\n", V(e["policy"]["file"]).c_str());
  const json& d = e["decision"];
  for (const auto& r : d["rules"]) {
    std::string label = "rule " + std::to_string(r["index"].get<int>());
    if (r.contains("name")) label += " \"" + V(r["name"]) + "\"";
    std::printf("  %-28s %s -> %s: %s\n    why: %s\n", label.c_str(), VisibleOnTerminal(JsonText(r["condition"])).c_str(),
                V(r["action"]).c_str(), V(r["result"]).c_str(),
                V(r["why"]).c_str());
  }
  std::printf("decision:  %s (level %s) by %s\n", V(d["action"]).c_str(),
              V(d["level"]).c_str(), V(d["rule"]).c_str());
  std::printf("           %s\n", V(d["reason"]).c_str());
  for (const auto& w : d["warnings"]) std::printf("warning:   %s\n", V(w).c_str());
  if (d["action"] == "deny") return;
  const json& p = e["permissions"];
  std::printf("permissions (profile %s):\n", V(p["profile"]).c_str());
  if (!p.contains("read")) {  // a run without a cell (PermissionsJson)
    std::printf("  network: %s\n  (allow: the server runs WITHOUT a cell; nothing is enforced)\n",
                V(p["network"]["enforced"]).c_str());
    return;
  }
  auto visible = [](const json& list) {
    std::vector<std::string> out;
    for (const auto& x : list) out.push_back(V(x));
    return out;
  };
  std::printf("  read:    %s\n", List(visible(p["read"])).c_str());
  std::printf("  write:   %s\n", List(visible(p["write"])).c_str());
  std::printf("  network: %s\n", V(p["network"]["enforced"]).c_str());
  std::vector<std::string> secrets;
  for (const auto& sec : p["secrets"]) secrets.push_back(V(sec["name"]));
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
