#pragma once
// What the prompt and resource rules (mcpcell.prompts, mcpcell.resources)
// judge beyond the three calls (tools/call, resources/read, prompts/get,
// judged in mcp_relay.cc): every other message that names a prompt or a
// resource. A denied resource cannot be subscribed to, its updates do not
// reach the client, its URI template is not listed, and a denied prompt's
// or template's arguments are not completed — so a rule hides the thing, not
// only its reads.
//
// URI templates (RFC 6570, resources/templates/list) are judged as the URI
// they are written as: a glob whose '*' covers the "{...}" expressions hides
// the template ("demo://dyn/*" hides "demo://dyn/{id}"; an allow list hides
// every template it does not cover). Globs cannot say which URIs a template
// expands to, so a template that is listed may still expand to a denied URI:
// each expansion is judged on its own where it is used (resources/read,
// resources/subscribe), which is where the rules hold.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relay/envelope.h"
#include "relay/tool_filter.h"

namespace mcpcell {

/// A request that names a prompt or resource the rules judge, other than
/// the three calls: resources/subscribe, resources/unsubscribe, completion/complete.
bool NamesContent(std::string_view method);

/// The audit event of such a request when it is refused: "resource_subscribe",
/// "resource_unsubscribe", "completion"; nullptr for any other method.
const char* ContentEventFor(std::string_view method);

/// The verdict on one NamesContent request.
struct ContentVerdict {
  std::string subject;                ///< the uri or prompt name judged (empty: nothing named)
  std::optional<Refusal> refusal;     ///< set when it may not pass
};

/// Judges a NamesContent request with `params` (absent: null element) by the
/// prompt and resource rules. Without active rules everything passes
/// unjudged, as the server would see it.
ContentVerdict JudgeContent(const Envelope& env, const ToolFilter& prompts, const ToolFilter& resources);

/// A server's notifications/resources/updated naming a denied URI (or none
/// that can be judged, while resource rules exist): why it is dropped.
std::optional<std::string> UpdateDenial(const Envelope& env, const ToolFilter& resources);

/// A tools/call or prompts/get answer whose embedded resources ("type":
/// "resource", by resource.uri) or resource links ("resource_link", by uri)
/// name a URI `resources` denies: each such item replaced by a text item
/// naming the rule. A server's own content is its to send, but an honest
/// server that embeds any resource on request (server-everything's
/// resource-prompt) would otherwise hand the client what resources/read refuses.
struct WithheldResources {
  std::string line;               ///< the answer to pass on instead (no newline)
  std::vector<std::string> uris;  ///< the first kMaxListed withheld URIs, each cut at 1 KiB
  std::size_t count = 0;
  std::string reason;             ///< the first denial
};
inline constexpr std::size_t kMaxListed = 16;
/// nullopt when nothing is denied (or there are no resource rules).
std::optional<WithheldResources> WithholdDeniedResources(const Envelope& env, std::string_view method,
                                                         std::string_view line, const ToolFilter& resources);

}  // namespace mcpcell
