#include "audit/audit_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <iterator>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/sha256.h"
#include "util/json_text.h"
#include "util/write_all.h"

namespace mcpcell {
namespace {

const std::string kGenesis(64, '0');
constexpr std::string_view kHashMember = ",\"hash\":\"";
constexpr std::size_t kHashSuffix = kHashMember.size() + 64 + 2;  // ,"hash":"<64 hex>"}

std::string NewRunId() {
  unsigned char b[8] = {};
  if (::getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
    auto t = std::chrono::steady_clock::now().time_since_epoch().count();
    for (std::size_t i = 0; i < sizeof b; ++i) b[i] = static_cast<unsigned char>(t >> (8 * i));
  }
  std::string out;
  for (unsigned char c : b) out += fmt::format("{:02x}", c);
  return out;
}

// The last line of the first `size` bytes of `fd` (without its newline), read
// backwards in chunks; `*complete` says whether the file ends with '\n'.
Result<std::string> LastLine(int fd, std::uint64_t size, bool* complete) {
  std::string tail;
  std::uint64_t pos = size;
  *complete = false;
  bool first = true;
  while (pos > 0) {
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(pos, 4096));
    pos -= n;
    std::string chunk(n, '\0');
    if (::pread(fd, chunk.data(), n, static_cast<off_t>(pos)) != static_cast<ssize_t>(n)) {
      return ErrnoError("read the audit log's last record");
    }
    tail.insert(0, chunk);
    if (first) {
      *complete = !tail.empty() && tail.back() == '\n';
      first = false;
    }
    std::string_view body(tail.data(), tail.size() - (*complete ? 1 : 0));
    auto nl = body.rfind('\n');
    if (nl != std::string_view::npos) return std::string(body.substr(nl + 1));
  }
  return tail.empty() ? tail : tail.substr(0, tail.size() - (*complete ? 1 : 0));
}

}  // namespace

std::optional<std::string> ChainedRecordHash(std::string_view line, std::string* stated) {
  if (line.size() < kHashSuffix + 2 || line.substr(line.size() - 2) != "\"}") return std::nullopt;
  std::size_t at = line.size() - kHashSuffix;
  if (line.substr(at, kHashMember.size()) != kHashMember) return std::nullopt;
  *stated = std::string(line.substr(at + kHashMember.size(), 64));
  std::string body(line.substr(0, at));
  body += '}';
  return Sha256Hex(body);
}

AuditLog::AuditLog(UniqueFd fd, std::string path, const struct stat& st)
    : fd_(std::move(fd)),
      path_(std::move(path)),
      run_(NewRunId()),
      dev_(st.st_dev),
      ino_(st.st_ino),
      mu_(std::make_unique<std::mutex>()) {}

Result<AuditLog> AuditLog::Open(const std::string& path) {
  // O_NOFOLLOW: a symlink planted at the log path must not redirect our
  // writes (open(2): fails with ELOOP). O_APPEND: each write lands at the end
  // atomically with respect to other appenders. O_RDWR: the chain's last
  // hash is read back. 0600: decisions and paths are nobody else's business.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    Error e = ErrnoError("open audit log", path);
    if (e.err == ELOOP) e.detail = "the path is a symbolic link; name the real file";
    return e;
  }
  UniqueFd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ErrnoError("stat audit log", path);
  if (!S_ISREG(st.st_mode)) {
    return MakeError("open audit log", path, "not a regular file; name a file, not a directory or device");
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return MakeError("open audit log", path,
                     fmt::format("the file is readable or writable by others (mode {:o}); run chmod 600 on it",
                                 st.st_mode & 07777));
  }
  return AuditLog(std::move(owned), path, st);
}

// Where the chain ends: the last record's hash and next seq. A last line that
// is not a chained record (an older mcpcell's, or damage) is chained to by its
// own SHA-256, so the damage stays visible to verify and the chain goes on.
Status AuditLog::ChainTail(std::uint64_t size, std::string* prev, std::uint64_t* seq, bool* needs_newline) {
  *needs_newline = false;
  if (size == 0) {
    *prev = kGenesis;
    *seq = 0;
    return {};
  }
  if (size == end_) {
    *prev = last_hash_;
    *seq = last_seq_ + 1;
    return {};
  }
  bool complete = false;
  auto line = LastLine(fd_.get(), size, &complete);
  if (!line) return line.error();
  *needs_newline = !complete;
  std::string stated;
  auto own = ChainedRecordHash(*line, &stated);
  auto j = nlohmann::json::parse(*line, nullptr, false);
  if (complete && own && *own == stated && j.is_object() && j.contains("seq") && j["seq"].is_number_unsigned()) {
    *prev = stated;
    *seq = j["seq"].get<std::uint64_t>() + 1;
  } else {
    *prev = Sha256Hex(*line);
    *seq = 0;
  }
  return {};
}

// A log that was removed (unlinked) or replaced (renamed away, another file
// put at its path) still takes writes through our fd, into a file nobody
// reads: every record written then is as good as lost, so it is an error.
// One lstat(2) of the path decides it and gives the size: while our fd holds
// the file open its inode number cannot go to another file, so a file at the
// path with our (st_dev, st_ino) is ours — linked (st_nlink > 0) and its stat
// the one fstat(2) on our fd would give.
Result<struct stat> AuditLog::StatStillAtPath() const {
  struct stat now {};
  if (::lstat(path_.c_str(), &now) != 0) {
    Error e = ErrnoError("write audit log", path_);
    struct stat ours {};
    if (::fstat(fd_.get(), &ours) == 0 && ours.st_nlink == 0) {
      return MakeError("write audit log", path_, "the file was removed after mcpcell opened it; records would be lost");
    }
    e.detail = "the path no longer names the file mcpcell opened; records would be lost";
    return e;
  }
  if (now.st_dev != dev_ || now.st_ino != ino_) {
    return MakeError("write audit log", path_,
                     "another file was put at the path after mcpcell opened it (renamed or replaced); records "
                     "would go to the old file");
  }
  return now;
}

Status AuditLog::Write(const nlohmann::json& event) {
  // The chain's members are the log's own: an event's "hash" is dropped and
  // its "run", "seq" and "prev" replaced (in a copy: rare, and the caller's
  // event stays as it was).
  constexpr const char* kChain[] = {"run", "seq", "prev", "hash"};
  bool own = event.is_object() && std::none_of(std::begin(kChain), std::end(kChain),
                                               [&](const char* k) { return event.contains(k); });
  if (!own) {
    nlohmann::json e = event.is_null() ? nlohmann::json::object() : event;
    if (!e.is_object()) return MakeError("write audit log", path_, "an audit event must be a JSON object");
    for (const char* k : kChain) e.erase(k);
    return Write(e);
  }
  // Replace invalid UTF-8 rather than throwing on a hostile server name.
  return Append(JsonText(event), !event.contains("ts"));
}

Status AuditLog::WriteObject(std::string_view object) { return Append(object, true); }

Status AuditLog::Append(std::string_view object, bool add_ts) {
  // dump() escapes control characters, so a dumped object holds no raw
  // newline: one record stays one line (verify reads line by line).
  if (object.size() < 2 || object.front() != '{' || object.back() != '}' ||
      object.find('\n') != std::string_view::npos || object.find('\r') != std::string_view::npos) {
    return MakeError("write audit log", path_, "an audit record must be one JSON object on one line");
  }
  std::lock_guard lock(*mu_);
  // flock(2): an exclusive lock on the open file description, shared by no
  // other process's open of the file, so each writer appends to the chain end
  // it read. Held for one read of the tail and one write.
  while (::flock(fd_.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return ErrnoError("lock audit log", path_);
  }
  struct Unlock {
    int fd;
    ~Unlock() { ::flock(fd, LOCK_UN); }
  } unlock{fd_.get()};
  auto st = StatStillAtPath();
  if (!st) return st.error();
  auto size = static_cast<std::uint64_t>(st->st_size);
  std::string prev;
  std::uint64_t seq = 0;
  bool needs_newline = false;
  MCPCELL_TRY(ChainTail(size, &prev, &seq, &needs_newline));
  std::string line = needs_newline ? "\n" : "";
  std::size_t start = line.size();
  line.append(object.substr(0, object.size() - 1));
  if (object.size() > 2) line += ',';
  if (add_ts) line += fmt::format("\"ts\":\"{}\",", AuditTimestamp());
  line += fmt::format("\"run\":\"{}\",\"seq\":{},\"prev\":\"{}\"}}", run_, seq, prev);
  std::string hash = Sha256Hex(std::string_view(line).substr(start));
  line.pop_back();  // the closing brace; the hash member goes last
  line += fmt::format("{}{}\"}}\n", kHashMember, hash);
  if (auto written = WriteAll(fd_.get(), line, "write audit log", path_); !written) {
    // A short write (ENOSPC after a few blocks) leaves a torn record; cut it
    // off under the lock so the chain stays verifiable and the next writer
    // (another run, or this one once there is room) continues from an intact tail.
    (void)!::ftruncate(fd_.get(), st->st_size);
    end_ = UINT64_MAX;
    return written.error();
  }
  end_ = size + line.size();
  last_hash_ = std::move(hash);
  last_seq_ = seq;
  return {};
}

std::string AuditTimestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm {};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, ms);
}

}  // namespace mcpcell
