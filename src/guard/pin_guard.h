#pragma once
// Tool pinning for one relay session (issue 13 item 4). The relay hands every
// tools/list page to JudgePage and every tools/call name to CallDenial; the
// guard answers from the server's pin file (pin_store.h):
//  - the first complete tools list of a server never pinned is pinned as it
//    is (trust on first use), after the poisoning checks (poison_check.h);
//    with "poisoning": "block" a tool with a high-severity finding is held
//    back instead, like a new one;
//  - afterwards a tool that is new, changed (its canonical contract hashes
//    differently) or removed (a complete list without it) is hidden from
//    tools/list and refused in tools/call until `mcpcell pins approve`; the
//    pending version is written to the pin file, so approving needs no
//    running server and approves exactly what was shown;
//  - a name listed twice with different contracts is hidden (which one would
//    a client call?).
// Pins are per tool name: the order of tools and of pages never matters, and
// a tool that only some clients are shown (capability-dependent lists) keeps
// its pin while absent. Every verdict is on stderr once and in the audit log.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "guard/pin_store.h"
#include "util/error.h"
#include "util/shell_quote.h"

namespace mcpcell {

struct PinSettings {
  std::string server;   ///< the server's key (docs/PINNING.md)
  std::string dir;      ///< DefaultPinsDir() unless a test says otherwise
  bool block_poisoning = false;
};

class PinGuard {
 public:
  using AuditSink = std::function<void(nlohmann::json)>;
  using Say = std::function<void(const std::string&)>;

  /// Opens (creating) the pin store; fails when it cannot be trusted or read.
  static Result<std::shared_ptr<PinGuard>> Open(const PinSettings& settings);

  void SetAudit(AuditSink sink) { audit_ = std::move(sink); }
  /// Where its lines for the user go, each without the "mcpcell: " prefix
  /// ("pins: tool ..."); by default util/diag.h's Say, on stderr.
  void SetSay(Say say) { say_ = std::move(say); }
  /// Applied to each line before it is said: the relay masks secrets in what
  /// the server listed (a tool's description), which no scan saw (adv7).
  void SetMask(std::function<std::string(const std::string&)> mask) { mask_ = std::move(mask); }

  /// The capabilities of the client whose listing is judged next:
  /// initialize's params.capabilities, or (2026-07-28 era, no initialize)
  /// the tools/list request's params._meta clientCapabilities. Servers list some tools
  /// only to clients with some capabilities (server-everything: sampling,
  /// elicitation, roots), so the first complete list under each capability
  /// set pins the names it adds, and a removal is judged only against the
  /// tools listed to that capability set before.
  void SetClientCapabilities(const nlohmann::json& capabilities);

  /// One tools/list result page (its "tools" array): the names to hide.
  /// `last_page`: the result has no nextCursor, so the listing is complete.
  std::set<std::string> JudgePage(const nlohmann::json& tools, bool last_page);

  /// Why a tools/call of `name` is refused (what changed and the command
  /// that approves it), or nullopt.
  std::optional<std::string> CallDenial(const std::string& name);

  /// `mcpcell pins approve 'KEY' --tool 'NAME'`, shell-quoted.
  static std::string ApproveCommand(const std::string& server, const std::string& tool);

 private:
  struct Seen {
    std::string name;
    nlohmann::json contract;
    std::string sha256;
    std::vector<PoisonFinding> findings;
  };

  PinGuard(PinStore store, const PinSettings& settings, bool first_use);
  void Judge(PinFile* f, const Seen& t, std::set<std::string>* hidden);
  void MarkRemoved(PinFile* f, const std::set<std::string>& listed);
  void Hide(const std::string& name, const std::string& why);
  void Report(const std::string& name, const PendingTool& p, const PinnedTool* pinned);
  void ReportFirstUse(const Seen& t);

  PinStore store_;
  PinSettings settings_;
  bool first_use_;                               ///< no complete list seen yet in this session
  std::string client_ = "{}";                    ///< canonical client capabilities
  std::map<std::string, std::string> verdicts_;  ///< name → "" (callable) or why it is not
  std::map<std::string, std::string> listing_;   ///< this listing's names → sha256 (across pages)
  std::set<std::string> reported_;               ///< name + sha256 already said
  AuditSink audit_;
  void SayMasked(const std::string& text) const { say_(mask_ ? mask_(text) : text); }

  Say say_;
  std::function<std::string(const std::string&)> mask_;
};

}  // namespace mcpcell
