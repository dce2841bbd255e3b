#pragma once
// A client for the Docker Engine API (also served by Podman) over a unix
// socket, built on Boost.Beast. One connection per call: a local socket
// connect costs microseconds, and no state survives between calls.

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell::docker {

/// API version every path is prefixed with. 1.41 is served by Docker 20.10+
/// and by Podman's compat service.
inline constexpr std::string_view kApiPrefix = "/v1.41";

struct HttpReply {
  unsigned status = 0;
  std::string body;
};

/// The connection after an HTTP upgrade (attach): dockerd's raw stream.
/// `leftover` holds stream bytes that arrived with the response header.
struct HijackedStream {
  UniqueFd fd;  ///< blocking, close-on-exec
  std::string leftover;
};

/// The engine calls a container cell's lifecycle makes (container_lifecycle.h),
/// so that their order and the cleanup on every path can be tested against
/// a fake engine. EngineClient is the real one.
class EngineApi {
 public:
  virtual ~EngineApi() = default;
  /// As EngineClient::Call, bounded by the client's own timeout.
  virtual Result<HttpReply> Call(std::string_view method, const std::string& target, const std::string& body = {},
                                 std::string_view content_type = "application/json",
                                 bool no_timeout = false) const = 0;
  /// As Call, bounded by `timeout` instead (a wait that may outlast the default).
  virtual Result<HttpReply> CallWithin(std::string_view method, const std::string& target,
                                       std::chrono::milliseconds timeout) const = 0;
  /// As EngineClient::Hijack.
  virtual Result<HijackedStream> Hijack(const std::string& target) const = 0;
};

class EngineClient final : public EngineApi {
 public:
  /// `timeout` bounds each call except Wait-style calls made with `no_timeout`.
  explicit EngineClient(std::string socket_path,
                        std::chrono::milliseconds timeout = std::chrono::seconds(60));

  /// Sends `method target` (target without the API prefix) with `body` and
  /// reads the whole reply. Fails only when the exchange failed (connect,
  /// timeout, malformed reply); an HTTP error status is a reply, not an Error.
  /// A connect failure's Error has what "connect to container engine" and the
  /// errno (ENOENT, ECONNREFUSED, EACCES): see IsEngineUnreachable.
  Result<HttpReply> Call(std::string_view method, const std::string& target, const std::string& body = {},
                         std::string_view content_type = "application/json", bool no_timeout = false) const override;

  Result<HttpReply> CallWithin(std::string_view method, const std::string& target,
                               std::chrono::milliseconds timeout) const override;

  /// Sends `method target` and hands the reply body to `on_data` piece by
  /// piece as it arrives (a pull streams JSON progress for minutes). The
  /// timeout bounds each read, not the whole exchange: a registry that keeps
  /// sending may take as long as it needs, one that stalls ends the call.
  /// Returns the HTTP status; the body of an error status goes to `on_data` too.
  Result<unsigned> Stream(std::string_view method, const std::string& target,
                          const std::function<void(std::string_view)>& on_data) const;

  /// POSTs `target` asking for a protocol upgrade and returns the raw stream
  /// once the engine answered 101 (or 200, which older engines send).
  Result<HijackedStream> Hijack(const std::string& target) const override;
  /// The same with a JSON body (exec start needs {"Detach":false,...}).
  Result<HijackedStream> Hijack(const std::string& target, const std::string& json_body) const;

  const std::string& socket_path() const { return socket_path_; }

  /// When set, a pending SIGINT/SIGTERM/SIGHUP/SIGQUIT (blocked by the
  /// supervisor, see BlockSupervisorSignals) aborts a call with EINTR instead
  /// of letting a slow engine hold a user's Ctrl-C for the whole timeout. For
  /// setup calls only: cleanup calls must run even with a signal pending.
  void set_interruptible(bool on) { interruptible_ = on; }

 private:
  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  bool interruptible_ = false;
};

/// True when `e` says the engine could not be reached at all (no socket,
/// refused, permission denied): the cases where a fallback may apply.
bool IsEngineUnreachable(const Error& e);

/// The engine's own words from an error reply ({"message": "..."}), else the raw body.
std::string EngineMessage(const HttpReply& reply);

/// `s` escaped for a URL query value.
std::string UrlEncode(std::string_view s);

}  // namespace mcpcell::docker
