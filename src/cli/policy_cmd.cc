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
#include "cli/exit_codes.h"
#include "policy/decide.h"
#include "profile/lower.h"
#include "profile/permission_profile.h"
#include "registry/catalog.h"
#include "source/server_ref.h"
#include "source/trust_facts.h"
#include "util/json_text.h"

namespace mcpcell {
namespace {

using nlohmann::json;

struct ExplainArgs {
  std::string server;
  std::optional<std::string> policy;
  std::optional<std::string> profile;
  std::vector<std::string> allow_host;
  std::vector<std::string> allow_port;
  std::vector<std::string> write;
  std::vector<std::string> args;  ///< after `--`: the server's arguments, as on run
  bool json_out = false;
};

std::string List(const std::vector<std::string>& v) {
  return v.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(v, ", "));
}

Result<json> Explain(const ExplainArgs& a) {
  auto parsed = ParseServerRef(a.server, a.args);
  if (!parsed.ok()) return parsed.error();
  DecideInputs in{a.policy, a.profile, !a.allow_host.empty() || !a.allow_port.empty(), !a.write.empty(), true};
  auto decided = Decide(*parsed, in);
  if (!decided.ok()) return decided.error();
  const RegistryEntry* entry = decided->entry_ptr();
  const Policy* policy = &decided->policy;
  const TrustFacts& facts = decided->facts;
  const Decision& d = decided->decision;
  const PermissionProfile* profile = &decided->profile;
  auto net = LowerNetwork(*profile, a.allow_host, a.allow_port);
  if (!net.ok()) return net.error();
  std::vector<std::string> write = profile->write;
  write.insert(write.end(), a.write.begin(), a.write.end());
  json secrets = json::array();
  for (const auto& [name, file] : profile->ext.secrets) secrets.push_back(name);
  return json{{"server", a.server},
              {"source", ToJson(*parsed)},
              {"registry_entry", entry ? json(entry->name) : json(nullptr)},
              {"trust_facts", ToJson(facts)},
              {"policy", policy->origin},
              {"decision", ToJson(d)},
              {"permissions", {{"profile", profile->name},
                               {"read", profile->read},
                               {"write", write},
                               {"network", {{"mode", ToString(net->spec.mode)},
                                            {"allow_hosts", net->spec.allow_hosts},
                                            {"allow_ports", net->spec.allow_ports},
                                            {"enforced", net->enforced}}},
                               {"secrets", secrets}}}};
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
  std::printf("policy:    %s\n", e["policy"].get<std::string>().c_str());
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
  std::printf("  secrets: %s\n", List(p["secrets"].get<std::vector<std::string>>()).c_str());
  if (d["action"] == "allow") std::printf("  (allow: the server runs WITHOUT a cell; none of the above is enforced)\n");
}

}  // namespace

void AddPolicyCommand(CLI::App& app, int* exit_code, const std::vector<std::string>* after_dashes) {
  auto* cmd = app.add_subcommand("policy", "Show the default policy, or explain a policy's decision for a server");
  cmd->require_subcommand(1);
  auto* show = cmd->add_subcommand("show-default", "Print the built-in policy used when no --policy is given");
  show->callback([exit_code] {
    std::fputs(std::string(DefaultPolicyJson()).c_str(), stdout);
    *exit_code = 0;
  });
  auto args = std::make_shared<ExplainArgs>();
  auto* explain = cmd->add_subcommand("explain", "Show each rule, whether it held and why, the decision and the permissions");
  explain->add_option("server", args->server, "npx://pkg[@ver], uvx://pkg, docker://image, registry name or command")->required();
  explain->add_option("--policy", args->policy, "policy file (default: the built-in policy)");
  explain->add_option("--permission-profile", args->profile, "profile the server would be run with: none, network or FILE");
  explain->add_option("--allow-host", args->allow_host, "as on run");
  explain->add_option("--allow-port", args->allow_port, "as on run");
  explain->add_option("--write", args->write, "as on run");
  explain->add_flag("--json", args->json_out, "print the explanation as JSON");
  explain->callback([args, exit_code, after_dashes] {
    args->args = *after_dashes;
    auto e = Explain(*args);
    if (!e.ok()) {
      std::fprintf(stderr, "mcpcell: %s\n", e.error().Message().c_str());
      *exit_code = kExitUsage;
      return;
    }
    if (args->json_out) std::printf("%s\n", JsonText(*e, 2).c_str());
    else PrintText(*e);
    *exit_code = 0;
  });
}

}  // namespace mcpcell
