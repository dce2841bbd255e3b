#include "relay/content_rules.h"

#include <fmt/format.h>

namespace mcpcell {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

std::optional<element> ObjectMember(element obj, std::string_view key) {
  if (obj.type() != element_type::OBJECT) return std::nullopt;
  auto v = obj.get_object().value_unsafe().at_key(key);
  if (v.error()) return std::nullopt;
  return v.value_unsafe();
}

Refusal RefusalFor(const Envelope& env, int code, std::string message) {
  return Refusal{code, std::move(message), env.id->json, env.id->key};
}

// A string member the rules must judge that is missing or not a string: the
// server might still read something there (a number it coerces), so the
// request is refused rather than passed unjudged.
Refusal Unjudgeable(const Envelope& env, std::string_view member, const ToolFilter& rules) {
  return RefusalFor(env, kInvalidRequest,
                    fmt::format("mcpcell relay: {} needs {} as a string while {} has {} rules", env.method, member,
                                rules.rules().origin, rules.rules().key));
}

// The one string a request names, judged by `rules` (inactive: passes unjudged).
ContentVerdict JudgeString(const Envelope& env, std::optional<element> holder, std::string_view key,
                           std::string_view member, const ToolFilter& rules) {
  ContentVerdict v;
  if (!rules.active()) return v;
  auto s = holder ? StringMember(*holder, key) : std::nullopt;
  if (!s) {
    v.refusal = Unjudgeable(env, member, rules);
    return v;
  }
  v.subject = std::string(*s);
  if (auto denial = rules.Denial(*s)) v.refusal = RefusalFor(env, kRefusedByPolicy, "mcpcell: " + *denial);
  return v;
}

// completion/complete's params.ref: a prompt by name, or a resource
// template by uri (MCP 2025-06-18 "Completion"). Completing a denied
// prompt's arguments would tell the client what the prompt takes.
ContentVerdict JudgeCompletion(const Envelope& env, const ToolFilter& prompts, const ToolFilter& resources) {
  auto ref = env.has_params ? ObjectMember(env.params, "ref") : std::nullopt;
  auto type = ref ? StringMember(*ref, "type") : std::nullopt;
  if (type && *type == "ref/prompt") return JudgeString(env, ref, "name", "params.ref.name", prompts);
  if (type && *type == "ref/resource") return JudgeString(env, ref, "uri", "params.ref.uri", resources);
  return {};  // no reference the rules speak about; the server refuses what it cannot read
}

}  // namespace

bool NamesContent(std::string_view method) { return ContentEventFor(method) != nullptr; }

const char* ContentEventFor(std::string_view method) {
  if (method == "resources/subscribe") return "resource_subscribe";
  if (method == "resources/unsubscribe") return "resource_unsubscribe";
  if (method == "completion/complete") return "completion";
  return nullptr;
}

ContentVerdict JudgeContent(const Envelope& env, const ToolFilter& prompts, const ToolFilter& resources) {
  if (env.method == "completion/complete") return JudgeCompletion(env, prompts, resources);
  auto params = env.has_params ? std::optional<element>(env.params) : std::nullopt;
  return JudgeString(env, params, "uri", "params.uri", resources);
}

std::optional<std::string> UpdateDenial(const Envelope& env, const ToolFilter& resources) {
  if (!resources.active()) return std::nullopt;
  auto uri = env.has_params ? StringMember(env.params, "uri") : std::nullopt;
  if (!uri) {
    return fmt::format("mcpcell relay: {} without params.uri as a string, dropped while {} has {} rules", env.method,
                       resources.rules().origin, resources.rules().key);
  }
  if (auto denial = resources.Denial(*uri)) return "mcpcell: " + *denial + " (an update of it is not passed on)";
  return std::nullopt;
}

}  // namespace mcpcell
