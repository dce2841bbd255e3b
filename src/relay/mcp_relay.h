#pragma once
// The relay's decisions, message by message, with no I/O: the pump
// (relay_pump.h) reads lines, asks McpRelay what to do with each, and does
// it. Both directions carry requests, responses and notifications; ids are
// tracked per direction (both sides number from 0), so a response is passed
// only if the other side asked that exact id and has not been answered yet.
// Both MCP eras: nothing waits for initialize; the 2026-07-28 era's
// per-request _meta is read per request; every tools/list result is filtered
// on its own, and an input_required round's retry is judged like a first call.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "relay/line_framer.h"
#include "relay/tool_filter.h"

namespace mcpcell {

// envelope.h (simdjson) stays out of the headers that include this one.
struct Envelope;
struct Refusal;
class EnvelopeParser;

struct RelayConfig {
  std::string server;                              ///< as the audit log names it
  ToolRules tools;
  std::size_t max_message = 64 * 1024 * 1024;      ///< bytes per line, either direction
  std::size_t max_pending = 4096;                  ///< unanswered requests per direction
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
  using AuditSink = std::function<void(const nlohmann::json&)>;
  McpRelay(RelayConfig config, AuditSink audit);
  ~McpRelay();

  /// A line the client wrote (to the server's stdin).
  RelayAction FromClient(const LineFramer::Line& line);
  /// A line the server wrote (to the client's stdout).
  RelayAction FromServer(const LineFramer::Line& line);
  /// The session ended: calls still unanswered are audited, then session_end.
  void End();

 private:
  enum Side { kClient = 0, kServer = 1 };
  struct Pending {
    std::string method;
    std::string subject;       ///< tool name, resource uri or prompt name
    std::string protocol;      ///< params._meta protocolVersion (2026-07-28 era), if any
    nlohmann::json arguments;  ///< redacted summary
    std::chrono::steady_clock::time_point start;
    std::size_t bytes_in = 0;
    bool audited = false;      ///< tools/call, resources/read, prompts/get
  };

  RelayAction FromSide(Side from, const LineFramer::Line& line);
  RelayAction Request(Side from, const Envelope& env, std::size_t bytes);
  RelayAction Response(Side from, const Envelope& env, std::string_view line);
  RelayAction Notification(Side from, const Envelope& env);
  RelayAction Refused(Side from, const Refusal& r, std::size_t bytes);
  std::optional<Refusal> JudgeRequest(const Envelope& env, Pending* p);
  void AuditCall(const Pending& p, const std::string& id, std::string outcome, std::size_t bytes_out,
                 nlohmann::json extra);
  std::string FilterToolsList(const Envelope& env, std::string_view line, std::size_t* hidden);
  void Audit(nlohmann::json event);

  RelayConfig config_;
  ToolFilter filter_;
  AuditSink audit_;
  std::mutex mu_;
  std::unique_ptr<EnvelopeParser> parsers_[2];
  std::map<std::string, Pending> pending_[2];  ///< requests sent by side i, by id key
  std::uint64_t calls_ = 0, denied_ = 0, forged_ = 0, refused_ = 0;
  bool ended_ = false;
  static constexpr std::uint64_t kMaxServerNoise = 100;  ///< forged/refused server lines recorded one by one
  std::uint64_t server_noise_ = 0, held_back_ = 0;
};

}  // namespace mcpcell
