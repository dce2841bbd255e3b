#include "cell/cell_record.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "util/dir_names.h"
#include "util/state_dir.h"

namespace mcpcell {
namespace {

constexpr std::size_t kMaxRecordBytes = 64 * 1024;

bool IsRecordName(const std::string& name) {
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0 && name[0] != '.';
}

// A regular file of ours, read whole (bounded), never through a symlink.
std::optional<std::string> ReadOwnFile(int dir, const std::string& name) {
  UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return std::nullopt;
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      static_cast<std::size_t>(st.st_size) > kMaxRecordBytes) {
    return std::nullopt;
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  ssize_t n = ::read(fd.get(), text.data(), text.size());
  if (n < 0) return std::nullopt;
  text.resize(static_cast<std::size_t>(n));
  return text;
}

}  // namespace

nlohmann::json ToJson(const CellRecord& r) {
  return {{"id", r.id}, {"pid", r.pid}, {"pid_start", r.pid_start}, {"client_pid", r.client_pid},
          {"started", r.started}, {"server", r.server}, {"backend", r.backend}, {"network", r.network},
          {"log", r.log}, {"npx_cache_dir", r.npx_cache_dir}};
}

std::optional<CellRecord> CellRecordFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  CellRecord r;
  try {
    r.id = j.at("id").get<std::string>();
    r.pid = j.at("pid").get<int>();
    r.pid_start = j.at("pid_start").get<unsigned long long>();
    r.client_pid = j.at("client_pid").get<int>();
    r.started = j.at("started").get<std::int64_t>();
    r.server = j.at("server").get<std::string>();
    r.backend = j.at("backend").get<std::string>();
    r.network = j.at("network").get<std::string>();
    r.log = j.at("log").get<std::string>();
    r.npx_cache_dir = j.value("npx_cache_dir", std::string());
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  if (r.id.empty() || r.id.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
  return r;
}

std::string NewRunRecordId() {
  unsigned char bytes[6] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    auto pid = static_cast<unsigned>(::getpid());
    for (std::size_t i = 0; i < sizeof bytes; ++i) bytes[i] = static_cast<unsigned char>(pid >> (8 * (i % 4)));
  }
  char hex[13] = {};
  for (std::size_t i = 0; i < sizeof bytes; ++i) std::snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
  return hex;
}

std::string CellRecordDir(const std::string& state_dir) { return state_dir + "/cells"; }

LiveCellRecord& LiveCellRecord::operator=(LiveCellRecord&& o) noexcept {
  if (this != &o) {
    Remove();
    dir_ = std::move(o.dir_);
    name_ = std::exchange(o.name_, {});
  }
  return *this;
}

Result<LiveCellRecord> LiveCellRecord::Write(UniqueFd dir, const CellRecord& record) {
  std::string text = ToJson(record).dump() + "\n";
  std::string tmp = "." + record.id + ".tmp";
  std::string name = record.id + ".json";
  UniqueFd fd(::openat(dir.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return ErrnoError("write the cell record", tmp);
  bool written = ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
  fd.reset();
  if (!written || ::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0) {
    Error e = ErrnoError("write the cell record", name);
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    return e;
  }
  LiveCellRecord live;
  live.dir_ = std::move(dir);
  live.name_ = name;
  return live;
}

void LiveCellRecord::Remove() {
  if (!dir_ || name_.empty()) return;
  ::unlinkat(dir_.get(), name_.c_str(), 0);
  name_.clear();
  dir_.reset();
}

std::vector<ListedRecord> ListCellRecords(int dir) {
  std::vector<ListedRecord> out;
  auto names = DirNames(dir);
  if (!names.ok()) return out;
  for (const std::string& name : *names) {
    if (!IsRecordName(name)) continue;
    auto text = ReadOwnFile(dir, name);
    if (!text) continue;
    auto record = CellRecordFromJson(nlohmann::json::parse(*text, nullptr, false));
    if (!record || record->id + ".json" != name) continue;
    bool alive = ProcessIsAlive(record->pid, record->pid_start);
    out.push_back({std::move(*record), name, alive});
  }
  return out;
}

SweepCount ReapCellRecords(int dir) {
  SweepCount count;
  auto names = DirNames(dir);
  if (!names.ok()) return count;
  std::vector<ListedRecord> listed = ListCellRecords(dir);
  for (const auto& name : *names) {
    ++count.checked;
    bool live = false;
    for (const auto& l : listed) live = live || (l.file == name && l.alive);
    // A temporary of a live run is about to become its record: keep it while
    // young. "." + id + ".tmp" of a dead run, and anything else, goes.
    if (live || (name[0] == '.' && name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0)) {
      struct stat st{};
      if (live || (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && ::time(nullptr) - st.st_mtime < 60)) {
        continue;
      }
    }
    if (::unlinkat(dir, name.c_str(), 0) == 0) ++count.removed;
  }
  return count;
}

std::vector<std::string> CacheDirsInUse() {
  std::vector<std::string> dirs;
  auto fd = OpenStateDir("cells");
  if (!fd) return dirs;
  for (const auto& l : ListCellRecords(fd->get())) {
    if (l.alive && !l.record.npx_cache_dir.empty()) dirs.push_back(l.record.npx_cache_dir);
  }
  return dirs;
}

bool CacheDirInUse(const std::string& dir) {
  auto dirs = CacheDirsInUse();
  return std::find(dirs.begin(), dirs.end(), dir) != dirs.end();
}

}  // namespace mcpcell
