#include "relay/mcp_relay.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "audit/sha256.h"
#include "guard/secret_guard.h"  // complete for ~McpRelay
#include "guard/pin_guard.h"
#include "relay/content_rules.h"
#include "relay/envelope.h"
#include "util/diag.h"

// GCC 12 reports -Wnull-dereference inside simdjson's inlined array end()
// (the library's tape access, not ours) in FilterToolsList, depending on
// what else the optimiser inlines here; json_strings.cc has the same exemption.
#pragma GCC diagnostic ignored "-Wnull-dereference"

namespace mcpcell {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using Clock = std::chrono::steady_clock;

constexpr const char* kSideName[2] = {"client", "server"};
constexpr std::string_view kVersionKey = "io.modelcontextprotocol/protocolVersion";
constexpr std::string_view kClientInfoKey = "io.modelcontextprotocol/clientInfo";
constexpr std::string_view kServerInfoKey = "io.modelcontextprotocol/serverInfo";
constexpr std::string_view kClientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities";

bool IsInputRequired(const Envelope& env) {
  if (!env.has_result) return false;
  auto rt = StringMember(env.result, "resultType");
  return rt && *rt == "input_required";
}

nlohmann::json AsJson(element e) { return nlohmann::json::parse(simdjson::to_string(e), nullptr, false); }

// Who a peer says it is (clientInfo, serverInfo, supportedVersions) goes into
// an audit record, and a request's _meta clientInfo into its pending entry
// until it is answered. Read whole, a server's 5 MiB serverInfo of numbers
// held the supervisor at 340 MB (nlohmann keeps ~16 bytes a number, the DOM
// bound of envelope.h does not see it). Real ones are a name, a version and
// perhaps an icon: over 4 KiB the record keeps the size only.
constexpr std::size_t kMaxAuditedInfo = 4096;

nlohmann::json AuditedInfo(element e) {
  std::string text = simdjson::to_string(e);
  if (text.size() > kMaxAuditedInfo) {
    return {{"withheld", fmt::format("{} bytes; audit records keep up to {}", text.size(), kMaxAuditedInfo)}};
  }
  return nlohmann::json::parse(text, nullptr, false);
}

const char* KindOf(element e) {
  switch (e.type()) {
    case element_type::OBJECT: return "object";
    case element_type::ARRAY: return "array";
    case element_type::STRING: return "string";
    case element_type::BOOL: return "boolean";
    case element_type::NULL_VALUE: return "null";
    default: return "number";
  }
}

// What an audit record says about arguments: by default key names, each
// value's kind, the size and a digest, never the values (docs/AUDIT.md);
// with --audit-content the arguments themselves as well.
nlohmann::json Redacted(element args, bool content) {
  std::string text = simdjson::to_string(args);
  nlohmann::json keys = nlohmann::json::array();
  nlohmann::json kinds = nlohmann::json::object();
  if (args.type() == element_type::OBJECT) {
    // A copy: value_unsafe() of a temporary result would dangle in a range-for.
    simdjson::dom::object members = args.get_object().value_unsafe();
    for (auto f : members) {
      keys.push_back(std::string(f.key));
      kinds[std::string(f.key)] = KindOf(f.value);
    }
  }
  nlohmann::json out{{"keys", keys}, {"kinds", kinds}, {"bytes", text.size()}, {"sha256", Sha256Hex(text)}};
  if (content) out["content"] = nlohmann::json::parse(text, nullptr, false);
  return out;
}

// A waiting round's key: a digest, not the requestState itself — a server
// chooses its size, and up to max_pending calls wait (4096 states of 10 MiB
// were 40 GB of supervisor memory).
std::string RoundKey(char kind, std::string_view state) { return kind + Sha256Hex(state); }

// The tool name, uri or prompt name kept with an unanswered call (for its
// record): at most kMaxKeptSubject bytes, for the same reason as ids and
// methods (envelope.h); the rules judged the whole name before.
constexpr std::size_t kMaxKeptSubject = 1024;
std::string KeptSubject(std::string_view s) {
  if (s.size() <= kMaxKeptSubject) return std::string(s);
  return fmt::format("{}... ({} bytes)", s.substr(0, kMaxKeptSubject), s.size());
}

const char* AuditEventFor(std::string_view method) {
  if (method == "tools/call") return "tool_call";
  if (method == "resources/read") return "resource_read";
  if (method == "prompts/get") return "prompt_get";
  return nullptr;
}

// The record's name for what a call is about.
const char* SubjectKey(std::string_view method) {
  if (method == "tools/call") return "tool";
  if (method == "prompts/get") return "prompt";
  return method == "completion/complete" ? "ref" : "uri";  // resources/read, subscribe, unsubscribe
}

}  // namespace

McpRelay::McpRelay(RelayConfig config, AuditSink audit)
    : config_(std::move(config)),
      filter_(config_.tools),
      prompt_filter_(config_.prompts),
      resource_filter_(config_.resources),
      audit_(std::move(audit)),
      parsers_{std::make_unique<EnvelopeParser>(config_.max_message),
               std::make_unique<EnvelopeParser>(config_.max_message)},
      tokens_(static_cast<double>(config_.call_burst)),
      refilled_(Clock::now()) {
  if (config_.pins) config_.pins->SetAudit([this](nlohmann::json e) { Audit(std::move(e)); });
  // A new or changed tool is shown on stderr as the server listed it, which
  // no scan saw: masked like every other text the relay quotes (adv7).
  // Called under mu_, as MaskedText needs.
  if (config_.pins) config_.pins->SetMask([this](const std::string& text) { return MaskedText(text); });
}

McpRelay::~McpRelay() = default;

// A hostile server decides how many forged answers and unreadable lines it
// writes; one record each would let it grow the user's log without bound. The
// first kMaxServerNoise per session are recorded, the rest only counted
// (session_end's forged/refused and held_back).
bool McpRelay::Audit(nlohmann::json event) {
  if (!audit_) return true;
  const auto& kind = event["event"];
  bool noise = kind == "forged_response" || (kind == "relay_refused" && event.value("from", "") == "server");
  if (noise && ++server_noise_ > kMaxServerNoise) {
    ++held_back_;
    return true;
  }
  if (kind == "session_end") event["held_back"] = held_back_;
  event["server"] = config_.server;
  Status written;
  if (audit_.text) {
    // WriteObject appends the chain's members (and "ts"): none may be the event's.
    for (const char* k : {"ts", "run", "seq", "prev", "hash"}) event.erase(k);
    written = audit_.text(MaskedDump(&event));
  } else {
    MaskSecretsIn(&event);
    written = audit_.json(event);
  }
  if (written) return true;
  if (audit_error_.empty()) {
    audit_error_ = written.error().Message();
    Say("relay: the audit log cannot be written (" + audit_error_ + "); from now on every tools/call, "
        "resources/read and prompts/get is refused and no answer whose record is lost reaches the client. "
        "Fix the log's file or filesystem and start mcpcell again");
  }
  return false;
}

// Fail closed: a call mcpcell cannot record is not run.
std::optional<Refusal> McpRelay::AuditBroken(const Envelope& env) const {
  if (audit_error_.empty()) return std::nullopt;
  return Refusal{kAuditUnavailable,
                 fmt::format("mcpcell relay: {} refused: the audit log cannot be written ({}), and mcpcell does not "
                             "run calls it cannot record; fix the log's file or filesystem and start mcpcell again",
                             env.method, audit_error_),
                 env.id->json, env.id->key};
}

// The call ran, but its record was lost: the client gets an error, not the result.
RelayAction McpRelay::Withheld(const Envelope& env, std::string_view method) {
  RelayAction a;
  a.forward = RelayAction::Forward::kReplaced;
  a.replacement = ErrorResponse(
      env.id->json, kAuditUnavailable,
      fmt::format("mcpcell relay: the server answered this {}, but its audit record cannot be written ({}); the "
                  "answer is withheld, and every further call is refused. Fix the log's file or filesystem and "
                  "start mcpcell again", method, audit_error_));
  return a;
}

RelayAction McpRelay::FromClient(const LineFramer::Line& line) { return Unbroken(FromSide(kClient, line), line); }
RelayAction McpRelay::FromServer(const LineFramer::Line& line) { return Unbroken(FromSide(kServer, line), line); }

// What the relay passes is read by the peer as the one message it judged,
// whatever line breaks the peer's reader knows (WithoutRawBreaks).
RelayAction McpRelay::Unbroken(RelayAction a, const LineFramer::Line& line) {
  if (a.forward == RelayAction::Forward::kAsIs && !line.oversize) {
    // Plain text (no message to any reader) passes byte for byte.
    if (auto fixed = WithoutRawBreaks(line.text); fixed && MayBeMessage(line.text)) {
      a.forward = RelayAction::Forward::kReplaced;
      a.replacement = std::move(*fixed);
    }
  } else if (a.forward == RelayAction::Forward::kReplaced) {
    if (auto fixed = WithoutRawBreaks(a.replacement)) a.replacement = std::move(*fixed);
  }
  if (auto fixed = WithoutRawBreaks(a.reply)) a.reply = std::move(*fixed);
  return a;
}

RelayAction McpRelay::FromSide(Side from, const LineFramer::Line& line) {
  std::lock_guard side(side_mu_[from]);
  PrepareSecrets();
  if (line.oversize) {
    Refusal r{kMessageTooLarge,
              fmt::format("mcpcell relay: a message of {} bytes exceeds the maximum message size of {} bytes; "
                          "refused (raise it with --max-message)",
                          line.size, config_.max_message),
              // The framer read the whole line for its id (the SDKs write it last).
              line.id.empty() ? IdFromPrefix(line.text) : IdFromValue(line.id), {}};
    if (r.id_json != "null") {
      // The prefix scanner returns only plain integers and escape-free strings.
      r.id_key = r.id_json[0] == '"' ? "s:" + r.id_json.substr(1, r.id_json.size() - 2) : "n:" + r.id_json;
    }
    std::lock_guard lock(mu_);
    return Refused(from, r, line.size);
  }
  // Plain text (a probe's output, `-- env`, a log line) is no message to any
  // peer: it passes as it came, unjudged and counted (MayBeMessage says why).
  // Every line that could be one is judged.
  if (!MayBeMessage(line.text)) {
    ++unjudged_[from];
    return GuardPlainText(from, line);
  }
  // Outside mu_: this direction's own parser (side_mu_ held).
  auto parsed = parsers_[from]->Parse(line.text);
  // A large message's DOM (as large as the line) goes back once its action
  // is decided (the action holds no view into it), not at the next message:
  // the two directions' DOMs of two large lines were held at once.
  struct Shrink {
    EnvelopeParser* parser;
    ~Shrink() { parser->Shrink(); }
  } shrink{parsers_[from].get()};
  if (auto* r = std::get_if<Refusal>(&parsed)) {
    std::lock_guard lock(mu_);
    return Refused(from, *r, line.size);
  }
  const Envelope& env = std::get<Envelope>(parsed);
  if (secrets_ || !secrets_error_.empty()) return GuardSecrets(from, env, line);
  return Decide(from, env, line);
}

// The scanner is compiled at the first line, never at launch: building the
// built-in rules' Vectorscan database took 90-200 ms of CPU, more than the
// whole cell setup (bench/RESULTS.md, issue 15), and a run whose server never
// writes a line needs none. The first line waits for it, a refused or plain
// one too: what it carries to the peer or the log is masked. The other
// side's first line waits in call_once; a record (Expire, End) in mu_.
void McpRelay::PrepareSecrets() {
  std::call_once(secrets_made_, [this] {
    std::lock_guard lock(mu_);
    busy_until_ns_ = INT64_MAX;
    InitSecrets();
    busy_until_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  });
}

RelayAction McpRelay::Decide(Side from, const Envelope& env, const LineFramer::Line& line) {
  std::lock_guard lock(mu_);
  return Dispatch(from, env, line);
}

RelayAction McpRelay::Dispatch(Side from, const Envelope& env, const LineFramer::Line& line) {
  switch (env.kind) {
    case Envelope::Kind::kRequest:
      return Request(from, env, line.size);
    case Envelope::Kind::kResponse:
      return Response(from, env, line.text);
    case Envelope::Kind::kNotification:
      return Notification(from, env);
  }
  return {};
}

// A message that cannot be passed. The client gets a JSON-RPC error it can
// read; a refused server message that answers one of the client's requests
// becomes an error for that request, so the client is never left waiting.
RelayAction McpRelay::Refused(Side from, const Refusal& r, std::size_t bytes) {
  ++refused_;
  Audit({{"event", "relay_refused"}, {"from", kSideName[from]}, {"code", r.code}, {"reason", r.message},
         {"id", nlohmann::json::parse(r.id_json, nullptr, false)}, {"bytes", bytes}});
  RelayAction a;
  a.forward = RelayAction::Forward::kDrop;
  if (from == kClient) {
    a.reply = ErrorResponse(r.id_json, r.code, MaskedText(r.message));
    return a;
  }
  auto it = r.id_key.empty() ? pending_[kClient].end() : pending_[kClient].find(r.id_key);
  if (it != pending_[kClient].end() && it->second.expired) {
    ++late_;  // answered at its timeout: a refused late answer is no second answer (adv7)
    pending_[kClient].erase(it);
    return a;
  }
  if (it != pending_[kClient].end()) {
    // The message may quote the line (a duplicate key), which no scan saw.
    std::string msg = "mcpcell relay: the server's answer was refused: " + MaskedText(r.message);
    if (it->second.audited) AuditCall(it->second, r.id_json, "error", bytes, {{"error_code", r.code}});
    pending_[kClient].erase(it);
    a.forward = RelayAction::Forward::kReplaced;
    a.replacement = ErrorResponse(r.id_json, r.code, msg);
    return a;
  }
  // Dropped: said once on stderr, so a plain program's output that looks like
  // JSON ("[INFO] ...", a JSON object that is no message) is not lost in
  // silence; every drop is in the audit log.
  if (!said_server_drop_) {
    said_server_drop_ = true;
    Say("relay: dropped a line from the server that is not a JSON-RPC message (" + MaskedText(r.message) +
        "); stdout is the client's JSON-RPC channel. Further drops are in the audit log only; to copy a plain "
        "program's output as it is, use --relay=off");
  }
  return a;
}

std::optional<Refusal> McpRelay::JudgeRequest(const Envelope& env, Pending* p) {
  const char* event = AuditEventFor(env.method);
  if (env.has_params) {
    if (auto meta = Member(env.params, "_meta")) {
      if (auto v = StringMember(*meta, kVersionKey)) p->protocol = std::string(*v);
      if (auto ci = audit_ ? Member(*meta, kClientInfoKey) : std::nullopt) p->client = AuditedInfo(*ci);
      // A 2026-07-28 list stands alone: the capabilities it is listed under travel with it.
      auto caps = env.method == "tools/list" && config_.pins ? Member(*meta, kClientCapabilitiesKey) : std::nullopt;
      if (caps) p->capabilities = AsJson(*caps);
    }
  }
  if (NamesContent(env.method)) {  // subscribe, unsubscribe, completion: judged, not calls (content_rules.h)
    ContentVerdict v = JudgeContent(env, prompt_filter_, resource_filter_);
    p->subject = KeptSubject(v.subject);
    return std::move(v.refusal);
  }
  if (event == nullptr) return std::nullopt;
  p->audited = p->call = true;
  std::string_view subject_key = env.method == "resources/read" ? "uri" : "name";
  std::optional<std::string_view> subject = env.has_params ? StringMember(env.params, subject_key) : std::nullopt;
  if (!subject) {
    return Refusal{kInvalidRequest, fmt::format("mcpcell relay: {} needs params.{} as a string", env.method, subject_key),
                   env.id->json, env.id->key};
  }
  p->subject = KeptSubject(*subject);
  // The round's key: the server's requestState, or (a server may send none)
  // the tool's name when the retry carries inputResponses only.
  auto ir = Member(env.params, "inputResponses");
  if (auto state = StringMember(env.params, "requestState")) {
    p->request_state = RoundKey('s', *state);
  } else if (ir) {
    p->request_state = RoundKey('t', p->subject);  // as AwaitNextRound keys it
  }
  // What goes only into records is built only when there is a log (no --audit-log: nothing to build).
  if (ir && audit_) p->input_responses = Redacted(*ir, config_.audit_content);
  if (env.method != "tools/call") {
    const ToolFilter& rules = env.method == "prompts/get" ? prompt_filter_ : resource_filter_;
    if (auto denial = rules.Denial(*subject)) {
      return Refusal{kRefusedByPolicy, "mcpcell: " + *denial, env.id->json, env.id->key};
    }
    return std::nullopt;
  }
  auto args = Member(env.params, "arguments");
  if (args && args->type() != element_type::OBJECT) {
    return Refusal{kInvalidRequest, "mcpcell relay: tools/call params.arguments must be an object", env.id->json,
                   env.id->key};
  }
  if (args && audit_) p->arguments = Redacted(*args, config_.audit_content);
  if (auto denial = filter_.Denial(*subject)) {  // the whole name, never the kept one
    return Refusal{kRefusedByPolicy, "mcpcell: " + *denial, env.id->json, env.id->key};
  }
  if (auto unpinned = config_.pins ? config_.pins->CallDenial(std::string(*subject)) : std::nullopt) {
    return Refusal{kRefusedByPolicy, "mcpcell: " + *unpinned, env.id->json, env.id->key};
  }
  return std::nullopt;
}

RelayAction McpRelay::Request(Side from, const Envelope& env, std::size_t bytes) {
  const RpcId& id = *env.id;
  auto& pending = pending_[from];
  // An id whose call timed out stays taken until the server's late answer
  // comes: reused, that answer would pass as the new call's (adv7).
  if (auto it = pending.find(id.key); it != pending.end() && it->second.expired) {
    return Refused(from, Refusal{kInvalidRequest, "mcpcell relay: id " + id.json + " belongs to a call that timed out "
                                 "and whose late answer has not come yet; use another id", id.json, {}}, bytes);
  }
  if (pending.count(id.key) != 0) {
    return Refused(from, Refusal{kInvalidRequest, "mcpcell relay: id " + id.json + " is already used by an unanswered request",
                                 id.json, {}}, bytes);
  }
  if (pending.size() >= config_.max_pending) {
    return Refused(from, Refusal{kInvalidRequest, fmt::format("mcpcell relay: more than {} unanswered requests", config_.max_pending),
                                 id.json, {}}, bytes);
  }
  if (from == kServer) {  // an elicitation or sampling request is judged before the client sees it
    nlohmann::json where{{"via", "request"}, {"id", nlohmann::json::parse(id.json)}};
    if (auto refusal = JudgeInputRequest(env.method, env.has_params ? &env.params : nullptr, where)) {
      RelayAction a;
      a.forward = RelayAction::Forward::kDrop;
      a.reply = ErrorResponse(id.json, kRefusedByPolicy, *refusal);
      return a;
    }
  }
  Pending p;
  p.method = env.method;
  p.start = Clock::now();
  p.bytes_in = bytes;
  if (from == kClient) {
    auto judged = JudgeRequest(env, &p);
    // A retry refused as malformed takes no round over: the earlier round
    // still waits, and is recorded with its own id (adv7).
    if (judged && judged->code != kRefusedByPolicy) return Refused(from, *judged, bytes);
    if (p.call && !p.request_state.empty()) LinkRound(&p);
    if (auto r = std::move(judged)) {
      ++denied_;
      return RefuseCall(p, id, *r, "denied", {});
    }
    if (auto r = p.call ? AuditBroken(env) : std::nullopt) {
      ++refused_;
      return RefuseCall(p, id, *r, "audit_unavailable", {});
    }
    std::string limit;
    if (auto r = p.call ? CheckLimits(env, &limit) : std::nullopt) {
      ++limited_;
      return RefuseCall(p, id, *r, "limited", {{"limit", limit}});
    }
    if (p.call && config_.call_timeout.count() > 0) p.deadline = p.start + config_.call_timeout;
    // Who the client says it is: initialize's clientInfo, or (2026-07-28) the request's _meta.
    if (env.method == "initialize" && env.has_params) {
      if (auto ci = audit_ ? Member(env.params, "clientInfo") : std::nullopt) p.arguments = AuditedInfo(*ci);
      auto caps = Member(env.params, "capabilities");
      if (caps && config_.pins) session_capabilities_ = AsJson(*caps);
    }
    if (env.method == "tools/list" && p.capabilities.is_null()) p.capabilities = session_capabilities_;
    if (env.method == "server/discover" && env.has_params && audit_) {
      auto meta = Member(env.params, "_meta");
      if (auto ci = meta ? Member(*meta, kClientInfoKey) : std::nullopt) p.arguments = AuditedInfo(*ci);
    }
  }
  pending.emplace(id.key, std::move(p));
  return {};
}

// A call the relay answers itself (denied, limited): the server never sees it.
RelayAction McpRelay::RefuseCall(const Pending& p, const RpcId& id, const Refusal& r, const char* outcome,
                                 nlohmann::json extra) {
  RelayAction a;
  a.forward = RelayAction::Forward::kDrop;
  a.reply = ErrorResponse(id.json, r.code, r.message);
  if (!audit_) return a;
  const char* event = AuditEventFor(p.method);
  nlohmann::json e{{"event", event != nullptr ? event : ContentEventFor(p.method)}, {SubjectKey(p.method), p.subject},
                   {"id", nlohmann::json::parse(id.json)}, {"outcome", outcome}, {"reason", r.message},
                   {"protocol", p.protocol}, {"bytes_in", p.bytes_in}, {"rounds", p.rounds}};
  // The earlier rounds ran on the server: their ids are on this record (adv7).
  if (p.rounds > 1) e["round_ids"] = p.round_ids;
  if (!p.arguments.is_null()) e["arguments"] = p.arguments;
  if (!p.client.is_null()) e["client_info"] = p.client;
  if (!p.input_responses.is_null()) e["input_responses"] = p.input_responses;
  if (p.unknown_state) e["unknown_request_state"] = true;
  for (auto& [k, v] : extra.items()) e[k] = v;
  Audit(std::move(e));
  return a;
}

// A retry that carries the requestState of an input_required answer is the
// next round of that call: one record, rounds counted. It was judged on its
// own already (JudgeRequest): nothing from an earlier round allows it.
void McpRelay::LinkRound(Pending* p) {
  auto it = rounds_.find(p->request_state);
  if (it == rounds_.end()) {
    p->unknown_state = p->request_state[0] == 's';
    return;
  }
  Pending& earlier = it->second;
  p->rounds = earlier.rounds + 1;
  p->start = earlier.start;
  p->bytes_in += earlier.bytes_in;
  p->bytes_out = earlier.bytes_out;
  p->round_ids = std::move(earlier.round_ids);
  rounds_.erase(it);
}

// An input_required answer with a requestState: the call waits for its next
// round (recorded then, or at session end as input_required). Bounded like
// the pending requests: the oldest waiting call is recorded and forgotten.
bool McpRelay::AwaitNextRound(Pending& p, const Envelope& env, std::size_t bytes) {
  auto state = StringMember(env.result, "requestState");
  std::string key = state ? RoundKey('s', *state) : RoundKey('t', p.subject);
  if (auto same = rounds_.find(key); same != rounds_.end()) {
    // Two waiting calls the retry could not be told apart by: the older one is recorded now.
    AuditCall(same->second, same->second.round_ids.back().dump(), "input_required", 0, {});
    rounds_.erase(same);
  }
  if (rounds_.size() >= config_.max_pending) {
    auto oldest = rounds_.begin();
    AuditCall(oldest->second, oldest->second.round_ids.back().dump(), "input_required", 0, {});
    rounds_.erase(oldest);
  }
  p.round_ids.push_back(nlohmann::json::parse(env.id->json));
  p.bytes_out += bytes;
  p.request_state.clear();
  rounds_.emplace(std::move(key), std::move(p));
  return true;
}

std::optional<Refusal> McpRelay::CheckLimits(const Envelope& env, std::string* limit) {
  if (config_.max_inflight > 0) {
    std::size_t n = 0;
    // A cancelled call still counts: the server may go on running it.
    for (const auto& [key, p] : pending_[kClient]) n += p.call && !p.expired ? 1 : 0;
    if (n >= config_.max_inflight) {
      *limit = "max_inflight";
      return Refusal{kLimitReached,
                     fmt::format("mcpcell relay: {} refused: {} calls are unanswered, the most --max-inflight "
                                 "(mcpcell.max_inflight) allows; wait for an answer or raise the limit",
                                 env.method, n),
                     env.id->json, env.id->key};
    }
  }
  if (config_.call_rate > 0) {
    auto now = Clock::now();
    double waited = std::chrono::duration<double>(now - refilled_).count();
    refilled_ = now;
    tokens_ = std::min(static_cast<double>(config_.call_burst), tokens_ + waited * config_.call_rate);
    if (tokens_ < 1) {
      *limit = "call_rate";
      return Refusal{kLimitReached,
                     fmt::format("mcpcell relay: {} refused: more than {} calls in a row at {:g} per second, the "
                                 "most --call-rate (mcpcell.call_rate) allows; retry later or raise the limit",
                                 env.method, config_.call_burst, config_.call_rate),
                     env.id->json, env.id->key};
    }
    tokens_ -= 1;
  }
  return std::nullopt;
}

int McpRelay::MsToNextDeadline() {
  std::lock_guard lock(mu_);
  if (config_.call_timeout.count() <= 0) return -1;
  auto next = Clock::time_point::max();
  for (const auto& [key, p] : pending_[kClient]) {
    if (p.call && !p.expired) next = std::min(next, p.deadline);
  }
  if (next == Clock::time_point::max()) return -1;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
  return static_cast<int>(std::clamp<std::int64_t>(ms, 0, 24 * 3600 * 1000));
}

std::vector<RelayAction> McpRelay::Expire(bool tell_server) {
  std::lock_guard lock(mu_);
  std::vector<RelayAction> out;
  if (config_.call_timeout.count() <= 0) return out;
  auto now = Clock::now();
  for (auto& [key, p] : pending_[kClient]) {
    if (!p.call || p.expired || p.deadline > now) continue;
    p.expired = true;
    if (!p.audited) continue;  // cancelled by the client, which expects no answer
    std::string id = key[0] == 's' ? JsonQuote(key.substr(2)) : key.substr(2);
    // What Expire writes never passes GuardSecrets: masked here (adv7). The
    // client's error keeps its id as it came (its own); the server's cancel
    // names the id as the server saw it, masked like the request it got.
    std::string msg = MaskedText(fmt::format(
        "mcpcell relay: {} \"{}\" got no answer within {} ms, the --call-timeout (mcpcell.call_timeout); {}",
        p.method, p.subject, config_.call_timeout.count(),
        tell_server ? "the server was told to cancel it" : "the client had closed stdin, so the server's stdin is closed too"));
    std::string server_id = key[0] == 's' ? JsonQuote(MaskedText(key.substr(2))) : id;
    ++limited_;
    AuditCall(p, id, "timeout", 0, {{"limit", "call_timeout"}, {"reason", msg}});
    p.audited = false;
    RelayAction a;
    a.forward = tell_server ? RelayAction::Forward::kReplaced : RelayAction::Forward::kDrop;
    if (tell_server) {
      a.replacement = R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" + server_id +
                      R"(,"reason":"mcpcell: call timeout"}})";
    }
    a.reply = ErrorResponse(id, kLimitReached, msg);
    out.push_back(std::move(a));
  }
  return out;
}

bool McpRelay::AuditCall(const Pending& p, const std::string& id, std::string outcome, std::size_t bytes_out,
                         nlohmann::json extra) {
  ++calls_;
  if (!audit_) return true;
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - p.start).count();
  double ms = static_cast<double>(us) / 1000.0;
  // Member by member, not from an initializer list: that builds a
  // two-element array per member and copies each into the object (one
  // record per call: these allocations were a visible part of its cost).
  nlohmann::json e(nlohmann::json::value_t::object);
  e["event"] = AuditEventFor(p.method);
  e[SubjectKey(p.method)] = p.subject;
  e["id"] = nlohmann::json::parse(id, nullptr, false);
  e["outcome"] = std::move(outcome);
  e["duration_ms"] = ms;
  e["bytes_in"] = p.bytes_in;
  e["bytes_out"] = p.bytes_out + bytes_out;
  e["protocol"] = p.protocol;
  e["rounds"] = p.rounds;
  if (!p.arguments.is_null()) e["arguments"] = p.arguments;
  if (!p.client.is_null()) e["client_info"] = p.client;
  if (!p.input_responses.is_null()) e["input_responses"] = p.input_responses;
  if (p.rounds > 1) e["round_ids"] = p.round_ids;
  if (p.unknown_state) e["unknown_request_state"] = true;
  for (auto& [k, v] : extra.items()) e[k] = std::move(v);
  return Audit(std::move(e));
}

RelayAction McpRelay::Response(Side from, const Envelope& env, std::string_view line) {
  Side asker = from == kClient ? kServer : kClient;
  auto it = pending_[asker].find(env.id->key);
  if (it == pending_[asker].end()) {
    ++forged_;
    Audit({{"event", "forged_response"}, {"from", kSideName[from]}, {"id", nlohmann::json::parse(env.id->json)},
           {"bytes", line.size()}, {"reason", "no unanswered request with this id was sent by the " +
                                                  std::string(kSideName[asker])}});
    return RelayAction{RelayAction::Forward::kDrop, {}, {}};
  }
  Pending p = std::move(it->second);
  pending_[asker].erase(it);
  if (p.expired) {
    ++late_;  // the relay answered it at its timeout; a second answer would confuse the client
    return RelayAction{RelayAction::Forward::kDrop, {}, {}};
  }
  RelayAction a;
  if (from == kClient) return a;
  // An input_required answer, or (tasks extension) a task's status with the requests it waits for.
  auto asked = env.has_result ? JudgeInputRequests(env.result, IsInputRequired(env) ? "input_required" : p.method,
                                                   nlohmann::json::parse(env.id->json))
                              : std::nullopt;
  if (auto refusal = std::move(asked)) {
    // The client never sees what the server asked; its call ends here.
    a.forward = RelayAction::Forward::kReplaced;
    a.replacement = ErrorResponse(env.id->json, kRefusedByPolicy, *refusal);
    if (p.audited) AuditCall(p, env.id->json, "denied", line.size(), {{"reason", *refusal}});
    return a;
  }
  if (p.method == "tools/list" && env.has_result && (filter_.active() || config_.pins)) {
    std::size_t hidden = 0;
    bool refused = false;
    std::string filtered = FilterToolsList(env, line, p.capabilities, &hidden, &refused);
    if (hidden != 0 || refused || filter_.active()) {
      a.forward = RelayAction::Forward::kReplaced;
      a.replacement = std::move(filtered);
    }
  }
  ApplyContentRules(p.method, env, line, &a);
  if ((p.method == "initialize" || p.method == "server/discover") && env.has_result && audit_) {
    nlohmann::json start{{"event", "session_start"}, {"client_info", p.arguments}, {"via", p.method}};
    // server/discover answers with supportedVersions and _meta's serverInfo: the era is the request's.
    auto version = StringMember(env.result, "protocolVersion");
    start["protocol"] = version ? std::string(*version) : p.protocol;
    auto meta = Member(env.result, "_meta");
    if (auto si = Member(env.result, "serverInfo")) {
      start["server_info"] = AuditedInfo(*si);
    } else if (auto msi = meta ? Member(*meta, kServerInfoKey) : std::nullopt) {
      start["server_info"] = AuditedInfo(*msi);
    }
    if (auto sv = Member(env.result, "supportedVersions")) start["supported_versions"] = AuditedInfo(*sv);
    Audit(std::move(start));
  }
  if (!p.audited) return a;
  if (!audit_) {  // no log: nothing to record (and no SHA-256 of a 24 MiB result to compute)
    ++calls_;
    return a;
  }
  nlohmann::json extra{{"result", {{"bytes", line.size()}, {"sha256", Sha256Hex(line)}}}};
  if (config_.audit_content) {
    extra["result"]["content"] = nlohmann::json::parse(simdjson::to_string(env.result), nullptr, false);
  }
  std::string outcome = "ok";
  if (env.has_error) {
    outcome = "error";
    if (auto code = Member(env.result, "code"); code && code->is_int64()) extra["error_code"] = code->get_int64().value_unsafe();
  } else if (auto ie = Member(env.result, "isError"); ie && ie->is_bool() && ie->get_bool().value_unsafe()) {
    outcome = "isError";
  } else if (auto rt = StringMember(env.result, "resultType"); rt && *rt == "input_required") {
    outcome = "input_required";
    if (p.method == "tools/call") {
      if (!audit_error_.empty()) return Withheld(env, p.method);  // its next round would be refused
      if (AwaitNextRound(p, env, line.size())) return a;
    }
  }
  if (!AuditCall(p, env.id->json, outcome, line.size(), std::move(extra))) return Withheld(env, p.method);
  return a;
}

// The prompt and resource rules on an answer (content_rules.h): lists
// without what is denied (a template judged as the URI it is written as), a
// denied embedded resource withheld from a call's or prompt's answer.
void McpRelay::ApplyContentRules(const std::string& method, const Envelope& env, std::string_view line, RelayAction* a) {
  std::optional<std::string> out;
  if (!env.has_result) return;
  if (method == "prompts/list") out = FilterList(env, "prompts", "name", prompt_filter_);
  if (method == "resources/list") out = FilterList(env, "resources", "uri", resource_filter_);
  if (method == "resources/templates/list") out = FilterList(env, "resourceTemplates", "uriTemplate", resource_filter_);
  if (method == "tools/call" || method == "prompts/get") {
    if (auto w = WithholdDeniedResources(env, method, line, resource_filter_)) {
      out = std::move(w->line);
      Audit({{"event", "resource_withheld"}, {"method", method}, {"id", nlohmann::json::parse(env.id->json)},
             {"count", w->count}, {"uris", w->uris}, {"reason", w->reason}});
    }
  }
  if (!out) return;
  a->forward = RelayAction::Forward::kReplaced;
  a->replacement = std::move(*out);
}

std::string McpRelay::FilterToolsList(const Envelope& env, std::string_view line, const nlohmann::json& capabilities,
                                      std::size_t* hidden, bool* refused) {
  auto tools = Member(env.result, "tools");
  if (!tools || tools->type() != element_type::ARRAY) {
    *refused = true;
    return ErrorResponse(env.id->json, kInvalidRequest,
                         "mcpcell relay: the server's tools/list result has no tools array, so the profile's tool "
                         "rules cannot be applied; refused");
  }
  // Pinning judges the page as a whole (duplicates, a complete listing).
  std::set<std::string> unpinned;
  if (config_.pins) {
    // The pins read the page as nlohmann::json, which holds up to ~2x what
    // simdjson's DOM of the same text does (16 bytes a value, a tree node a
    // member): a 3 MiB page of numbers in an inputSchema held the supervisor
    // at 250 MB under --max-message 16m. Its DOM bound is held to the maximum.
    std::string page = simdjson::to_string(*tools);
    if (std::size_t cost = DomBytesBound(page); cost > config_.max_message) {
      *refused = true;
      return ErrorResponse(env.id->json, kMessageTooLarge,
                           fmt::format("mcpcell relay: the server's tools/list page would take up to {} bytes to pin "
                                       "(numbers and brackets cost up to 13 times their size), more than the maximum "
                                       "message size of {} bytes; refused (raise it with --max-message, or set "
                                       "mcpcell.pins.mode \"off\" in the profile)",
                                       cost, config_.max_message));
    }
    auto cursor = Member(env.result, "nextCursor");
    config_.pins->SetClientCapabilities(capabilities);
    unpinned = config_.pins->JudgePage(nlohmann::json::parse(page), !cursor || cursor->is_null());
  }
  std::string out = R"({"jsonrpc":"2.0","id":)" + env.id->json + R"(,"result":{)";
  out.reserve(line.size());
  bool first = true;
  // A copy: value_unsafe() of a temporary result would dangle in a range-for.
  simdjson::dom::object members = env.result.get_object().value_unsafe();
  for (auto field : members) {
    if (!first) out += ',';
    first = false;
    out += JsonQuote(field.key);
    out += ':';
    if (field.key != "tools") {
      out += simdjson::to_string(field.value);
      continue;
    }
    out += '[';
    bool first_tool = true;
    // A copy: value_unsafe() of a temporary result would dangle in a range-for.
    simdjson::dom::array items = field.value.get_array().value_unsafe();
    for (element tool : items) {
      auto name = StringMember(tool, "name");
      if (!name || filter_.Denial(*name) || unpinned.count(std::string(*name)) != 0) {
        ++*hidden;
        continue;
      }
      if (!first_tool) out += ',';
      first_tool = false;
      out += simdjson::to_string(tool);
    }
    out += ']';
  }
  out += "}}";
  return out;
}

// Every page is filtered on its own, as tools/list is: an entry whose name
// (or uri) is denied, missing or not a string is left out; everything else in
// the result (nextCursor, ttlMs, _meta) passes as it came.
std::optional<std::string> McpRelay::FilterList(const Envelope& env, std::string_view array, std::string_view name,
                                                const ToolFilter& filter) {
  if (!filter.active()) return std::nullopt;
  auto items_el = Member(env.result, array);
  if (!items_el || items_el->type() != element_type::ARRAY) {
    return ErrorResponse(env.id->json, kInvalidRequest,
                         fmt::format("mcpcell relay: the server's list result has no {} array, so the profile's {} "
                                     "rules cannot be applied; refused", array, filter.rules().key));
  }
  std::string out = R"({"jsonrpc":"2.0","id":)" + env.id->json + R"(,"result":{)";
  bool first = true;
  // A copy: value_unsafe() of a temporary result would dangle in a range-for.
  simdjson::dom::object members = env.result.get_object().value_unsafe();
  for (auto field : members) {
    out += first ? "" : ",";
    first = false;
    out += JsonQuote(field.key) + ':';
    if (field.key != array) {
      out += simdjson::to_string(field.value);
      continue;
    }
    out += '[';
    bool first_item = true;
    simdjson::dom::array items = field.value.get_array().value_unsafe();
    for (element item : items) {
      auto n = StringMember(item, name);
      if (!n || filter.Denial(*n)) continue;
      out += first_item ? "" : ",";
      first_item = false;
      out += simdjson::to_string(item);
    }
    out += ']';
  }
  return out + "}}";
}

RelayAction McpRelay::Notification(Side from, const Envelope& env) {
  if (AuditEventFor(env.method) != nullptr || NamesContent(env.method)) {
    // A judged request without an id: the relay cannot answer it, and a peer
    // that ran it anyway would run it unjudged and unrecorded. Dropped, on
    // the record. Other notifications (any method) pass as they are.
    ++refused_;
    Audit({{"event", "relay_refused"}, {"from", kSideName[from]}, {"code", kInvalidRequest},
           {"reason", "a request (" + env.method + ") without an id"}, {"id", nullptr}});
    return RelayAction{RelayAction::Forward::kDrop, {}, {}};
  }
  if (from == kServer && env.has_params) {  // notifications/tasks: a task waiting for input
    if (auto refusal = JudgeInputRequests(env.params, env.method, nullptr)) {
      ++refused_;
      Audit({{"event", "relay_refused"}, {"from", "server"}, {"code", kRefusedByPolicy}, {"reason", *refusal},
             {"id", nullptr}});
      return RelayAction{RelayAction::Forward::kDrop, {}, {}};
    }
  }
  if (from == kServer && env.method == "notifications/resources/updated") {
    if (auto denial = UpdateDenial(env, resource_filter_)) {
      ++refused_;
      Audit({{"event", "relay_refused"}, {"from", "server"}, {"code", kRefusedByPolicy}, {"reason", *denial},
             {"id", nullptr}});
      return RelayAction{RelayAction::Forward::kDrop, {}, {}};
    }
  }
  if (env.method == "notifications/cancelled" && env.has_params) {
    std::string why;
    auto rid = Member(env.params, "requestId");
    std::optional<RpcId> id = rid ? DecodeId(*rid, &why) : std::nullopt;
    auto& asked = pending_[from];
    if (auto it = id ? asked.find(id->key) : asked.end(); it != asked.end() && it->second.audited) {
      // Its late answer, if any, passes unrecorded, once the call is on the
      // record; when that record was lost, the answer is withheld like any
      // other (adversary pass, relay_audit_gap_test.cc).
      if (AuditCall(it->second, id->json, "cancelled", 0, {})) it->second.audited = false;
    }
  }
  return {};
}

void McpRelay::End() {
  std::lock_guard lock(mu_);
  if (ended_) return;
  ended_ = true;
  std::size_t unanswered = 0;
  for (auto& side : pending_) {
    for (auto& [key, p] : side) {
      if (p.expired) continue;  // answered at its timeout, recorded then
      ++unanswered;
      if (p.audited) {
        std::string id = key[0] == 's' ? JsonQuote(key.substr(2)) : key.substr(2);
        AuditCall(p, id, "no_response", 0, {});
      }
    }
  }
  for (auto& [state, p] : rounds_) {
    AuditCall(p, p.round_ids.back().dump(), "input_required", 0, {});
  }
  rounds_.clear();
  Audit({{"event", "session_end"}, {"calls", calls_}, {"denied", denied_}, {"forged", forged_},
         {"refused", refused_}, {"unanswered", unanswered}, {"limited", limited_}, {"late_answers_dropped", late_},
         {"unjudged_lines", {{"client", unjudged_[kClient].load()}, {"server", unjudged_[kServer].load()}}}});
}

}  // namespace mcpcell
