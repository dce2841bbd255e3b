#pragma once
// The relay's decisions, message by message, with no I/O: the pump
// (relay_pump.h) reads lines, asks McpRelay what to do with each, and does
// it. Both directions carry requests, responses and notifications; ids are
// tracked per direction (both sides number from 0), so a response is passed
// only if the other side asked that exact id and has not been answered yet.
// Both MCP eras: nothing waits for initialize; the 2026-07-28 era's
// per-request _meta is read per request; every tools/list result is filtered
// on its own, and an input_required round's retry is judged like a first call.
//
// Threads: FromClient and FromServer may run at once (the pump calls each
// from its own thread). A line's parse and secret scan read only that
// direction's own parser and scan state, and run outside the relay's lock;
// every decision that reads or changes what both directions share (the
// pending ids, rounds, limits, pins, counters, the audit log and its order)
// runs under it, for the whole of one line's decision, before FromClient or
// FromServer returns: a request is pending before the pump writes it on.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "guard/key_block.h"
#include "guard/secret_policy.h"
#include "util/error.h"
#include "relay/line_framer.h"
#include "relay/tool_filter.h"

namespace simdjson::dom {
class element;
}  // namespace simdjson::dom

namespace mcpcell {

// envelope.h (simdjson) stays out of the headers that include this one.
struct Envelope;
struct Refusal;
struct RpcId;
class EnvelopeParser;
class SecretGuard;
struct SecretFinding;
class PinGuard;

struct RelayConfig {
  std::string server;                              ///< as the audit log names it
  ToolRules tools;
  std::size_t max_message = 64 * 1024 * 1024;      ///< bytes per line, either direction
  std::size_t max_pending = 4096;                  ///< unanswered requests per direction
  // Limits on calls (tools/call, resources/read, prompts/get) from the client;
  // each refusal is a JSON-RPC error with the call's id, and audited.
  double call_rate = 0;                            ///< token bucket refill per second; 0: no limit
  std::size_t call_burst = 0;                      ///< the bucket's size
  std::size_t max_inflight = 0;                    ///< unanswered calls at once; 0: no limit
  std::chrono::milliseconds call_timeout{0};       ///< 0: none
  bool audit_content = false;                      ///< --audit-content: arguments and results as they are
  SecretPolicy secrets{};                          ///< the secret scan, both directions (src/guard/)
  std::shared_ptr<PinGuard> pins{};                ///< tool pinning (src/guard/pin_guard.h); null: off
  /// mcpcell.prompts / mcpcell.resources: hidden from prompts/list and
  /// resources/list, prompts/get and resources/read refused, like tools.
  ToolRules prompts{{}, {}, {}, "prompt", "mcpcell.prompts"};
  ToolRules resources{{}, {}, {}, "resource", "mcpcell.resources"};
  /// mcpcell.pins.poisoning "block": an elicitation or sampling request with
  /// a high poisoning finding is refused (else passed, audited and said).
  bool block_input_requests = false;
};

/// What to do with one line read from a side.
struct RelayAction {
  enum class Forward { kAsIs, kReplaced, kDrop };
  Forward forward = Forward::kAsIs;
  std::string replacement;  ///< kReplaced: the line to pass on instead (no newline)
  std::string reply;        ///< a line back to the side it came from (no newline); may be empty
};

class McpRelay {
 public:
  /// Writes one record. A failure (disk full, EIO, the log removed or
  /// replaced) closes the relay's calls: every later tools/call,
  /// resources/read and prompts/get is refused naming the failure, and an
  /// answer whose record could not be written is withheld from the client
  /// (an error instead), so no call's result is served unrecorded.
  /// Given the record as JSON (any function of a const json&), or, made by
  /// Text, as the compact object text the secret scan read, for
  /// AuditLog::WriteObject: no copy and no second dump per record.
  struct AuditSink {
    std::function<Status(const nlohmann::json&)> json;
    std::function<Status(std::string_view object)> text;

    AuditSink() = default;
    AuditSink(std::nullptr_t) {}  // NOLINT(google-explicit-constructor): no log
    template <typename F, typename = std::enable_if_t<std::is_invocable_r_v<Status, F&, const nlohmann::json&>>>
    AuditSink(F f) : json(std::move(f)) {}  // NOLINT(google-explicit-constructor)
    /// `f` gets the record as AuditLog::WriteObject takes it.
    static AuditSink Text(std::function<Status(std::string_view object)> f) {
      AuditSink s;
      s.text = std::move(f);
      return s;
    }
    explicit operator bool() const { return json || text; }
  };
  McpRelay(RelayConfig config, AuditSink audit);
  ~McpRelay();

  /// A line the client wrote (to the server's stdin).
  RelayAction FromClient(const LineFramer::Line& line);
  /// A line the server wrote (to the client's stdout).
  RelayAction FromServer(const LineFramer::Line& line);
  /// The session ended: calls still unanswered are audited, then session_end.
  void End();
  /// When the relay last stopped holding up every message to prepare (the
  /// secret rules, compiled at the first message): steady_clock nanoseconds,
  /// INT64_MAX while it prepares, 0 when it never did. The supervisor's stop
  /// order counts its grace period from there: a server blocked writing to
  /// a relay that reads nothing yet is not slow to exit.
  std::int64_t BusyUntilNs() const { return busy_until_ns_.load(); }

  /// Milliseconds until the earliest call's timeout (0 when one is due), or -1 when none is set.
  int MsToNextDeadline();
  /// Calls whose timeout passed: for each, the client's error (`reply`) and,
  /// while the server's stdin is open (`tell_server`), its
  /// notifications/cancelled (`replacement`, kReplaced). A late answer to
  /// such a call is dropped (the client was answered already).
  std::vector<RelayAction> Expire(bool tell_server = true);

 private:
  enum Side { kClient = 0, kServer = 1 };
  struct Pending {
    std::string method;
    std::string subject;       ///< tool name, resource uri or prompt name
    std::string protocol;      ///< params._meta protocolVersion (2026-07-28 era), if any
    nlohmann::json client;     ///< params._meta clientInfo (2026-07-28 era), if any
    /// tools/list: the capabilities of the client that asks, which the pins
    /// key a listing by: params._meta clientCapabilities (2026-07-28 era),
    /// else initialize's (null: none known).
    nlohmann::json capabilities;
    nlohmann::json arguments;  ///< redacted summary
    std::chrono::steady_clock::time_point start;
    std::size_t bytes_in = 0;
    bool audited = false;      ///< tools/call, resources/read, prompts/get; not yet recorded
    bool call = false;         ///< a call: counts against --max-inflight until answered or expired, cancelled or not
    bool expired = false;      ///< answered by the relay's timeout; the server's answer is dropped
    // Multi round-trip calls (2026-07-28): an input_required answer carries an
    // opaque requestState; the client's retry with it is the same call's next round.
    std::string request_state;          ///< params.requestState of this round, if any
    nlohmann::json input_responses;     ///< params.inputResponses, redacted like arguments
    std::uint32_t rounds = 1;
    nlohmann::json round_ids;           ///< ids of the earlier rounds (an array once there are any)
    std::size_t bytes_out = 0;          ///< the earlier rounds' answers
    bool unknown_state = false;         ///< a requestState no input_required answer gave
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  };

  RelayAction FromSide(Side from, const LineFramer::Line& line);
  /// The secret rules, compiled once, by the first line of either side.
  void PrepareSecrets();
  /// Dispatch under the relay's lock (the line's scan, if any, done).
  RelayAction Decide(Side from, const Envelope& env, const LineFramer::Line& line);
  static RelayAction Unbroken(RelayAction a, const LineFramer::Line& line);
  // From here on, every function that reads or writes the shared members
  // (all but parsers_ and side_secrets_) runs with mu_ held; GuardSecrets and
  // GuardPlainText scan first and take it for their decision.
  RelayAction Request(Side from, const Envelope& env, std::size_t bytes);
  RelayAction Response(Side from, const Envelope& env, std::string_view line);
  RelayAction Notification(Side from, const Envelope& env);
  RelayAction Refused(Side from, const Refusal& r, std::size_t bytes);
  std::optional<Refusal> JudgeRequest(const Envelope& env, Pending* p);
  std::optional<Refusal> CheckLimits(const Envelope& env, std::string* limit);
  void LinkRound(Pending* p);
  RelayAction RefuseCall(const Pending& p, const RpcId& id, const Refusal& r, const char* outcome, nlohmann::json extra);
  bool AwaitNextRound(Pending& p, const Envelope& env, std::size_t bytes);
  bool AuditCall(const Pending& p, const std::string& id, std::string outcome, std::size_t bytes_out,
                 nlohmann::json extra);
  std::optional<Refusal> AuditBroken(const Envelope& env) const;
  RelayAction Withheld(const Envelope& env, std::string_view method);
  /// The answer as the client gets it; `*refused` when it is an error in its place.
  std::string FilterToolsList(const Envelope& env, std::string_view line, const nlohmann::json& capabilities,
                              std::size_t* hidden, bool* refused);
  void ApplyContentRules(const std::string& method, const Envelope& env, std::string_view line, RelayAction* a);
  /// A prompts/list or resources/list result without what `filter` denies; nullopt: nothing to change.
  std::optional<std::string> FilterList(const Envelope& env, std::string_view array, std::string_view name,
                                        const ToolFilter& filter);
  bool Audit(nlohmann::json event);  ///< false when the record could not be written
  /// The record, or a text the relay quotes from a message, with every secret
  /// the scan finds masked (mcp_relay_secrets.cc): records and refusals are
  /// built from the message as it came, not as it was passed on.
  void MaskSecretsIn(nlohmann::json* event);
  /// `*event` masked as MaskSecretsIn does, dumped as its record's text
  /// (compact, invalid UTF-8 replaced): the scan's own dump when it is clean.
  std::string MaskedDump(nlohmann::json* event);
  std::string MaskedText(const std::string& text);
  // The secret scan (mcp_relay_secrets.cc): before dispatch a request or
  // notification with a secret is blocked; after it, a response is blocked
  // or any message redacted.
  void InitSecrets();
  RelayAction Dispatch(Side from, const Envelope& env, const LineFramer::Line& line);
  RelayAction GuardSecrets(Side from, const Envelope& env, const LineFramer::Line& line);
  RelayAction GuardPlainText(Side from, const LineFramer::Line& line);
  RelayAction BlockSecrets(Side from, const Envelope& env, const std::vector<SecretFinding>& found,
                           const LineFramer::Line& line);
  void AuditSecrets(Side from, const Envelope& env, const std::vector<SecretFinding>& found, const char* action);
  // What a server asks of the client (mcp_relay_inputs.cc): an elicitation or
  // sampling request, as a request or an input_required answer's
  // inputRequests. Audited when the poisoning checks find something; the
  // refusal's message when "poisoning" is "block" and a finding is high.
  std::optional<std::string> JudgeInputRequest(std::string_view method, const simdjson::dom::element* params,
                                               const nlohmann::json& where);
  /// `holder`'s inputRequests (a result, or a notification's params: the
  /// tasks extension's tasks/get and notifications/tasks carry them too).
  std::optional<std::string> JudgeInputRequests(const simdjson::dom::element& holder, std::string_view via,
                                                const nlohmann::json& id);

  RelayConfig config_;
  ToolFilter filter_;
  ToolFilter prompt_filter_, resource_filter_;
  AuditSink audit_;
  /// Held for every decision on shared state (the class comment); never
  /// while a line is parsed or scanned. Taken after side_mu_, never before.
  std::mutex mu_;
  /// One line per direction at a time: parsers_[i] and side_secrets_[i] are that direction's.
  std::mutex side_mu_[2];
  std::unique_ptr<EnvelopeParser> parsers_[2];
  std::map<std::string, Pending> pending_[2];  ///< requests sent by side i, by id key
  std::map<std::string, Pending> rounds_;      ///< calls waiting for their next round, by requestState
  std::uint64_t calls_ = 0, denied_ = 0, forged_ = 0, refused_ = 0, limited_ = 0, late_ = 0;
  double tokens_ = 0;  ///< the call-rate bucket
  std::chrono::steady_clock::time_point refilled_;
  std::atomic<std::uint64_t> unjudged_[2] = {0, 0};  ///< lines that cannot be messages, passed as they came
  /// The scan of audit records and quoted texts, under mu_; null when both directions are off.
  std::unique_ptr<SecretGuard> secrets_;
  /// Each direction's scan of its lines, under side_mu_[i], outside mu_ (forks of secrets_).
  std::unique_ptr<SecretGuard> side_secrets_[2];
  /// Each direction's private key printed over plain (non-JSON) lines, as the
  /// stderr copy follows one (guard/key_block.h), under side_mu_[i].
  KeyBlockLines plain_keys_[2];
  std::string secrets_error_;                  ///< the rules did not compile: every message is refused
  std::once_flag secrets_made_;                ///< InitSecrets ran (at the first message, not at launch)
  std::atomic<std::int64_t> busy_until_ns_{0};  ///< BusyUntilNs
  std::string audit_error_;  ///< the first failed audit write; calls are refused from then on
  bool ended_ = false;
  bool said_server_drop_ = false;  ///< the first dropped server line was told on stderr
  nlohmann::json session_capabilities_;  ///< initialize's params.capabilities (2025 era), for the pins
  std::uint64_t input_said_ = 0;         ///< input requests flagged on stderr so far (bounded)
  static constexpr std::uint64_t kMaxServerNoise = 100;  ///< forged/refused server lines recorded one by one
  std::uint64_t server_noise_ = 0, held_back_ = 0;
};

}  // namespace mcpcell
