#pragma once
// Pure parsers for the files and answers `mcpcell doctor` reads:
// /proc/<pid>/status, sysctl values, cgroup word lists, uname releases, HTTP
// answers from an engine socket and Docker runtime lists. No I/O here, so the
// unit tests can feed them sample contents. (mountinfo and /proc/<pid>/cgroup
// are parsed by cell/native/cgroup_parse.h, shared with the cgroup backend.)

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpcell::doctor {

/// Splits on ASCII whitespace ("cpu memory pids", "kill_process errno ...").
std::vector<std::string> SplitWords(std::string_view s);

/// The value of "Key:" in /proc/<pid>/status text, whitespace-trimmed.
std::optional<std::string> StatusField(std::string_view status_text, std::string_view key);

/// A sysctl file's content as an integer ("1\n" -> 1); nullopt when not one.
std::optional<long> ParseSysctlInt(std::string_view content);

struct KernelVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  bool AtLeast(int maj, int min) const { return major > maj || (major == maj && minor >= min); }
};

/// Parses a uname release such as "6.18.44-fc-v769" or "5.15.0-91-generic".
std::optional<KernelVersion> ParseKernelRelease(std::string_view release);

/// An HTTP/1.x response: status code, headers (names lower-cased) and the body,
/// with chunked transfer coding removed.
struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;
};

/// Parses a whole response as read until the peer closed or enough arrived;
/// nullopt when the status line or headers are incomplete or malformed.
std::optional<HttpResponse> ParseHttpResponse(std::string_view raw);

/// "unix:///path" -> "/path"; anything else (tcp://, ssh://, empty) -> "".
std::string UnixSocketPathFromHost(std::string_view docker_host);

/// Names of the runtimes in a Docker daemon.json ("runtimes") or an /info
/// answer ("Runtimes"), each as {name, path}. Unparseable JSON gives none.
std::map<std::string, std::string> ParseDockerRuntimes(std::string_view json_text);

/// The names among `runtimes` that run gVisor (name or path mentions runsc).
std::vector<std::string> GvisorRuntimes(const std::map<std::string, std::string>& runtimes);

}  // namespace mcpcell::doctor
