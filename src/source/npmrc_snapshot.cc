#include "source/npmrc_snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <string_view>
#include <utility>

#include "source/url_credential.h"
#include "util/regular_file.h"
#include "util/remove_tree.h"
#include "util/terminal_text.h"
#include "util/sealed_memfd.h"
#include "util/unique_fd.h"
#include "util/work_dir_lock.h"

namespace mcpcell {
namespace {

constexpr std::uint64_t kMaxNpmrc = 1 << 20;

/// What `path` holds now ("" when it does not exist); refused unless a
/// regular file of at most 1 MiB.
Result<std::string> ReadOnce(const std::string& path, const char* which) {
  if (path.empty()) return std::string();
  auto text = ReadRegularFile(path, std::string("read npm's ") + which, kMaxNpmrc);
  if (text.ok()) return text->value_or(std::string());
  Error e = text.error();
  e.path = VisibleOnTerminal(path);
  if (e.err == 0 && e.detail == kNotRegularFile) {
    e.detail += " (a FIFO or a device could answer each npm run differently, and the install would not be made "
                "under the settings mcpcell checked); point npm at a file";
  }
  return e;
}

/// `text` without the spaces and quotes an npmrc line may put around a key or value.
std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '"' || text.front() == '\'')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' || text.back() == '"' ||
                           text.back() == '\'')) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

Result<NpmrcSnapshot> NpmrcSnapshot::Make(const std::string& parent) {
  std::string tmpl = parent + "/.npmrc-" + std::to_string(::getpid()) + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return ErrnoError("make a directory for npm's config in", parent);
  NpmrcSnapshot snap;
  snap.dir_ = tmpl;  // mkdtemp's 0700
  snap.held_ = HoldWorkDir(tmpl);  // no sweep takes it while this launch uses it
  if (!snap.held_) return ErrnoError("lock the directory for npm's config", tmpl);
  if (::mkdir((snap.dir_ + "/project").c_str(), 0700) != 0) return ErrnoError("make an empty npm project in", snap.dir_);
  return snap;
}

Status NpmrcSnapshot::Copy(const std::string& global, const std::string& user) {
  auto global_text = ReadOnce(global, "global config");
  if (!global_text.ok()) return global_text.error();
  auto user_text = ReadOnce(user, "user config");
  if (!user_text.ok()) return user_text.error();
  auto global_copy = SealedMemfd("npmrc-global", *global_text);
  if (!global_copy.ok()) return global_copy.error();
  auto user_copy = SealedMemfd("npmrc-user", *user_text);
  if (!user_copy.ok()) return user_copy.error();
  global_ = std::move(*global_copy);
  user_ = std::move(*user_copy);
  texts_ = *global_text + "\n" + *user_text;
  copied_ = true;
  return {};
}

NpmrcSnapshot::NpmrcSnapshot(NpmrcSnapshot&& o) noexcept
    : dir_(std::exchange(o.dir_, {})), held_(std::move(o.held_)), copied_(o.copied_), global_(std::move(o.global_)), user_(std::move(o.user_)),
      texts_(std::move(o.texts_)) {}

NpmrcSnapshot::~NpmrcSnapshot() {
  if (dir_.empty()) return;
  (void)RemoveTree(dir_);
}

std::vector<std::string> NpmrcSnapshot::Flags() const {
  std::vector<std::string> flags = {"--cache=" + dir_ + "/cache"};
  if (copied_) {
    // npm's own fds (HostToolRun::pass_fds): npm opens the path, and
    // /proc/self/fd/N of a memfd opens the memfd.
    flags.push_back("--globalconfig=" + OwnFdPath(global_.get()));
    flags.push_back("--userconfig=" + OwnFdPath(user_.get()));
  }
  return flags;
}

std::vector<int> NpmrcSnapshot::Fds() const {
  if (!copied_) return {};
  return {global_.get(), user_.get()};
}

std::string NpmrcSnapshot::ProjectFlag() const { return copied_ ? "--prefix=" + dir_ + "/project" : ""; }

std::vector<std::string> NpmrcSnapshot::UrlTokenPieces() const {
  std::vector<std::string> pieces;
  std::string_view text = texts_;
  while (!text.empty()) {
    std::string_view line = text.substr(0, text.find('\n'));
    text.remove_prefix(std::min(text.size(), line.size() + 1));
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = Trimmed(line.substr(0, eq)), value = Trimmed(line.substr(eq + 1));
    // "//npm.fury.io/TOKEN/acme/:_authToken": the URL before the last "/:".
    if (std::size_t colon = key.rfind("/:"); key.substr(0, 2) == "//" && colon != std::string_view::npos) {
      AppendUrlTokenPieces("https:" + std::string(key.substr(0, colon + 1)), &pieces);
    }
    if (value.substr(0, 7) == "http://" || value.substr(0, 8) == "https://") AppendUrlTokenPieces(value, &pieces);
  }
  return pieces;
}

Result<std::pair<std::string, std::string>> NpmrcPathsFromGet(const std::string& out) {
  std::string global, user;
  std::size_t at = 0;
  while (at < out.size()) {
    std::size_t end = std::min(out.find('\n', at), out.size());
    std::string line = out.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("globalconfig=", 0) == 0 && global.empty()) global = line.substr(13);
    else if (line.rfind("userconfig=", 0) == 0 && user.empty()) user = line.substr(11);
    else if (!line.empty()) return MakeError("find npm's config files", VisibleOnTerminal(line), "not a line of `npm config get globalconfig userconfig`");
  }
  // A value npm gives as no path ("undefined") names no file: read as empty.
  for (auto* p : {&global, &user}) {
    if (p->empty() || (*p)[0] != '/') p->clear();
  }
  return std::make_pair(global, user);
}

}  // namespace mcpcell
