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

// Read into nlohmann::json for the checks only up to this much text: a
// request holds about twice its text there. An honest elicitation is a
// sentence and a small form, an honest sampling prompt a conversation; the
// base64 of an image or audio clip (a content block's "data", a resource's
// "blob") is left out of the count and the checks, which it could not fool:
// it is read by no model as text. Over the bound, either request is a
// finding of its own (high): the first version passed a sampling request
// padded past it with anything at all, unchecked (adversary pass, 2026-11-28).
constexpr std::size_t kMaxCheckedBytes = 1 << 20;
constexpr std::uint64_t kMaxSaid = 20;  ///< stderr lines; every finding is in the audit log

// Whether member `key` of `object` is media a model does not read as text.
bool IsMediaPayload(simdjson::dom::object object, std::string_view key) {
  if (key == "blob") return true;
  if (key != "data") return false;
  auto type = object.at_key("type");
  if (type.error() || type.value_unsafe().type() != element_type::STRING) return false;
  std::string_view t = type.value_unsafe().get_string().value_unsafe();
  return t == "image" || t == "audio";
}

// `e` as nlohmann::json for the checks, media left out, while the text kept
// stays within kMaxCheckedBytes (false: over it; what was built is partial).
bool Checkable(element e, nlohmann::json* out, std::size_t* text) {
  switch (e.type()) {
    case element_type::OBJECT: {
      *out = nlohmann::json::object();
      simdjson::dom::object members = e.get_object().value_unsafe();  // a copy: a temporary would dangle
      for (auto field : members) {
        *text += field.key.size();
        nlohmann::json& slot = (*out)[std::string(field.key)];
        if (field.value.type() == element_type::STRING && IsMediaPayload(members, field.key)) {
          slot = "(media, not read)";
          continue;
        }
        if (*text > kMaxCheckedBytes || !Checkable(field.value, &slot, text)) return false;
      }
      return true;
    }
    case element_type::ARRAY: {
      *out = nlohmann::json::array();
      simdjson::dom::array items = e.get_array().value_unsafe();
      for (element item : items) {
        out->push_back(nullptr);
        if (!Checkable(item, &out->back(), text)) return false;
      }
      return true;
    }
    case element_type::STRING: {
      std::string_view s = e.get_string().value_unsafe();
      *text += s.size();
      if (*text > kMaxCheckedBytes) return false;
      *out = std::string(s);
      return true;
    }
    default:
      *out = nlohmann::json::parse(simdjson::to_string(e), nullptr, false);  // a number, true, false, null
      return true;
  }
}

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
  nlohmann::json checkable;
  std::size_t text = 0;
  if (Checkable(*params, &checkable, &text)) {
    findings = CheckInputRequest(method, checkable);
  } else {
    findings.push_back({"oversized", "high", "params",
                        fmt::format("over {} bytes of text (base64 blobs not counted); requests up to that are checked",
                                    kMaxCheckedBytes)});
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

std::optional<std::string> McpRelay::JudgeInputRequests(const element& holder, std::string_view via,
                                                        const nlohmann::json& id) {
  auto requests = Member(holder, "inputRequests");
  if (!requests) return std::nullopt;
  auto judge = [&](std::string_view key, element entry) -> std::optional<std::string> {
    auto method = StringMember(entry, "method");
    if (!method) return std::nullopt;
    nlohmann::json where{{"via", via}, {"key", key}, {"id", id}};
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
