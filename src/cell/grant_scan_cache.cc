#include "cell/grant_scan_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <set>

#include <fmt/format.h>

#include "util/cache_dir.h"
#include "util/dir_names.h"
#include "util/write_all.h"

namespace mcpcell {
namespace {

constexpr std::string_view kHeader = "mcpcell-grant-scan 2\n";
constexpr std::string_view kEnd = "end\n";
constexpr std::size_t kKeep = 64;                      ///< files kept: one per granted root, roughly
constexpr std::size_t kMaxBytes = 32u << 20;          ///< a larger file is not read (nor written)

const OwnedRules& CacheRules() {
  static const OwnedRules kRules{"check the grant scan cache",
                                 "it must be yours and writable by nobody else, else it is not used",
                                 "remove it to have it made afresh",
                                 "run chmod go-w on it, or remove it to have it made afresh", kMaxBytes};
  return kRules;
}

// "<len>:<bytes>": a name may hold spaces and newlines.
void PutName(std::string* out, std::string_view name) {
  *out += std::to_string(name.size());
  *out += ':';
  *out += name;
  *out += '\n';
}

// Reads what the Put* above wrote, advancing `in`; false on any deviation.
struct Reader {
  std::string_view in;

  bool Literal(std::string_view s) {
    if (!in.starts_with(s)) return false;
    in.remove_prefix(s.size());
    return true;
  }
  // Written by fmt: no leading zero, no "-0"; anything else is not ours.
  template <typename T>
  bool Number(T* v, char after) {
    auto [p, ec] = std::from_chars(in.data(), in.data() + in.size(), *v);
    if (ec != std::errc() || p == in.data() || p == in.data() + in.size() || *p != after) return false;
    std::string_view digits(in.data(), static_cast<std::size_t>(p - in.data()));
    if (digits.starts_with('-')) digits.remove_prefix(1);
    if (digits.empty() || (digits.size() > 1 && digits[0] == '0') || std::string_view(in.data(), 2) == "-0") return false;
    in.remove_prefix(static_cast<std::size_t>(p - in.data()) + 1);
    return true;
  }
  bool Name(std::string* name) {
    std::size_t n = 0;
    if (!Number(&n, ':') || n >= in.size() || in[n] != '\n') return false;
    std::string_view s = in.substr(0, n);
    // Relative, no NUL, no "." or ".." component: it can only name a place below the root.
    if (s.find('\0') != std::string_view::npos || s.starts_with('/')) return false;
    for (std::size_t at = 0; at <= s.size();) {
      std::size_t slash = std::min(s.find('/', at), s.size());
      std::string_view part = s.substr(at, slash - at);
      if ((part.empty() && !s.empty()) || part == "." || part == "..") return false;
      at = slash + 1;
    }
    name->assign(s);
    in.remove_prefix(n + 1);
    return true;
  }
};

std::string Below(const std::string& root, const std::string& rel) {
  if (rel.empty()) return root;
  return (root == "/" ? "" : root) + "/" + rel;
}

std::string RelativeTo(const std::string& root, const std::string& path) {
  return path.size() > root.size() ? path.substr(root == "/" ? 1 : root.size() + 1) : "";
}

std::int64_t NowNs() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
}

// Whether `scan` may be kept: whole (no limit hit), and no directory changed
// so recently that a change in the same clock tick would leave its stamp as it is.
bool Keepable(const GrantScan& scan, std::int64_t started_ns, std::int64_t racy_ns) {
  if (!scan.cacheable || scan.creds.truncated || scan.sockets.truncated || scan.walked.empty()) return false;
  return std::none_of(scan.walked.begin(), scan.walked.end(), [&](const DirStamp& s) {
    return s.ctime_ns > started_ns - racy_ns || s.mtime_ns > started_ns - racy_ns;
  });
}

std::string FileName(const DirStamp& root) { return fmt::format("{}-{}", root.dev, root.ino); }

std::optional<RememberedScan> Load(int dir, const std::string& dir_path, const std::string& name) {
  auto fd = OpenOwnedFileAt(dir, name, O_RDONLY, "open the grant scan cache", dir_path + "/" + name, CacheRules());
  if (!fd.ok()) return std::nullopt;
  auto text = ReadOwnedFile(fd->get(), "read the grant scan cache", dir_path + "/" + name, CacheRules());
  if (!text.ok()) return std::nullopt;
  return ParseRememberedScan(*text);
}

// The newest kKeep files stay; temporary files an hour old are a crashed run's.
void Prune(int dir) {
  auto names = DirNames(dir);
  if (!names.ok()) return;
  std::vector<std::pair<std::time_t, std::string>> files;
  std::time_t now = std::time(nullptr);
  for (const std::string& name : *names) {
    struct stat st{};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (name.starts_with(".")) {
      if (now - st.st_mtime > 3600) ::unlinkat(dir, name.c_str(), 0);
      continue;
    }
    files.emplace_back(st.st_mtime, name);
  }
  std::sort(files.begin(), files.end(), std::greater<>());
  for (std::size_t i = kKeep; i < files.size(); ++i) ::unlinkat(dir, files[i].second.c_str(), 0);
}

void Store(int dir, const std::string& name, const RememberedScan& scan) {
  std::string text = FormatRememberedScan(scan);
  if (text.size() > kMaxBytes) return;
  std::string tmp = fmt::format(".{}.tmp.{}", name, ::getpid());
  (void)::unlinkat(dir, tmp.c_str(), 0);  // a crashed run of the same pid
  UniqueFd out(::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!out) return;
  bool ok = WriteAll(out.get(), text, "write the grant scan cache", tmp).ok() &&
            ::renameat(dir, tmp.c_str(), dir, name.c_str()) == 0;
  if (!ok) ::unlinkat(dir, tmp.c_str(), 0);
  Prune(dir);
}

// What the remembered scan says about `dir` now: the walk's finds as
// absolute paths, with the locations outside the walk found afresh.
GrantScan Recalled(const std::string& dir, const RememberedScan& r) {
  GrantScan out;
  out.walked = r.walked;
  out.fixed = FixedCredentialsBelow(dir);
  std::set<std::string> found(out.fixed.begin(), out.fixed.end());
  for (const auto& c : r.creds) found.insert(Below(dir, c));
  out.creds.found = OutermostOnly({found.begin(), found.end()});
  for (const auto& s : r.sockets) out.sockets.sockets.push_back(Below(dir, s));
  for (const auto& u : r.unreadable) out.unreadable.push_back(Below(dir, u));
  // Mounts are no entries of the directory they cover: looked up afresh.
  for (auto& s : MountedSocketsBelow(dir)) {
    if (std::find(out.sockets.sockets.begin(), out.sockets.sockets.end(), s) == out.sockets.sockets.end()) {
      out.sockets.sockets.push_back(std::move(s));
    }
  }
  return out;
}

RememberedScan Remembered(const std::string& dir, const GrantScan& scan, std::string rules) {
  RememberedScan r{std::move(rules), dir, scan.walked, {}, {}, {}};
  std::set<std::string> fixed(scan.fixed.begin(), scan.fixed.end());
  for (const auto& c : scan.creds.found) {
    if (fixed.count(c) == 0 && c.size() > dir.size()) r.creds.push_back(RelativeTo(dir, c));
  }
  std::vector<std::string> mounted = MountedSocketsBelow(dir);
  for (const auto& s : scan.sockets.sockets) {
    if (std::find(mounted.begin(), mounted.end(), s) == mounted.end()) r.sockets.push_back(RelativeTo(dir, s));
  }
  for (const auto& u : scan.unreadable) r.unreadable.push_back(RelativeTo(dir, u));
  return r;
}

}  // namespace

std::string FormatRememberedScan(const RememberedScan& scan) {
  std::string out(kHeader);
  out += "rules " + scan.rules + "\nroot ";
  PutName(&out, scan.root);
  for (const auto& d : scan.walked) {
    out += fmt::format("d {} {} {} {} {} ", d.mnt, d.dev, d.ino, d.ctime_ns, d.mtime_ns);
    PutName(&out, d.rel);
  }
  for (const auto& c : scan.creds) {
    out += "c ";
    PutName(&out, c);
  }
  for (const auto& s : scan.sockets) {
    out += "s ";
    PutName(&out, s);
  }
  for (const auto& u : scan.unreadable) {
    out += "u ";
    PutName(&out, u);
  }
  out += kEnd;
  return out;
}

std::optional<RememberedScan> ParseRememberedScan(std::string_view text) {
  Reader r{text};
  RememberedScan scan;
  if (!r.Literal(kHeader) || !r.Literal("rules ")) return std::nullopt;
  std::size_t nl = r.in.find('\n');
  if (nl == std::string_view::npos || nl == 0) return std::nullopt;
  scan.rules = std::string(r.in.substr(0, nl));
  r.in.remove_prefix(nl + 1);
  std::size_t len = 0;
  if (!r.Literal("root ") || !r.Number(&len, ':') || len >= r.in.size() || r.in[len] != '\n') return std::nullopt;
  scan.root = std::string(r.in.substr(0, len));
  r.in.remove_prefix(len + 1);
  if (!scan.root.starts_with('/')) return std::nullopt;
  while (r.Literal("d ")) {
    DirStamp d;
    if (!r.Number(&d.mnt, ' ') || !r.Number(&d.dev, ' ') || !r.Number(&d.ino, ' ') || !r.Number(&d.ctime_ns, ' ') ||
        !r.Number(&d.mtime_ns, ' ') || !r.Name(&d.rel)) {
      return std::nullopt;
    }
    scan.walked.push_back(std::move(d));
  }
  // The root's own stamp comes first: without it nothing says the root is the same directory.
  if (scan.walked.empty() || !scan.walked.front().rel.empty()) return std::nullopt;
  for (const char* kind : {"c ", "s ", "u "}) {
    auto& list = kind[0] == 'c' ? scan.creds : kind[0] == 's' ? scan.sockets : scan.unreadable;
    while (r.Literal(kind)) {
      std::string name;
      if (!r.Name(&name) || name.empty()) return std::nullopt;
      list.push_back(std::move(name));
    }
  }
  if (!r.Literal(kEnd) || !r.in.empty()) return std::nullopt;
  return scan;
}

std::optional<DirStamp> StampSource::Stat(const std::string& path) const { return StampAt(path); }

bool StillCurrent(const std::string& root, const RememberedScan& scan, const StampSource& stats) {
  for (const auto& d : scan.walked) {
    auto now = stats.Stat(Below(root, d.rel));
    if (!now) return false;
    now->rel = d.rel;
    if (!(*now == d)) return false;
  }
  return !scan.walked.empty();
}

GrantScan ScanGrantRemembered(const std::string& dir, std::size_t socket_budget, const std::string& cache_base,
                              std::int64_t racy_ns) {
  if (cache_base.empty()) return ScanGrant(dir, socket_budget);
  std::string rules = GrantScanRulesDigest(socket_budget);
  auto root = StampSource().Stat(dir);
  auto cache = root ? OpenCacheDir(cache_base, "grant-scan", true, CacheRules()) : Result<UniqueFd>(UniqueFd());
  if (!root || !cache.ok()) return ScanGrant(dir, socket_budget);
  std::string cache_path = CacheDirPath(cache_base, "grant-scan"), name = FileName(*root);
  if (auto kept = Load(cache->get(), cache_path, name); kept && kept->rules == rules && kept->root == dir && StillCurrent(dir, *kept)) {
    return Recalled(dir, *kept);
  }
  std::int64_t started = NowNs();
  GrantScan scan = ScanGrant(dir, socket_budget);
  if (Keepable(scan, started, racy_ns)) Store(cache->get(), name, Remembered(dir, scan, std::move(rules)));
  return scan;
}

}  // namespace mcpcell
