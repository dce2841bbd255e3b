#include "guard/secret_db_cache.h"

#include <fcntl.h>
#include <hs.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "audit/sha256.h"
#include "util/cache_dir.h"
#include "util/dir_names.h"
#include "util/owned_file.h"
#include "util/write_all.h"

namespace mcpcell {
namespace {

constexpr std::string_view kMagic = "mcpcell-secret-db 1\n";
constexpr std::size_t kHex = 64;
constexpr std::string_view kSuffix = ".hsdb";

// Whoever can write the cache decides what the scanner runs: only the caller
// may (the same rule as the pin store's and the state directory's).
const OwnedRules& CacheRules() {
  static const OwnedRules kRules{"check the secret rule cache",
                                 "it must be yours and writable by nobody else, else it is not used",
                                 "remove it to have it made afresh",
                                 "run chmod go-w on it, or remove it to have it made afresh", SecretDbCache::kMaxBytes};
  return kRules;
}

// The payload of a cache file after its header, if the header names `key`
// and the payload's SHA-256.
Result<std::string_view> Payload(std::string_view file, const std::string& key, const std::string& path) {
  std::size_t head = kMagic.size() + 2 * (kHex + 1);
  if (file.size() < head || file.substr(0, kMagic.size()) != kMagic) {
    return MakeError("read the secret rule cache", path, "not a cache file of this mcpcell (header)");
  }
  std::string_view named = file.substr(kMagic.size(), kHex), sum = file.substr(kMagic.size() + kHex + 1, kHex);
  if (named != key || file[kMagic.size() + kHex] != '\n' || file[head - 1] != '\n') {
    return MakeError("read the secret rule cache", path, "holds another rule set's database");
  }
  std::string_view payload = file.substr(head);
  if (Sha256Hex(payload) != sum) return MakeError("read the secret rule cache", path, "corrupt or truncated (hash)");
  return payload;
}

}  // namespace

void HsDatabaseFree::operator()(hs_database* db) const { hs_free_database(db); }

std::string SecretDbCache::DefaultBase() { return AccountCacheBase(); }

std::string SecretDbCache::Key(const std::vector<SecretRule>& rules) {
  hs_platform_info_t plat{};
  (void)hs_populate_platform(&plat);  // on failure the zeroes still key this build
  struct utsname u{};
  (void)::uname(&u);
  std::string in = fmt::format("{}{}\n{} {} {}\n", kMagic, hs_version(), u.machine, plat.tune, plat.cpu_features);
  for (const auto& r : rules) {
    // Lengths first: no rule can be written to read as two.
    in += fmt::format("{}:{}{}:{}{}\n", r.name.size(), r.name, r.regex.size(), r.regex, r.caseless ? 'i' : '-');
  }
  return Sha256Hex(in);
}

Result<UniqueFd> SecretDbCache::OpenDir(bool create) const {
  return OpenCacheDir(base_, "secret-db", create, CacheRules());
}

Result<HsDatabase> SecretDbCache::Load(const std::string& key) const {
  auto dir = OpenDir(false);
  if (!dir.ok()) return dir.error();
  std::string name = key + std::string(kSuffix), path = this->dir() + "/" + name;
  // OpenOwnedFileAt's O_NONBLOCK: a FIFO planted under the name must not hang the start.
  auto fd = OpenOwnedFileAt(dir->get(), name, O_RDONLY, "open the secret rule cache", path, CacheRules());
  if (!fd.ok()) return fd.error();
  auto file = ReadOwnedFile(fd->get(), "read the secret rule cache", path, CacheRules());
  if (!file.ok()) return file.error();
  auto payload = Payload(*file, key, path);
  if (!payload.ok()) return payload.error();
  hs_database_t* db = nullptr;
  if (hs_deserialize_database(payload->data(), payload->size(), &db) != HS_SUCCESS) {
    return MakeError("read the secret rule cache", path, "Vectorscan refused the database");
  }
  return HsDatabase(db);
}

Status SecretDbCache::Store(const std::string& key, const hs_database* db) const {
  auto dir = OpenDir(true);
  if (!dir.ok()) return dir.error();
  char* bytes = nullptr;
  std::size_t n = 0;
  if (hs_serialize_database(db, &bytes, &n) != HS_SUCCESS) return MakeError("serialize the secret rules", this->dir());
  std::unique_ptr<char, decltype(&std::free)> owned(bytes, &std::free);
  std::string_view payload(bytes, n);
  std::string text = fmt::format("{}{}\n{}\n", kMagic, key, Sha256Hex(payload));
  text.append(payload);
  std::string name = key + std::string(kSuffix), tmp = fmt::format(".{}.tmp.{}", key, ::getpid());
  (void)::unlinkat(dir->get(), tmp.c_str(), 0);  // a crashed run of the same pid
  UniqueFd out(::openat(dir->get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!out) return ErrnoError("create the secret rule cache", this->dir() + "/" + tmp);
  Status st = WriteAll(out.get(), text, "write the secret rule cache", this->dir() + "/" + tmp);
  if (st.ok() && ::renameat(dir->get(), tmp.c_str(), dir->get(), name.c_str()) != 0) {
    st = ErrnoError("rename the secret rule cache into place", this->dir() + "/" + name);
  }
  if (!st.ok()) {
    ::unlinkat(dir->get(), tmp.c_str(), 0);
    return st;
  }
  Prune(dir->get());
  return {};
}

// The newest kKeep databases stay; temporary files an hour old are a crashed run's.
void SecretDbCache::Prune(int dir) const {
  auto names = DirNames(dir);
  if (!names.ok()) return;
  std::vector<std::pair<std::time_t, std::string>> dbs;
  std::time_t now = std::time(nullptr);
  for (const std::string& name : *names) {
    struct stat st{};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (name.size() == kHex + kSuffix.size() && name.ends_with(kSuffix)) {
      dbs.emplace_back(st.st_mtime, name);
    } else if (name.starts_with(".") && name.find(".tmp.") != std::string::npos && now - st.st_mtime > 3600) {
      ::unlinkat(dir, name.c_str(), 0);
    }
  }
  std::sort(dbs.begin(), dbs.end(), std::greater<>());
  for (std::size_t i = kKeep; i < dbs.size(); ++i) ::unlinkat(dir, dbs[i].second.c_str(), 0);
}

}  // namespace mcpcell
