#pragma once
// CellSpec: the one declarative description of a cell. Flags, policy, profile
// and registry defaults all lower into it; every backend only reads it; it can
// be printed (`--dry-run`) so a user sees exactly what will be enforced.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "guard/secret_policy.h"

namespace mcpcell {

/// Something that appears inside the cell's filesystem.
struct MountSpec {
  enum class Kind { kBind, kTmpfs };
  /// What the mount is for, where a backend decides on it (modes, mount
  /// flags, rechecks, what an image replaces). `why` is the same in words
  /// for people, and is never compared to decide anything.
  enum class Origin {
    kGrant,       ///< what the user or a profile named (--read, --write, npx cache, image volume)
    kSystem,      ///< a host system dir (/usr, /lib...), optional, replaced by an image's own
    kMasked,      ///< hides a credential or socket: mode 0, device nodes allowed (/dev/null)
    /// kMasked over a file of the host's system dirs (npm's global npmrc
    /// under /usr): a mask, and the host's like kSystem, so it goes where
    /// they go (an image has its own /usr, where it would make directories
    /// appear).
    kSystemMasked,
    kTmp,         ///< the cell's /tmp: sticky and world-writable
    kHome,        ///< the cell's $HOME tmpfs
    kServerLink,  ///< the symlink of the server's executable, bound as the link itself
  };
  Kind kind = Kind::kBind;
  std::string source;   ///< host path for kBind (absolute, resolved); empty for kTmpfs
  std::string target;   ///< absolute path inside the cell
  bool writable = false;
  bool optional = false;  ///< skip silently if the source is missing (system dirs like /lib64)
  std::uint64_t size_bytes = 0;  ///< kTmpfs only; 0 = backend default
  std::string why;  ///< where it came from: "system", "server", "--read", "--write", "masked", ...
  /// kBind: the source's device and inode when it was checked (0 = not
  /// recorded); the backend refuses a source that is no longer that object.
  std::uint64_t source_dev = 0;
  std::uint64_t source_ino = 0;
  Origin origin = Origin::kGrant;
};

/// `m` with its origin set (MountSpec is built by aggregate initialisation).
inline MountSpec WithOrigin(MountSpec m, MountSpec::Origin origin) {
  m.origin = origin;
  return m;
}

/// Whether `m` hides what is at its target (kMasked, kSystemMasked):
/// nothing may be reached through it.
inline bool IsMask(const MountSpec& m) {
  return m.origin == MountSpec::Origin::kMasked || m.origin == MountSpec::Origin::kSystemMasked;
}

/// Whether `m` is of the host's system dirs (kSystem, kSystemMasked), which
/// an image cell replaces with the image's own.
inline bool IsHostSystem(const MountSpec& m) {
  return m.origin == MountSpec::Origin::kSystem || m.origin == MountSpec::Origin::kSystemMasked;
}

/// A limit and whether the user asked for it. A requested limit that cannot be
/// enforced is an error; a default one only a warning.
template <typename T>
struct Limit {
  std::optional<T> value;
  bool requested = false;  ///< true when it came from a flag, profile or policy, not a default
};

struct Limits {
  Limit<std::uint64_t> memory_bytes;
  Limit<std::uint64_t> pids;
  Limit<double> cpus;            ///< CPU cores (1.5 = 150% of one core)
  std::uint64_t tmp_bytes = 0;   ///< size of the cell's /tmp tmpfs
  std::uint64_t nofile = 4096;   ///< RLIMIT_NOFILE
  std::uint64_t core_bytes = 0;  ///< RLIMIT_CORE: no core dumps of secrets by default
  std::uint64_t file_bytes = 0;  ///< RLIMIT_FSIZE, 0 = none (a server's --write is the user's grant)
  std::optional<std::chrono::milliseconds> timeout;  ///< wall clock for the whole run
};

/// A name pinned to an address for one port, like curl's --resolve: the
/// egress proxy uses it instead of DNS. Pinning is explicit, so a pinned
/// private or loopback address is allowed (tests point names at local servers).
struct ResolvePin {
  std::string host;         ///< lower-case name, no trailing dot
  std::uint16_t port = 0;   ///< 0 = every port ("*" in the flag)
  std::string address;      ///< numeric IPv4 or IPv6
};

/// A port of the host's own loopback the cell may reach (issue 14 item 3):
/// `--allow-host localhost:5432`. Inside the cell, TCP to 127.0.0.1:PORT is
/// redirected to mcpcell's egress proxy, which connects to the host's
/// loopback on that port only (src/egress/host_loopback.h).
struct HostLoopbackPort {
  std::string name;         ///< how the user wrote the host: "localhost", "127.0.0.1" or "::1"
  std::uint16_t port = 0;
  bool operator==(const HostLoopbackPort&) const = default;
};

/// What network the cell gets. kNone: loopback only. kAllowList: loopback,
/// plus every outbound TCP connection and DNS query handed to mcpcell's
/// egress proxy, which checks it against the rules and audits it. kOpen: the
/// host's network, unmediated (only on explicit request).
struct NetworkSpec {
  enum class Mode { kNone, kAllowList, kOpen };
  Mode mode = Mode::kNone;
  bool allow_all = false;                 ///< kAllowList: insecure_allow_all (every host and port, still audited)
  std::vector<std::string> allow_hosts;   ///< "example.com" exact, ".example.com" the domain and below
  std::vector<std::uint16_t> allow_ports; ///< empty = any port
  std::vector<ResolvePin> resolve;        ///< --resolve pins
  std::vector<HostLoopbackPort> host_ports;  ///< kAllowList: the host's loopback ports, by name
  /// What every denial by the rules says instead of "pass --allow-host",
  /// for a cell no flag or profile can open (an install-script cell:
  /// src/cell/script_cell.cc). Empty: that advice.
  std::string fixed_how_to_allow;
};

/// A secret delivered as a read-only file at /run/secrets/<name>.
struct SecretSpec {
  std::string name;
  std::string host_file;
  std::optional<std::string> env_name;  ///< only when the user asked to map it to an env var
};

/// The MCP-aware relay on the server's stdio (src/relay/).
struct RelaySpec {
  bool on = true;                         ///< --relay=off: the raw byte copy of before
  std::vector<std::string> tools_allow;   ///< mcpcell.tools.allow globs
  std::vector<std::string> tools_deny;    ///< mcpcell.tools.deny globs (win over allow)
  std::string tools_origin;               ///< "profile fs.json", for refusals
  std::vector<std::string> prompts_allow, prompts_deny;      ///< mcpcell.prompts globs, like tools
  std::vector<std::string> resources_allow, resources_deny;  ///< mcpcell.resources URI globs, like tools
  std::uint64_t max_message = 64ull << 20;  ///< bytes per line, either direction
  double call_rate = 0;                   ///< calls per second (token bucket refill); 0: no limit
  std::uint64_t call_burst = 0;           ///< the bucket's size
  std::uint64_t max_inflight = 0;         ///< unanswered calls at once; 0: no limit
  std::chrono::milliseconds call_timeout{0};  ///< 0: none
  bool audit_content = false;             ///< --audit-content: arguments and results recorded unredacted
  SecretPolicy secrets;                     ///< mcpcell.secrets: the scan of both directions
  bool pins = false;                      ///< tool pinning (src/guard/pin_guard.h, docs/PINNING.md)
  std::string pins_server;                ///< the server's pin key
  std::string pins_dir;                   ///< where its pin file lives
  bool pins_block_poisoning = false;      ///< mcpcell.pins.poisoning "block"
};

struct CellSpec {
  std::vector<std::string> argv;             ///< argv[0] resolved inside the cell via PATH
  std::map<std::string, std::string> env;    ///< the complete environment; nothing else leaks in
  std::string workdir = "/";                 ///< cwd inside the cell
  std::string hostname = "mcpcell";
  std::uint32_t uid = 1000;                  ///< uid/gid inside the cell
  std::uint32_t gid = 1000;
  bool ids_given = false;                    ///< --uid/--gid given: a container cell runs as them on the host
  std::string home = "/home/mcp";            ///< a writable tmpfs
  std::vector<MountSpec> mounts;             ///< in the order they were added; planner sorts
  NetworkSpec network;
  Limits limits;
  std::vector<SecretSpec> secrets;
  bool seccomp = true;
  /// fallocate(2) refused (EOPNOTSUPP, on top of the deny list): an
  /// install-script cell's writes to the host's disk are bounded by a look
  /// at what they took, and an allocation takes any size at once, before
  /// the next look. glibc's posix_fallocate then writes the blocks instead.
  bool refuse_preallocation = false;
  bool landlock = true;
  /// Native cells: granted directories mounted as their owner's (idmap
  /// mounts, cell/native/idmap_mount.h). kAuto: where possible, else said on
  /// stderr and bound as the cell's own id; kOn: refused where not possible.
  enum class Idmap { kAuto, kOn, kOff };
  Idmap idmap = Idmap::kAuto;
  std::chrono::milliseconds stop_grace{2000};  ///< SIGTERM → SIGKILL
  std::string backend = "native";
  RelaySpec relay;
};

/// The spec as JSON, for --dry-run and the audit log.
nlohmann::json ToJson(const CellSpec& spec);
std::string ToString(MountSpec::Kind kind);
std::string ToString(NetworkSpec::Mode mode);

}  // namespace mcpcell
