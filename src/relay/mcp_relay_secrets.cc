// The relay's secret scan (docs/SECRETS.md): McpRelay's side of
// src/guard/secret_guard.h. Kept out of mcp_relay.cc so the relay's message
// logic and the guard meet at one call site (FromSide → GuardSecrets).
// A line is scanned (and masked) with its direction's own guard, outside
// the relay's lock; what the scan found is then recorded and the message
// decided under the lock, in one hold (mcp_relay.h, "Threads").

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "audit/sha256.h"
#include "guard/secret_guard.h"
#include "relay/envelope.h"
#include "relay/mcp_relay.h"
#include "util/json_text.h"

namespace mcpcell {
namespace {

constexpr const char* kFrom[2] = {"client", "server"};
constexpr std::size_t kListedFindings = 32;  ///< per audit record; the count is always exact

// The rule names only: a refusal never quotes the message it refuses.
std::string RuleNames(const std::vector<SecretFinding>& found) {
  std::set<std::string> names;
  for (const auto& f : found) names.insert(f.rule);
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

void McpRelay::InitSecrets() {
  const SecretPolicy& p = config_.secrets;
  if (p.to_server == SecretMode::kOff && p.to_client == SecretMode::kOff) return;
  // The records' guard, and a fork (its own scratch, the same rules) per direction.
  Status made = [&]() -> Status {
    auto guard = SecretGuard::Create(p);
    MCPCELL_TRY(guard);
    for (Side side : {kClient, kServer}) {
      auto fork = (*guard)->Fork();
      MCPCELL_TRY(fork);
      side_secrets_[side] = std::move(*fork);
    }
    secrets_ = std::move(*guard);
    return {};
  }();
  if (!made) {
    for (auto& g : side_secrets_) g.reset();
    // Fail closed: a scan that cannot run refuses every message, saying why.
    secrets_error_ = "mcpcell relay: the secret scan cannot start (" + made.error().Message() +
                     "); fix mcpcell.secrets in " + p.origin + " or set its mode to off";
  }
}

// A record names the tool, URI, argument keys and ids of the message as it
// came (and with --audit-content its values): in redact mode they held the
// very token the peer never saw (adversary pass, relay_secret_echo_test.cc).
// The record is masked like a message; one no mask makes clean keeps only
// its event name.
void McpRelay::MaskSecretsIn(nlohmann::json* event) {
  if (secrets_) (void)MaskedDump(event);
}

std::string McpRelay::MaskedDump(nlohmann::json* event) {
  std::string line = JsonText(*event);
  if (!secrets_) return line;
  std::vector<SecretFinding> found;
  auto masked = secrets_->RedactLine(line, &found);
  // Only the NUL between two strings (a profile rule of any byte): no secret of the message's.
  if (std::none_of(found.begin(), found.end(), [](const SecretFinding& f) { return f.bytes > 0; })) return line;
  nlohmann::json clean = masked ? nlohmann::json::parse(*masked, nullptr, false) : nlohmann::json();
  if (clean.type() == event->type()) {
    *event = std::move(clean);
  } else if (event->is_object()) {
    *event = {{"event", event->value("event", "")}, {"withheld", "the record held a secret no mask cleans"}};
  } else {
    *event = "(withheld: it held a secret no mask cleans)";
  }
  // Reparsed and dumped again: the record's text is the masked JSON as dump() writes it.
  return JsonText(*event);
}

std::string McpRelay::MaskedText(const std::string& text) {
  nlohmann::json j = text;
  MaskSecretsIn(&j);
  return j.get<std::string>();
}

void McpRelay::AuditSecrets(Side from, const Envelope& env, const std::vector<SecretFinding>& found,
                            const char* action) {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < found.size() && i < kListedFindings; ++i) {
    list.push_back({{"rule", found[i].rule}, {"sha256", found[i].sha256}, {"bytes", found[i].bytes}});
  }
  SecretMode mode = from == kClient ? config_.secrets.to_server : config_.secrets.to_client;
  nlohmann::json e{{"event", "secret"}, {"from", kFrom[from]}, {"mode", SecretModeName(mode)},
                   {"action", action}, {"count", found.size()}, {"findings", std::move(list)}};
  if (!env.method.empty()) e["method"] = env.method;
  if (env.id) e["id"] = nlohmann::json::parse(env.id->json, nullptr, false);
  Audit(std::move(e));
}

// Scan and mask with this direction's guard (side_mu_ held, mu_ not); the
// findings' record and the message's decision in one hold of mu_, so the
// secret's record comes right before the message's own.
RelayAction McpRelay::GuardSecrets(Side from, const Envelope& env, const LineFramer::Line& line) {
  if (!secrets_error_.empty()) {
    Refusal r{kRefusedByPolicy, secrets_error_, env.id ? env.id->json : "null", env.id ? env.id->key : ""};
    std::lock_guard lock(mu_);
    return Refused(from, r, line.size);
  }
  SecretMode mode = from == kClient ? config_.secrets.to_server : config_.secrets.to_client;
  if (mode == SecretMode::kOff) return Decide(from, env, line);
  SecretGuard& guard = *side_secrets_[from];
  std::vector<SecretFinding> found = guard.Scan(env.root, line.text);
  if (found.empty()) return Decide(from, env, line);
  std::vector<SecretFinding> again;
  std::optional<std::string> masked;
  if (mode == SecretMode::kRedact) masked = guard.Redact(env.root, &again);  // env is read, never reparsed, after
  RelayAction a;
  {
    std::lock_guard lock(mu_);
    if (mode == SecretMode::kBlock || (mode == SecretMode::kRedact && !masked)) {  // no mask makes it clean: fail closed
      return BlockSecrets(from, env, found, line);
    }
    AuditSecrets(from, env, found, mode == SecretMode::kAudit ? "passed" : "redacted");
    a = Dispatch(from, env, line);
  }
  if (mode == SecretMode::kAudit) return a;
  // A refusal judged the message as it came and may quote it (a denied tool's name).
  if (!a.reply.empty()) {
    auto reply_masked = guard.RedactLine(a.reply, &again);
    a.reply = reply_masked ? std::move(*reply_masked) : ErrorResponse(env.id ? env.id->json : "null", kRefusedByPolicy,
                                                                      "mcpcell: refused; the refusal held a secret");
  }
  if (a.forward == RelayAction::Forward::kAsIs) {
    a.forward = RelayAction::Forward::kReplaced;
    a.replacement = std::move(*masked);
  } else if (a.forward == RelayAction::Forward::kReplaced) {
    // A line the relay rebuilt from the message (a filtered tools/list).
    auto line_masked = guard.RedactLine(a.replacement, &again);
    a.replacement = line_masked ? std::move(*line_masked) : ErrorResponse(env.id ? env.id->json : "null", kRefusedByPolicy,
                                                                          "mcpcell: a secret in this answer cannot be masked");
  }
  return a;
}

// A line no reader takes for a message still reaches the peer's reader (and
// a JSON parser's error quotes it into the client's log): a token in it
// passed unscanned in every mode (adversary pass, relay_secret_echo_test.cc).
// It is scanned as one string; with a finding it is masked or dropped, else
// it passes byte for byte.
RelayAction McpRelay::GuardPlainText(Side from, const LineFramer::Line& line) {
  SecretMode mode = from == kClient ? config_.secrets.to_server : config_.secrets.to_client;
  if (mode == SecretMode::kOff || !side_secrets_[from]) return {};
  std::vector<SecretFinding> found;
  std::optional<std::string> masked;
  if (plain_keys_[from].Body(line.text)) {
    // A body line of a private key printed over several lines: no line of
    // it holds the header the rule needs, so the block is followed here.
    found.push_back({"private-key-block", Sha256Hex(line.text), line.text.size()});
    masked = JsonText(nlohmann::json("[REDACTED:private-key-block]"));
  } else {
    std::string quoted = JsonText(nlohmann::json(std::string(line.text)));
    masked = side_secrets_[from]->RedactLine(quoted, &found);  // side_mu_ held, mu_ not
  }
  if (found.empty()) return {};
  nlohmann::json e{{"event", "secret"}, {"from", kFrom[from]}, {"mode", SecretModeName(mode)}, {"count", found.size()},
                   {"plain_text", true}};
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < found.size() && i < kListedFindings; ++i) {
    list.push_back({{"rule", found[i].rule}, {"sha256", found[i].sha256}, {"bytes", found[i].bytes}});
  }
  e["findings"] = std::move(list);
  RelayAction a;
  nlohmann::json text = masked ? nlohmann::json::parse(*masked, nullptr, false) : nlohmann::json();
  if (mode == SecretMode::kAudit) {
    e["action"] = "passed";
  } else if (mode == SecretMode::kRedact && text.is_string()) {
    e["action"] = "redacted";
    a.forward = RelayAction::Forward::kReplaced;
    a.replacement = text.get<std::string>();
  } else {
    e["action"] = "blocked";
    a.forward = RelayAction::Forward::kDrop;
  }
  std::lock_guard lock(mu_);
  Audit(std::move(e));
  return a;
}

// A request or notification is refused before it is recorded as pending; a
// response is recorded as answered (its asker must not wait), then replaced:
// a tool call's result by an isError result, anything else by an error.
RelayAction McpRelay::BlockSecrets(Side from, const Envelope& env, const std::vector<SecretFinding>& found,
                                   const LineFramer::Line& line) {
  AuditSecrets(from, env, found, "blocked");
  std::string how = fmt::format("mcpcell.secret_scan.{} is block ({}); remove the secret, or set it to redact, audit or off",
                                from == kClient ? "to_server" : "to_client", config_.secrets.origin);
  std::string what = env.kind == Envelope::Kind::kResponse ? "answer" : env.method + " " +
                     (env.kind == Envelope::Kind::kRequest ? "request" : "notification");
  std::string msg = fmt::format("mcpcell: the {}'s {} carries a secret ({}) and was blocked; {}", kFrom[from], what,
                                RuleNames(found), how);
  RelayAction a;
  a.forward = RelayAction::Forward::kDrop;
  if (env.kind == Envelope::Kind::kNotification) return a;
  if (env.kind == Envelope::Kind::kRequest) {
    ++denied_;
    a.reply = ErrorResponse(env.id->json, kRefusedByPolicy, msg);
    return a;
  }
  Side asker = from == kClient ? kServer : kClient;
  auto it = pending_[asker].find(env.id->key);
  std::string method = it == pending_[asker].end() ? "" : it->second.method;
  a = Dispatch(from, env, line);
  if (a.forward == RelayAction::Forward::kDrop) return a;  // forged: dropped already
  a.forward = RelayAction::Forward::kReplaced;
  if (from == kServer && method == "tools/call") {
    a.replacement = R"({"jsonrpc":"2.0","id":)" + env.id->json + R"(,"result":{"content":[{"type":"text","text":)" +
                    JsonQuote(msg) + R"(}],"isError":true}})";
  } else {
    a.replacement = ErrorResponse(env.id->json, kRefusedByPolicy, msg);
  }
  return a;
}

}  // namespace mcpcell
