#include "guard/pin_guard.h"

#include <fmt/format.h>

#include "guard/pin_approval.h"
#include "guard/poison_check.h"
#include "guard/tool_contract.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

using json = nlohmann::json;

constexpr std::size_t kStderrChanges = 8;  ///< diff lines on stderr per tool; `pins diff` shows all
/// Pending entries kept per server: a server inventing new names on every run
/// must not grow the user's state without bound. Past it, new names are still
/// hidden and refused, only not recorded for approval.
constexpr std::size_t kMaxPending = 1000;

json ChangesJson(const std::vector<FieldChange>& changes) {
  json a = json::array();
  for (const auto& c : changes) a.push_back({{"field", c.path}, {"before", c.before}, {"after", c.after}});
  return a;
}

std::string Why(const std::string& change) {
  if (change == "changed") return "changed since it was pinned";
  if (change == "removed") return "was pinned but the server no longer lists it";
  if (change == "poisoned") return "has poisoning findings and the profile says \"poisoning\": \"block\"";
  if (change == "duplicate") return "is listed more than once with different contracts";
  return "is new since the server's tools were pinned";
}

}  // namespace

std::string PinGuard::ApproveCommand(const std::string& server, const std::string& tool) {
  return "mcpcell pins approve " + ShellQuote(server) + " --tool " + ShellQuote(tool);
}

Result<std::shared_ptr<PinGuard>> PinGuard::Open(const PinSettings& settings) {
  auto store = PinStore::Open(settings.dir, settings.server);
  if (!store.ok()) return store.error();
  auto f = store->Load();
  if (!f.ok()) return f.error();
  return std::shared_ptr<PinGuard>(new PinGuard(std::move(*store), settings, /*first_use=*/true));
}

PinGuard::PinGuard(PinStore store, const PinSettings& settings, bool first_use)
    : store_(std::move(store)), settings_(settings), first_use_(first_use) {
  say_ = [](const std::string& s) { mcpcell::Say(s); };
}

void PinGuard::SetClientCapabilities(const json& capabilities) {
  try {
    client_ = capabilities.is_object() ? CanonicalText(capabilities) : "{}";
  } catch (const json::exception&) {
    client_ = "{}";
  }
}

void PinGuard::Hide(const std::string& name, const std::string& why) { verdicts_[name] = why; }

std::set<std::string> PinGuard::JudgePage(const json& tools, bool last_page) {
  std::set<std::string> hidden;
  std::map<std::string, int> count;
  std::vector<Seen> seen;
  std::vector<std::string> names;
  for (const auto& t : tools) {
    if (t.is_object() && t.contains("name") && t["name"].is_string()) names.push_back(t["name"]);
  }
  for (const auto& n : names) ++count[n];
  for (const auto& t : tools) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) continue;  // the relay hides these
    Seen s{t["name"], CanonicalJson(t), "", {}};
    try {
      s.sha256 = ContractHash(t);
    } catch (const json::exception& e) {  // invalid UTF-8 cannot pass the relay; fail closed anyway
      hidden.insert(s.name);
      Hide(s.name, std::string("its listing cannot be hashed: ") + e.what());
      continue;
    }
    auto earlier = listing_.find(s.name);
    bool duplicate = count[s.name] > 1 || (earlier != listing_.end() && earlier->second != s.sha256);
    if (duplicate) {
      // A client would keep one of them, the user approved at most one.
      hidden.insert(s.name);
      std::string why = fmt::format("tool \"{}\" of {} {}; it is hidden and refused", s.name, settings_.server, Why("duplicate"));
      if (reported_.insert(s.name + "#duplicate").second) {
        // The name is the server's text: an ESC in it must not drive the user's terminal.
        SayMasked(fmt::format("pins: tool \"{}\" of {} {}; it is hidden and refused", VisibleText(s.name),
                         settings_.server, Why("duplicate")));
        if (audit_) audit_({{"event", "tool_pin"}, {"tool", s.name}, {"change", "duplicate"}, {"action", "hidden"}});
      }
      Hide(s.name, why);
      continue;
    }
    listing_[s.name] = s.sha256;
    s.findings = CheckTool(t, names);
    seen.push_back(std::move(s));
  }
  Status st = store_.Update([&](PinFile* f) {
    for (const auto& s : seen) Judge(f, s, &hidden);
    if (last_page) {
      std::set<std::string> listed;
      for (const auto& [n, h] : listing_) listed.insert(n);
      MarkRemoved(f, listed);
      f->clients.insert(client_);
    }
  });
  if (!st.ok()) {
    // Fail closed: without a pin written or read, nothing this page lists is known to be what was approved.
    std::string why = "the pin store failed: " + st.error().Message();
    SayMasked("pins: " + why + "; every tool of this list is hidden");
    if (audit_) audit_({{"event", "tool_pin"}, {"change", "store_error"}, {"reason", why}, {"action", "hidden"}});
    for (const auto& s : seen) {
      hidden.insert(s.name);
      Hide(s.name, why);
    }
  }
  if (last_page) {
    listing_.clear();
    first_use_ = false;  // first use is the first complete list, not the whole first session
  }
  return hidden;
}

void PinGuard::Judge(PinFile* f, const Seen& t, std::set<std::string>* hidden) {
  auto pin = f->tools.find(t.name);
  // First use for this client's capability set: its first complete list.
  bool first = first_use_ && f->clients.count(client_) == 0;
  if (pin != f->tools.end() && pin->second.sha256 == t.sha256) {
    f->pending.erase(t.name);  // what was pending is no longer what the server lists
    pin->second.clients.insert(client_);
    verdicts_[t.name] = "";
    return;
  }
  if (pin == f->tools.end() && first && !(settings_.block_poisoning && HasHighSeverity(t.findings))) {
    f->tools[t.name] = {t.sha256, t.contract, UtcNow(), "first use", t.findings, {client_}};
    verdicts_[t.name] = "";
    ReportFirstUse(t);
    return;
  }
  std::string change = pin != f->tools.end() ? "changed" : first ? "poisoned" : "new";
  if (f->pending.count(t.name) == 0 && f->pending.size() >= kMaxPending) {
    hidden->insert(t.name);
    Hide(t.name, fmt::format("tool \"{}\" of {} {}, and {} changes already wait for approval; review them first: "
                             "mcpcell pins diff {}",
                             t.name, settings_.server, Why(change), kMaxPending, ShellQuote(settings_.server)));
    return;
  }
  auto& p = f->pending[t.name];
  if (p.sha256 != t.sha256 || p.change != change) p = {change, t.sha256, t.contract, UtcNow(), t.findings};
  hidden->insert(t.name);
  Hide(t.name, fmt::format("tool \"{}\" of {} {}; it is refused until you approve it (see what changed: mcpcell pins "
                           "diff {}): {}",
                           t.name, settings_.server, Why(change), ShellQuote(settings_.server),
                           ApproveCommand(settings_.server, t.name)));
  Report(t.name, p, pin != f->tools.end() ? &pin->second : nullptr);
}

// A pinned tool missing from a complete list. Not an alarm on its own (a
// server may list some tools only to clients with some capabilities), but it
// is not callable: the user approved a tool that, as far as this session
// knows, the server no longer offers under that contract.
void PinGuard::MarkRemoved(PinFile* f, const std::set<std::string>& listed) {
  for (const auto& [name, pin] : f->tools) {
    // A tool listed only to other clients is not missing from this one's list.
    if (listed.count(name) != 0 || pin.clients.count(client_) == 0) continue;
    auto& p = f->pending[name];
    if (p.change.empty()) p = {"removed", "", nullptr, UtcNow(), {}};
    if (p.change != "removed") continue;  // a pending change of it stays what the user will see
    Hide(name, fmt::format("tool \"{}\" of {} {}; calls to it are refused until you approve the removal: {}", name,
                           settings_.server, Why("removed"), ApproveCommand(settings_.server, name)));
    Report(name, p, &pin);
  }
}

void PinGuard::Report(const std::string& name, const PendingTool& p, const PinnedTool* pinned) {
  if (!reported_.insert(name + "#" + p.change + "#" + p.sha256).second) return;
  std::vector<FieldChange> changes;
  if (pinned != nullptr && !p.contract.is_null()) changes = DiffContracts(pinned->contract, p.contract);
  std::string text = fmt::format("pins: tool \"{}\" of {} {}", VisibleText(name), settings_.server, Why(p.change));
  if (pinned != nullptr) text += fmt::format(" (pinned {}, {})", pinned->pinned_at, pinned->how);
  text += p.change == "removed" ? "; calls to it are refused until approved:" : "; it is hidden and refused until approved:";
  for (std::size_t i = 0; i < changes.size() && i < kStderrChanges; ++i) {
    text += fmt::format("\n    {}: {} → {}", changes[i].path, changes[i].before, changes[i].after);
  }
  if (changes.size() > kStderrChanges) text += fmt::format("\n    … {} more changes", changes.size() - kStderrChanges);
  if (p.change == "new" || p.change == "poisoned") text += "\n    listed as: " + Displayed(p.contract);
  for (const auto& fd : p.findings) {
    text += fmt::format("\n    poisoning check {} ({}): {}: {}", fd.rule, fd.severity, fd.field, fd.excerpt);
  }
  // --expect: the approval then takes exactly the version shown here, even
  // if a later run records another before the user types it.
  // Visibly: the name is the server's text (a name with ESC cannot be typed anyway).
  std::string approve = VisibleText(ApproveCommand(settings_.server, name)) + " --expect " + PendingDigest(name, p);
  text += fmt::format("\n    review: mcpcell pins diff {}\n    approve: {}", ShellQuote(settings_.server), approve);
  SayMasked(text);
  if (!audit_) return;
  json e{{"event", "tool_pin"}, {"tool", name}, {"change", p.change}, {"action", "hidden"},
         {"sha256", p.sha256}, {"diff", ChangesJson(changes)}, {"findings", ToJson(p.findings)},
         {"approve", approve}};
  if (pinned != nullptr) e["pinned_sha256"] = pinned->sha256;
  audit_(std::move(e));
}

void PinGuard::ReportFirstUse(const Seen& t) {
  if (audit_) {
    audit_({{"event", "tool_pin"}, {"tool", t.name}, {"change", "first_use"}, {"action", "pinned"},
            {"sha256", t.sha256}, {"findings", ToJson(t.findings)}});
  }
  // Low findings (a URL, a sibling tool named) are in the audit record only:
  // honest servers have them, and a warning on every first run teaches users to skip warnings.
  if (!HasHighSeverity(t.findings) || !reported_.insert(t.name + "#first").second) return;
  std::string text = fmt::format("pins: warning: tool \"{}\" of {} was pinned on first use with poisoning findings "
                                 "(set \"poisoning\": \"block\" in the profile's mcpcell.pins to hold such tools back):",
                                 VisibleText(t.name), settings_.server);
  for (const auto& fd : t.findings) {
    if (fd.severity == "high") text += fmt::format("\n    {} ({}): {}: {}", fd.rule, fd.severity, fd.field, fd.excerpt);
  }
  SayMasked(text);
}

std::optional<std::string> PinGuard::CallDenial(const std::string& name) {
  if (auto v = verdicts_.find(name); v != verdicts_.end()) {
    if (v->second.empty()) return std::nullopt;
    return v->second;
  }
  // Not listed in this session: callable only as pinned and with nothing pending.
  auto f = store_.Load();
  if (!f.ok()) return "the pin store failed: " + f.error().Message();
  auto pin = f->tools.find(name);
  auto pending = f->pending.find(name);
  if (pin != f->tools.end() && pending == f->pending.end()) return std::nullopt;
  if (pending != f->pending.end()) {
    return fmt::format("tool \"{}\" of {} {}; it is refused until you approve it: {}", name, settings_.server,
                       Why(pending->second.change), ApproveCommand(settings_.server, name));
  }
  // Trust on first use: with nothing pinned yet there is nothing to hold a
  // call against (a client that calls before it lists, a raw JSON-RPC peer).
  if (!f->exists) return std::nullopt;
  return fmt::format("tool \"{}\" of {} has no pin and was not listed by the server in this session, so mcpcell cannot "
                     "tell what it is; list the tools (tools/list) first",
                     VisibleText(name), settings_.server);
}

}  // namespace mcpcell
