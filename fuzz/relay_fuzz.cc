// libFuzzer target: the MCP relay's framer and decisions (src/relay/), fed
// lines in both directions, with a profile that denies "write_*". Besides
// crashes it checks the promise the relay exists for: no line it passes on
// as is, or writes in place of one, is a tools/call of a denied tool as the
// server will read it (nlohmann::json takes the last of duplicate keys and
// decodes escapes, as the TypeScript SDK does), and no answer it passes to a
// tools/list the client sent lists one; the same for a resource deny rule
// ("secret://*"): no resources/read, subscribe or unsubscribe of a denied
// URI reaches the server, no resources/templates/list answer lists one.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "relay/envelope.h"
#include "relay/line_framer.h"
#include "relay/mcp_relay.h"

namespace {

bool Denied(const nlohmann::json& name) {
  return name.is_string() && name.get<std::string>().rfind("write_", 0) == 0;
}

// The profile's mcpcell.resources.deny ["secret://*"], as the relay matches it (any case).
bool DeniedUri(const nlohmann::json& uri) {
  if (!uri.is_string()) return false;
  std::string u = uri.get<std::string>();
  for (auto& c : u) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return u.rfind("secret://", 0) == 0;
}

// The client's requests that reached the server, by id as the client reads
// it back: an answer to a tools/list among them is a tool list to the client.
using SentMethods = std::map<std::string, std::string>;

// What a server (client side: a tools/list result) would act on in `line`.
void CheckPassed(std::string_view line, bool to_server, SentMethods* sent) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;  // the peer would not act on it either
  if (to_server && j.value("method", nlohmann::json()) == "tools/call" && j.contains("params") &&
      j["params"].is_object() && Denied(j["params"].value("name", nlohmann::json()))) {
    std::abort();  // a denied tool reached the server
  }
  const auto method = j.value("method", nlohmann::json());
  bool names_uri = method == "resources/read" || method == "resources/subscribe" || method == "resources/unsubscribe";
  if (to_server && names_uri && j.contains("params") && j["params"].is_object() &&
      DeniedUri(j["params"].value("uri", nlohmann::json()))) {
    std::abort();  // a denied resource was read or subscribed to
  }
  if (to_server && j.contains("id") && j.contains("method") && j["method"].is_string()) {
    (*sent)[j["id"].dump()] = j["method"].get<std::string>();
  }
  std::string asked = !to_server && j.contains("id") && sent->count(j["id"].dump()) != 0 ? (*sent)[j["id"].dump()] : "";
  if (asked == "resources/templates/list" && j.contains("result") && j["result"].is_object() &&
      j["result"].contains("resourceTemplates") && j["result"]["resourceTemplates"].is_array()) {
    for (const auto& t : j["result"]["resourceTemplates"]) {
      if (t.is_object() && DeniedUri(t.value("uriTemplate", nlohmann::json()))) std::abort();  // a denied template listed
    }
  }
  bool answers_list = asked == "tools/list";
  if (answers_list && j.contains("result") && j["result"].is_object() && j["result"].contains("tools") &&
      j["result"]["tools"].is_array()) {
    for (const auto& t : j["result"]["tools"]) {
      if (t.is_object() && Denied(t.value("name", nlohmann::json()))) std::abort();  // listed to the client
    }
  }
}

// The oversize line's id scanner (relay/line_framer.h) against a real
// parser: when it names an id, it is the id a peer reads (or the relay's
// refusal would answer another request).
void CheckScannedId(std::string_view line) {
  mcpcell::TopLevelIdScanner scan;
  scan.Feed(line);
  std::string said = mcpcell::IdFromValue(scan.Value());
  if (said == "null") return;  // it may give up; it must not be wrong
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded()) return;  // not JSON: the peer reads no id
  if (!j.is_object() || !j.contains("id") || j["id"].dump() != said) std::abort();
}

// DomBytesBound (relay/envelope.h) against simdjson itself: the bound covers
// the index entries stage 1 wrote and the tape words stage 2 wrote, valid
// JSON or not (a count that missed tokens would let a dense line through).
void CheckDomBound(std::string_view line) {  // followed by LineFramer::kPadding bytes
  static simdjson::dom::parser parser;
  // Stage 1 leaves the count unset when it fails early (an unclosed string):
  // a stale count from the previous line would read as this one's.
  if (parser.implementation) parser.implementation->n_structural_indexes = 0;
  auto doc = parser.parse(line.data(), line.size(), false);
  std::size_t index = 4 * std::size_t{parser.implementation->n_structural_indexes};
  // The root word holds the tape's length; its two root words are in the bound's fixed part.
  std::size_t tape = doc.error() ? 0 : 8 * ((parser.doc.tape[0] & simdjson::internal::JSON_VALUE_MASK) - 2);
  if (mcpcell::DomBytesBound(line) - mcpcell::DomBytesBound({}) < index + tape) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mcpcell::RelayConfig cfg;
  cfg.server = "fuzz";
  cfg.tools.deny = {"write_*"};
  cfg.tools.origin = "fuzz";
  cfg.resources.deny = {"secret://*"};
  cfg.resources.origin = "fuzz";
  cfg.max_message = 4096;
  mcpcell::McpRelay relay(cfg, [](const nlohmann::json&) -> mcpcell::Status { return {}; });
  // Byte 0 of the input picks, bit by bit, the direction of each line.
  if (size == 0) return 0;
  std::uint8_t sides = data[0];
  mcpcell::LineFramer framer(cfg.max_message);
  std::size_t room = 0;
  char* dst = framer.WritePtr(&room);
  std::size_t n = std::min(room, size - 1);
  std::memcpy(dst, data + 1, n);
  framer.Commit(n);
  int i = 0;
  SentMethods sent;
  auto handle = [&](const mcpcell::LineFramer::Line& line) {
    bool from_client = ((sides >> (i++ % 8)) & 1) == 0;
    if (!line.oversize) CheckScannedId(line.text);
    if (!line.oversize) CheckDomBound(line.text);
    auto act = from_client ? relay.FromClient(line) : relay.FromServer(line);
    if (act.forward == mcpcell::RelayAction::Forward::kAsIs && !line.oversize) CheckPassed(line.text, from_client, &sent);
    if (act.forward == mcpcell::RelayAction::Forward::kReplaced) CheckPassed(act.replacement, from_client, &sent);
  };
  while (auto line = framer.Next()) handle(*line);
  if (auto last = framer.Finish()) handle(*last);
  relay.End();
  return 0;
}
