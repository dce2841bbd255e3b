#include "relay/content_rules.h"

#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mcpcell {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

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
  auto ref = env.has_params ? Member(env.params, "ref") : std::nullopt;
  auto type = ref ? StringMember(*ref, "type") : std::nullopt;
  if (type && *type == "ref/prompt") return JudgeString(env, ref, "name", "params.ref.name", prompts);
  if (type && *type == "ref/resource") return JudgeString(env, ref, "uri", "params.ref.uri", resources);
  return {};  // no reference the rules speak about; the server refuses what it cannot read
}

// The URI an embedded resource or resource link names; nullopt for any other item.
std::optional<std::string_view> ItemUri(element item) {
  auto type = StringMember(item, "type");
  if (type && *type == "resource_link") return StringMember(item, "uri");
  if (!type || *type != "resource") return std::nullopt;
  auto res = Member(item, "resource");
  return res ? StringMember(*res, "uri") : std::nullopt;
}

// Calls `f` on every content item of a tools/call result (result.content[])
// or a prompts/get result (result.messages[].content, one item or an array).
void ForEachItem(element result, std::string_view method, const std::function<void(element)>& f) {
  auto each = [&](std::optional<element> v) {
    if (!v) return;
    if (v->type() == element_type::OBJECT) return f(*v);
    if (v->type() != element_type::ARRAY) return;
    // A copy: value_unsafe() of a temporary result would dangle in a range-for.
    simdjson::dom::array items = v->get_array().value_unsafe();
    for (element item : items) f(item);
  };
  if (method == "tools/call") return each(Member(result, "content"));
  auto messages = Member(result, "messages");
  if (!messages || messages->type() != element_type::ARRAY) return;
  simdjson::dom::array list = messages->get_array().value_unsafe();
  for (element m : list) each(Member(m, "content"));
}

// The same walk on the answer as nlohmann::json, replacing each denied item.
void ReplaceItems(nlohmann::json& result, std::string_view method, const ToolFilter& resources) {
  auto fix = [&](nlohmann::json& item) {
    if (!item.is_object() || !item.contains("type") || !item["type"].is_string()) return;
    const nlohmann::json* holder = &item;  // resource_link: {uri}; resource: {resource: {uri}}
    if (item["type"] == "resource") {
      holder = item.contains("resource") && item["resource"].is_object() ? &item["resource"] : nullptr;
    } else if (item["type"] != "resource_link") {
      return;
    }
    if (holder == nullptr || !holder->contains("uri") || !(*holder)["uri"].is_string()) return;
    auto denial = resources.Denial((*holder)["uri"].get<std::string>());
    if (denial) item = {{"type", "text"}, {"text", "[mcpcell withheld an embedded resource: " + *denial + "]"}};
  };
  auto each = [&](nlohmann::json& v) {
    if (v.is_object()) return fix(v);
    if (v.is_array()) for (auto& item : v) fix(item);
  };
  if (method == "tools/call") {
    if (result.contains("content")) each(result["content"]);
    return;
  }
  if (!result.contains("messages") || !result["messages"].is_array()) return;
  for (auto& m : result["messages"]) {
    if (m.is_object() && m.contains("content")) each(m["content"]);
  }
}

}  // namespace

std::optional<WithheldResources> WithholdDeniedResources(const Envelope& env, std::string_view method,
                                                         std::string_view line, const ToolFilter& resources) {
  if (!resources.active() || !env.has_result || env.has_error) return std::nullopt;
  WithheldResources w;
  ForEachItem(env.result, method, [&](element item) {
    auto uri = ItemUri(item);
    auto denial = uri ? resources.Denial(*uri) : std::nullopt;
    if (!denial) return;
    if (w.count++ == 0) w.reason = *denial;
    if (w.uris.size() < kMaxListed) w.uris.emplace_back(uri->substr(0, 1024));
  });
  if (w.count == 0) return std::nullopt;
  // Rare (a denied resource in an answer): a full parse and rewrite.
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.contains("result")) {
    w.line = ErrorResponse(env.id->json, kRefusedByPolicy, "mcpcell: " + w.reason);
    return w;
  }
  ReplaceItems(j["result"], method, resources);
  w.line = j.dump();
  return w;
}

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
