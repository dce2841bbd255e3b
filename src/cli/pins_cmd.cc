// `mcpcell pins list [SERVER]`, `pins diff SERVER`, `pins approve SERVER
// [--tool NAME]...`: the tool pins kept by the relay (docs/PINNING.md).
// Approving reads only the pin file: it approves exactly the version the
// relay recorded as pending (by its hash), never whatever the server says next;
// with --expect, only if that is still the version the user was shown.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/exit_codes.h"
#include "guard/pin_approval.h"
#include "guard/pin_guard.h"
#include "guard/pin_store.h"
#include "guard/tool_contract.h"
#include "util/nearest.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

void Err(const std::string& s) { SayAs("pins", s); }

// The store of `server`, or an error naming the known servers nearest to it.
Result<PinStore> StoreOf(const std::string& dir, const std::string& server) {
  auto servers = PinStore::Servers(dir);
  if (!servers.ok()) return servers.error();
  if (std::find(servers->begin(), servers->end(), server) != servers->end()) return PinStore::OpenExisting(dir, server);
  std::string hint;
  auto near = Nearest(server, *servers);
  if (!near.empty()) hint = "; did you mean " + ShellQuote(near[0]) + "?";
  return MakeError("find the pins of", server,
                   fmt::format("no server of that key has pins in {}{} (mcpcell pins list shows them)", dir, hint));
}

void PrintPending(const std::string& name, const PendingTool& p, const PinFile& f) {
  std::printf("%s: %s (seen %s)\n", VisibleText(name).c_str(), p.change.c_str(), p.seen_at.c_str());
  auto pin = f.tools.find(name);
  if (pin != f.tools.end() && !p.contract.is_null()) {
    for (const auto& c : DiffContracts(pin->second.contract, p.contract)) {
      std::printf("    %s: %s → %s\n", c.path.c_str(), c.before.c_str(), c.after.c_str());
    }
  } else if (!p.contract.is_null()) {
    std::printf("    listed as: %s\n", Displayed(p.contract, 4096).c_str());
  }
  for (const auto& fd : p.findings) {
    std::printf("    poisoning check %s (%s): %s: %s\n", fd.rule.c_str(), fd.severity.c_str(), fd.field.c_str(), fd.excerpt.c_str());
  }
}

int List(const std::string& dir, const std::string& server) {
  if (server.empty()) {
    if (::access(dir.c_str(), F_OK) != 0 && errno == ENOENT) {
      SayAs("pins", "no server has been pinned yet (" + dir + " does not exist)");
      return 0;
    }
    auto servers = PinStore::Servers(dir);
    if (!servers.ok()) return Err(servers.error().Message()), kExitSetupFailed;
    for (const auto& s : *servers) {
      auto f = PinStore::OpenExisting(dir, s)->Load();
      if (!f.ok()) return Err(f.error().Message()), kExitSetupFailed;
      std::printf("%s  %zu pinned, %zu pending\n", s.c_str(), f->tools.size(), f->pending.size());
    }
    return 0;
  }
  auto store = StoreOf(dir, server);
  if (!store.ok()) return Err(store.error().Message()), kExitUsage;
  auto f = store->Load();
  if (!f.ok()) return Err(f.error().Message()), kExitSetupFailed;
  for (const auto& [name, t] : f->tools) {
    std::string state = f->pending.count(name) != 0 ? "  PENDING " + f->pending.at(name).change : "";
    std::printf("%s  %s  pinned %s (%s)%s\n", VisibleText(name).c_str(), t.sha256.substr(0, 12).c_str(),
                t.pinned_at.c_str(), t.how.c_str(), state.c_str());
  }
  for (const auto& [name, p] : f->pending) {
    if (f->tools.count(name) == 0) std::printf("%s  PENDING %s\n", VisibleText(name).c_str(), p.change.c_str());
  }
  return 0;
}

int Diff(const std::string& dir, const std::string& server) {
  auto store = StoreOf(dir, server);
  if (!store.ok()) return Err(store.error().Message()), kExitUsage;
  auto f = store->Load();
  if (!f.ok()) return Err(f.error().Message()), kExitSetupFailed;
  if (f->pending.empty()) {
    std::printf("nothing pending: every tool %s lists matches its pin\n", server.c_str());
    return 0;
  }
  for (const auto& [name, p] : f->pending) {
    PrintPending(name, p, *f);
    std::printf("    approve only this: mcpcell pins approve %s --tool %s --expect %s\n", ShellQuote(server).c_str(),
                ShellQuote(name).c_str(), PendingDigest(*f, {name}).c_str());
  }
  // --expect: the approval is refused if a run records another version in between.
  std::printf("approve exactly what is shown: mcpcell pins approve %s --expect %s\n", ShellQuote(server).c_str(),
              PendingDigest(*f, {}).c_str());
  return 0;
}

int Approve(const std::string& dir, const std::string& server, const std::vector<std::string>& tools,
            const std::string& expect) {
  auto store = StoreOf(dir, server);
  if (!store.ok()) return Err(store.error().Message()), kExitUsage;
  auto done = ApprovePending(*store, tools, expect, PrintPending);
  if (!done.ok()) return Err(done.error().Message()), kExitSetupFailed;
  if (done->stale) return Err(done->refusal), kExitDenied;
  std::printf("approved %zu change(s) of %s\n", done->approved.size(), server.c_str());
  for (const auto& u : done->unknown) Err(fmt::format("nothing pending for tool \"{}\" (mcpcell pins diff {} shows what is)",
                                                       VisibleText(u), ShellQuote(server)));
  return done->unknown.empty() ? 0 : kExitUsage;
}

}  // namespace

void AddPinsCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("pins", "Tool pins: what each server's tools looked like when you approved them");
  cmd->require_subcommand(1);
  auto server = std::make_shared<std::string>();
  auto tools = std::make_shared<std::vector<std::string>>();
  auto* list = cmd->add_subcommand("list", "List pinned servers, or one server's tools and what is pending");
  list->add_option("server", *server, "a server key as `mcpcell pins list` shows it");
  list->callback([=] { *exit_code = List(DefaultPinsDir(), *server); });
  auto* diff = cmd->add_subcommand("diff", "Show what changed in a server's tools since they were pinned");
  diff->add_option("server", *server, "a server key")->required();
  diff->callback([=] { *exit_code = Diff(DefaultPinsDir(), *server); });
  auto* approve = cmd->add_subcommand("approve", "Approve what is pending for a server (all of it, or --tool NAME)");
  approve->add_option("server", *server, "a server key")->required();
  approve->add_option("--tool", *tools, "approve only this tool (repeatable)");
  auto expect = std::make_shared<std::string>();
  approve->add_option("--expect", *expect,
                      "approve only if what is pending still has this digest (printed by pins diff and the relay)");
  approve->callback([=] { *exit_code = Approve(DefaultPinsDir(), *server, *tools, *expect); });
}

}  // namespace mcpcell
