#include "relay/mcp_relay.h"

#include <fmt/format.h>

#include "audit/sha256.h"
#include "relay/envelope.h"

namespace mcpcell {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using Clock = std::chrono::steady_clock;

constexpr const char* kSideName[2] = {"client", "server"};
constexpr std::string_view kVersionKey = "io.modelcontextprotocol/protocolVersion";

std::optional<element> Member(element obj, std::string_view key) {
  if (obj.type() != element_type::OBJECT) return std::nullopt;
  auto v = obj.get_object().value_unsafe().at_key(key);
  if (v.error()) return std::nullopt;
  return v.value_unsafe();
}

bool IsBlank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

// What an audit record says about arguments by default: key names, size and
// a digest, never the values (docs/AUDIT.md).
nlohmann::json Redacted(element args) {
  std::string text = simdjson::to_string(args);
  nlohmann::json keys = nlohmann::json::array();
  if (args.type() == element_type::OBJECT) {
    // A copy: value_unsafe() of a temporary result would dangle in a range-for.
    simdjson::dom::object members = args.get_object().value_unsafe();
    for (auto f : members) keys.push_back(std::string(f.key));
  }
  return {{"keys", keys}, {"bytes", text.size()}, {"sha256", Sha256Hex(text)}};
}

const char* AuditEventFor(std::string_view method) {
  if (method == "tools/call") return "tool_call";
  if (method == "resources/read") return "resource_read";
  if (method == "prompts/get") return "prompt_get";
  return nullptr;
}

}  // namespace

McpRelay::McpRelay(RelayConfig config, AuditSink audit)
    : config_(std::move(config)),
      filter_(config_.tools),
      audit_(std::move(audit)),
      parsers_{std::make_unique<EnvelopeParser>(config_.max_message),
               std::make_unique<EnvelopeParser>(config_.max_message)} {}

McpRelay::~McpRelay() = default;

// A hostile server decides how many forged answers and unreadable lines it
// writes; one record each would let it grow the user's log without bound. The
// first kMaxServerNoise per session are recorded, the rest only counted
// (session_end's forged/refused and held_back).
void McpRelay::Audit(nlohmann::json event) {
  if (!audit_) return;
  const auto& kind = event["event"];
  bool noise = kind == "forged_response" || (kind == "relay_refused" && event.value("from", "") == "server");
  if (noise && ++server_noise_ > kMaxServerNoise) {
    ++held_back_;
    return;
  }
  if (kind == "session_end") event["held_back"] = held_back_;
  event["server"] = config_.server;
  audit_(event);
}

RelayAction McpRelay::FromClient(const LineFramer::Line& line) { return FromSide(kClient, line); }
RelayAction McpRelay::FromServer(const LineFramer::Line& line) { return FromSide(kServer, line); }

RelayAction McpRelay::FromSide(Side from, const LineFramer::Line& line) {
  std::lock_guard lock(mu_);
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
    return Refused(from, r, line.size);
  }
  if (IsBlank(line.text)) return RelayAction{RelayAction::Forward::kDrop, {}, {}};
  auto parsed = parsers_[from]->Parse(line.text);
  if (auto* r = std::get_if<Refusal>(&parsed)) return Refused(from, *r, line.size);
  const Envelope& env = std::get<Envelope>(parsed);
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
    a.reply = ErrorResponse(r.id_json, r.code, r.message);
    return a;
  }
  auto it = r.id_key.empty() ? pending_[kClient].end() : pending_[kClient].find(r.id_key);
  if (it != pending_[kClient].end()) {
    std::string msg = "mcpcell relay: the server's answer was refused: " + r.message;
    if (it->second.audited) AuditCall(it->second, r.id_json, "error", bytes, {{"error_code", r.code}});
    pending_[kClient].erase(it);
    a.forward = RelayAction::Forward::kReplaced;
    a.replacement = ErrorResponse(r.id_json, r.code, msg);
  }
  return a;
}

std::optional<Refusal> McpRelay::JudgeRequest(const Envelope& env, Pending* p) {
  const char* event = AuditEventFor(env.method);
  if (env.has_params) {
    if (auto meta = Member(env.params, "_meta")) {
      if (auto v = StringMember(*meta, kVersionKey)) p->protocol = std::string(*v);
    }
  }
  if (event == nullptr) return std::nullopt;
  p->audited = true;
  std::string_view subject_key = env.method == "resources/read" ? "uri" : "name";
  std::optional<std::string_view> subject = env.has_params ? StringMember(env.params, subject_key) : std::nullopt;
  if (!subject) {
    return Refusal{kInvalidRequest, fmt::format("mcpcell relay: {} needs params.{} as a string", env.method, subject_key),
                   env.id->json, env.id->key};
  }
  p->subject = std::string(*subject);
  if (env.method != "tools/call") return std::nullopt;
  auto args = Member(env.params, "arguments");
  if (args && args->type() != element_type::OBJECT) {
    return Refusal{kInvalidRequest, "mcpcell relay: tools/call params.arguments must be an object", env.id->json,
                   env.id->key};
  }
  if (args) p->arguments = Redacted(*args);
  if (auto denial = filter_.Denial(p->subject)) {
    return Refusal{kRefusedByPolicy, "mcpcell: " + *denial, env.id->json, env.id->key};
  }
  return std::nullopt;
}

RelayAction McpRelay::Request(Side from, const Envelope& env, std::size_t bytes) {
  const RpcId& id = *env.id;
  RelayAction refuse;
  refuse.forward = RelayAction::Forward::kDrop;
  auto& pending = pending_[from];
  if (pending.count(id.key) != 0) {
    return Refused(from, Refusal{kInvalidRequest, "mcpcell relay: id " + id.json + " is already used by an unanswered request",
                                 id.json, {}}, bytes);
  }
  if (pending.size() >= config_.max_pending) {
    return Refused(from, Refusal{kInvalidRequest, fmt::format("mcpcell relay: more than {} unanswered requests", config_.max_pending),
                                 id.json, {}}, bytes);
  }
  Pending p;
  p.method = env.method;
  p.start = Clock::now();
  p.bytes_in = bytes;
  if (from == kClient) {
    if (auto r = JudgeRequest(env, &p)) {
      if (r->code != kRefusedByPolicy) return Refused(from, *r, bytes);
      ++denied_;
      Audit({{"event", AuditEventFor(env.method)}, {"tool", p.subject}, {"id", nlohmann::json::parse(id.json)},
             {"outcome", "denied"}, {"reason", r->message}, {"protocol", p.protocol}, {"bytes_in", bytes},
             {"arguments", p.arguments}});
      refuse.reply = ErrorResponse(id.json, r->code, r->message);
      return refuse;
    }
    if (env.method == "initialize" && env.has_params) {
      if (auto ci = Member(env.params, "clientInfo")) p.arguments = nlohmann::json::parse(simdjson::to_string(*ci));
    }
  }
  pending.emplace(id.key, std::move(p));
  return {};
}

void McpRelay::AuditCall(const Pending& p, const std::string& id, std::string outcome, std::size_t bytes_out,
                         nlohmann::json extra) {
  ++calls_;
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - p.start).count();
  double ms = static_cast<double>(us) / 1000.0;
  nlohmann::json e{{"event", AuditEventFor(p.method)},
                   {p.method == "tools/call" ? "tool" : p.method == "resources/read" ? "uri" : "prompt", p.subject},
                   {"id", nlohmann::json::parse(id, nullptr, false)},
                   {"outcome", std::move(outcome)},
                   {"duration_ms", ms},
                   {"bytes_in", p.bytes_in},
                   {"bytes_out", bytes_out},
                   {"protocol", p.protocol}};
  if (!p.arguments.is_null()) e["arguments"] = p.arguments;
  for (auto& [k, v] : extra.items()) e[k] = v;
  Audit(std::move(e));
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
  RelayAction a;
  if (from == kClient) return a;
  if (p.method == "tools/list" && env.has_result && filter_.active()) {
    std::size_t hidden = 0;
    a.forward = RelayAction::Forward::kReplaced;
    a.replacement = FilterToolsList(env, line, &hidden);
  }
  if ((p.method == "initialize" || p.method == "server/discover") && env.has_result) {
    nlohmann::json start{{"event", "session_start"}, {"client_info", p.arguments}};
    if (auto v = StringMember(env.result, "protocolVersion")) start["protocol"] = std::string(*v);
    if (auto si = Member(env.result, "serverInfo")) start["server_info"] = nlohmann::json::parse(simdjson::to_string(*si));
    Audit(std::move(start));
  }
  if (!p.audited) return a;
  nlohmann::json extra{{"result", {{"bytes", line.size()}, {"sha256", Sha256Hex(line)}}}};
  std::string outcome = "ok";
  if (env.has_error) {
    outcome = "error";
    if (auto code = Member(env.result, "code"); code && code->is_int64()) extra["error_code"] = code->get_int64().value_unsafe();
  } else if (auto ie = Member(env.result, "isError"); ie && ie->is_bool() && ie->get_bool().value_unsafe()) {
    outcome = "isError";
  } else if (auto rt = StringMember(env.result, "resultType"); rt && *rt == "input_required") {
    outcome = "input_required";
  }
  AuditCall(p, env.id->json, outcome, line.size(), std::move(extra));
  return a;
}

std::string McpRelay::FilterToolsList(const Envelope& env, std::string_view line, std::size_t* hidden) {
  auto tools = Member(env.result, "tools");
  if (!tools || tools->type() != element_type::ARRAY) {
    return ErrorResponse(env.id->json, kInvalidRequest,
                         "mcpcell relay: the server's tools/list result has no tools array, so the profile's tool "
                         "rules cannot be applied; refused");
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
      if (!name || filter_.Denial(*name)) {
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

RelayAction McpRelay::Notification(Side from, const Envelope& env) {
  if (AuditEventFor(env.method) != nullptr) {
    // A judged request without an id: the relay cannot answer it, and a peer
    // that ran it anyway would run it unjudged and unrecorded. Dropped, on
    // the record. Other notifications (any method) pass as they are.
    ++refused_;
    Audit({{"event", "relay_refused"}, {"from", kSideName[from]}, {"code", kInvalidRequest},
           {"reason", "a request (" + env.method + ") without an id"}, {"id", nullptr}});
    return RelayAction{RelayAction::Forward::kDrop, {}, {}};
  }
  if (env.method == "notifications/cancelled" && env.has_params) {
    std::string why;
    auto rid = Member(env.params, "requestId");
    std::optional<RpcId> id = rid ? DecodeId(*rid, &why) : std::nullopt;
    auto& asked = pending_[from];
    if (auto it = id ? asked.find(id->key) : asked.end(); it != asked.end() && it->second.audited) {
      AuditCall(it->second, id->json, "cancelled", 0, {});
      it->second.audited = false;  // its late answer, if any, passes unrecorded
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
      ++unanswered;
      if (p.audited) {
        std::string id = key[0] == 's' ? JsonQuote(key.substr(2)) : key.substr(2);
        AuditCall(p, id, "no_response", 0, {});
      }
    }
  }
  Audit({{"event", "session_end"}, {"calls", calls_}, {"denied", denied_}, {"forged", forged_},
         {"refused", refused_}, {"unanswered", unanswered}});
}

}  // namespace mcpcell
