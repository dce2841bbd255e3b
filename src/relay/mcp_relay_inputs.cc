// What a server asks of the client (docs/PINNING.md, "What a server asks"):
// an elicitation (a question or form for the user) or a sampling request (a
// prompt for the client's model). In the 2025 era the server sends it as a
// request of its own; in the 2026-07-28 era it is an inputRequests entry of
// an input_required answer, and the client's retry carries the answers. Both
// reach guard/poison_check.h's CheckInputRequest here: findings are audited,
// high ones said on stderr, and with "poisoning": "block" refused.

#include <fmt/format.h>

#include "guard/poison_check.h"
#include "relay/envelope.h"
#include "relay/mcp_relay.h"
#include "util/diag.h"

namespace mcpcell {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Read into nlohmann::json for the checks only up to this size: a request
// holds about twice its text there. An honest elicitation is a sentence and
// a small form; a sampling request may carry an image, which is no text to
// check. Over it, an elicitation is a finding of its own (high), a sampling
// request is passed with a low one (unchecked, and the record says so).
constexpr std::size_t kMaxCheckedBytes = 1 << 20;
constexpr std::uint64_t kMaxSaid = 20;  ///< stderr lines; every finding is in the audit log

bool IsInputMethod(std::string_view method) {
  return method == "elicitation/create" || method == "sampling/createMessage";
}

std::string FirstHigh(const std::vector<PoisonFinding>& findings) {
  for (const auto& f : findings) {
    if (f.severity == "high") return fmt::format("{} in {}: {}", f.rule, f.field, f.excerpt);
  }
  return "";
}

}  // namespace

std::optional<std::string> McpRelay::JudgeInputRequest(std::string_view method, const element* params,
                                                       const nlohmann::json& where) {
  if (!IsInputMethod(method) || !params) return std::nullopt;
  std::vector<PoisonFinding> findings;
  std::string text = simdjson::to_string(*params);  // at most the line, and only for these two methods
  if (text.size() > kMaxCheckedBytes) {
    bool ask = method == "elicitation/create";
    findings.push_back({"oversized", ask ? "high" : "low", "params",
                        fmt::format("{} bytes; requests up to {} are checked", text.size(), kMaxCheckedBytes)});
  } else {
    findings = CheckInputRequest(method, nlohmann::json::parse(text, nullptr, false));
  }
  if (findings.empty()) return std::nullopt;
  bool high = HasHighSeverity(findings);
  bool block = high && config_.block_input_requests;
  nlohmann::json e{{"event", "input_request"}, {"method", method}, {"findings", ToJson(findings)},
                   {"action", block ? "refused" : "passed"}};
  for (auto& [k, v] : where.items()) e[k] = v;
  Audit(std::move(e));
  if (!high) return std::nullopt;
  std::string what = method == "elicitation/create" ? "asks the user" : "asks the client's model";
  std::string finding = FirstHigh(findings);
  if (input_said_ < kMaxSaid) {
    ++input_said_;
    Say(fmt::format("relay: {}the server {} something the poisoning checks flag ({}){}", block ? "refused: " : "warning: ",
                    what, finding,
                    block ? "" : "; it was passed on (set \"poisoning\": \"block\" in the profile's mcpcell.pins to refuse such requests)"));
  }
  if (!block) return std::nullopt;
  return fmt::format("mcpcell: the server's {} {} something the poisoning checks flag ({}); refused because the "
                     "profile's mcpcell.pins.poisoning is \"block\" (to allow it: \"poisoning\": \"warn\")",
                     method, what, finding);
}

std::optional<std::string> McpRelay::JudgeInputRequests(const Envelope& env) {
  auto requests = Member(env.result, "inputRequests");
  if (!requests) return std::nullopt;
  auto judge = [&](std::string_view key, element entry) -> std::optional<std::string> {
    auto method = StringMember(entry, "method");
    if (!method) return std::nullopt;
    nlohmann::json where{{"via", "input_required"}, {"key", key}, {"id", nlohmann::json::parse(env.id->json)}};
    auto params = Member(entry, "params");
    return JudgeInputRequest(*method, params ? &*params : nullptr, where);
  };
  // Copies: value_unsafe() of a temporary result would dangle in a range-for.
  if (requests->type() == element_type::OBJECT) {
    simdjson::dom::object entries = requests->get_object().value_unsafe();
    for (auto field : entries) {
      if (auto r = judge(field.key, field.value)) return r;
    }
  } else if (requests->type() == element_type::ARRAY) {
    simdjson::dom::array entries = requests->get_array().value_unsafe();
    for (element entry : entries) {
      if (auto r = judge("", entry)) return r;
    }
  }
  return std::nullopt;
}

}  // namespace mcpcell
