#pragma once
// Pure parsers for the files and answers `mcpcell doctor` reads: mountinfo,
// /proc/<pid>/cgroup, /proc/<pid>/status, sysctl values, uname releases, HTTP
// answers from an engine socket and Docker runtime lists. No I/O here, so the
// unit tests can feed them sample contents.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpcell::doctor {

/// One line of /proc/<pid>/mountinfo (proc(5)), with \NNN octal escapes decoded.
struct MountEntry {
  std::string root;           ///< field 4: the path within the filesystem that is mounted
  std::string mount_point;    ///< field 5
  std::string fstype;         ///< after the " - " separator
  std::string source;
  std::string super_options;  ///< e.g. "rw,memory" for a cgroup v1 hierarchy
};

/// Parses mountinfo text; malformed lines are skipped.
std::vector<MountEntry> ParseMountinfo(std::string_view text);

/// Decodes the \040-style octal escapes the kernel uses in mountinfo paths.
std::string DecodeOctalEscapes(std::string_view s);

/// Which cgroup hierarchies are mounted where.
struct CgroupMounts {
  std::optional<MountEntry> v2;                 ///< the cgroup2 mount (first one seen)
  std::map<std::string, MountEntry> v1;         ///< controller or "name=x" -> its v1 mount
  /// "v2" (only cgroup2), "v1" (only v1), "hybrid" (both), "none".
  std::string Version() const;
};

/// Picks the cgroup mounts out of parsed mountinfo.
CgroupMounts FindCgroupMounts(const std::vector<MountEntry>& mounts);

/// One line of /proc/<pid>/cgroup: "hierarchy-ID:controller-list:path" (cgroups(7)).
struct ProcCgroup {
  int hierarchy = 0;                     ///< 0 is the v2 unified hierarchy
  std::vector<std::string> controllers;  ///< empty for v2
  std::string path;
};

/// Parses /proc/<pid>/cgroup; malformed lines are skipped.
std::vector<ProcCgroup> ParseProcCgroup(std::string_view text);

/// The directory of cgroup `path` under `mount`, or nullopt when the cgroup
/// lies outside the part of the hierarchy this mount shows (its root field),
/// as happens inside containers with a cgroup namespace or a sub-mount.
std::optional<std::string> CgroupDir(const MountEntry& mount, const std::string& path);

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
