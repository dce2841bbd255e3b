#include "guard/pin_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "audit/sha256.h"
#include "util/dir_names.h"
#include "util/home_path.h"
#include "util/json_input.h"
#include "util/owned_file.h"
#include "util/write_all.h"
#include "util/state_dir.h"

namespace mcpcell {
namespace {

using json = nlohmann::json;

constexpr int kFormatVersion = 1;

// Whoever can write a pin file (or rename files in its directory) decides
// which tool changes pass unseen: only the caller may.
const OwnedRules& PinRules() {
  static const OwnedRules kRules{"open the pin store", "another user could rewrite your pins",
                                 "remove it or set XDG_STATE_HOME to a directory of your own"};
  return kRules;
}

Status MakeDirs(const std::string& dir) {
  std::filesystem::path p(dir);
  std::filesystem::path at;
  for (const auto& part : p) {
    at /= part;
    if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) return ErrnoError("create the pin directory", at.string());
  }
  return {};
}

Result<UniqueFd> OpenDir(const std::string& dir) {
  return OpenOwnedDirAt(AT_FDCWD, dir, "open the pin directory", dir, PinRules());
}

json ToolJson(const PinnedTool& t) {
  return {{"sha256", t.sha256}, {"contract", t.contract}, {"pinned_at", t.pinned_at}, {"how", t.how},
          {"findings", ToJson(t.findings)}, {"clients", t.clients}};
}

json PendingJson(const PendingTool& t) {
  return {{"change", t.change}, {"sha256", t.sha256}, {"contract", t.contract}, {"seen_at", t.seen_at},
          {"findings", ToJson(t.findings)}};
}

std::set<std::string> StringSet(const json& j) {
  std::set<std::string> out;
  if (!j.is_array()) return out;
  for (const auto& v : j) {
    if (v.is_string()) out.insert(v.get<std::string>());
  }
  return out;
}

}  // namespace

std::string DefaultPinsDir() {
  if (std::string xdg = StateHomeFromEnvironment(); !xdg.empty()) return xdg + "/mcpcell/pins";
  std::string home = CallerHome();
  if (home.empty()) return "";
  return home + "/.local/state/mcpcell/pins";
}

std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

PinStore::PinStore(UniqueFd dir, std::string dir_path, std::string server)
    : dir_(std::move(dir)), dir_path_(std::move(dir_path)), server_(std::move(server)) {
  name_ = Sha256Hex(server_) + ".json";
  file_ = dir_path_ + "/" + name_;
}

Result<PinStore> PinStore::Open(const std::string& dir, const std::string& server) {
  if (dir.empty() || dir[0] != '/') {
    return MakeError("find the pin directory", dir, "needs an absolute path: set XDG_STATE_HOME or HOME");
  }
  MCPCELL_TRY(MakeDirs(dir));
  return OpenExisting(dir, server);
}

Result<PinStore> PinStore::OpenExisting(const std::string& dir, const std::string& server) {
  auto fd = OpenDir(dir);
  if (!fd.ok()) return fd.error();
  return PinStore(std::move(*fd), dir, server);
}

Result<PinFile> PinStore::LoadAt(const std::string& name) const {
  std::string path = dir_path_ + "/" + name;
  auto fd = OpenOwnedFileAt(dir_.get(), name, O_RDONLY, "open the pin file", path, PinRules());
  if (!fd.ok() && fd.error().err == ENOENT) return PinFile{};
  if (!fd.ok()) return fd.error();
  auto text = ReadOwnedFile(fd->get(), "read the pin file", path, PinRules());
  if (!text.ok()) return text.error();
  auto j = ParseJsonText(*text, path);
  if (!j.ok()) return j.error();
  auto f = PinFileFromJson(*j, path);
  if (!f.ok()) return f.error();
  f->exists = true;
  return f;
}

Result<PinFile> PinStore::Load() const {
  auto f = LoadAt(name_);
  if (!f.ok()) return f.error();
  if (!f->exists) {
    f->server = server_;
    return f;
  }
  if (f->server != server_) {
    // Only a copy or a rename puts another key in this file: trusting it
    // would hand one server's approvals to another.
    return MakeError("read the pin file", file_,
                     fmt::format("holds the pins of \"{}\", not of \"{}\"; remove the file to pin this server afresh",
                                 f->server, server_));
  }
  return f;
}

Status PinStore::Update(const std::function<void(PinFile*)>& edit) {
  std::string lock_name = name_ + ".lock";
  auto lock = OpenOwnedFileAt(dir_.get(), lock_name, O_RDWR | O_CREAT, "open the pin lock",
                              dir_path_ + "/" + lock_name, PinRules());
  if (!lock.ok()) return lock.error();
  while (::flock(lock->get(), LOCK_EX) != 0) {
    if (errno != EINTR) return ErrnoError("lock the pin file", dir_path_ + "/" + lock_name);
  }
  auto f = Load();
  if (!f.ok()) return f.error();
  edit(&*f);
  std::string text = ToJson(*f).dump(2, ' ', false, json::error_handler_t::strict) + "\n";
  std::string tmp = fmt::format("{}.tmp.{}", name_, ::getpid());
  UniqueFd out(::openat(dir_.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!out) return ErrnoError("create the pin file", dir_path_ + "/" + tmp);
  Status written = WriteAll(out.get(), text, "write the pin file", dir_path_ + "/" + tmp);
  if (written.ok() && ::fsync(out.get()) != 0) written = ErrnoError("fsync the pin file", dir_path_ + "/" + tmp);
  if (written.ok() && ::renameat(dir_.get(), tmp.c_str(), dir_.get(), name_.c_str()) != 0) {
    written = ErrnoError("rename the pin file into place", file_);
  }
  if (!written.ok()) {
    ::unlinkat(dir_.get(), tmp.c_str(), 0);
    return written;
  }
  ::fsync(dir_.get());  // the rename itself survives a crash
  return {};
}

Result<std::vector<std::string>> PinStore::Servers(const std::string& dir) {
  auto fd = OpenDir(dir);
  if (!fd.ok()) return fd.error();
  std::vector<std::string> out;
  auto names = DirNames(fd->get());
  if (!names.ok()) return Error{"list the pin directory", dir, names.error().err, {}};
  PinStore store(std::move(*fd), dir, "");
  for (const std::string& name : *names) {
    if (name.size() != 64 + 5 || name.substr(64) != ".json") continue;
    auto f = store.LoadAt(name);
    if (f.ok() && f->exists && Sha256Hex(f->server) + ".json" == name) out.push_back(f->server);
  }
  std::sort(out.begin(), out.end());
  return out;
}

json ToJson(const PinFile& f) {
  json tools = json::object();
  for (const auto& [name, t] : f.tools) tools[name] = ToolJson(t);
  json pending = json::object();
  for (const auto& [name, t] : f.pending) pending[name] = PendingJson(t);
  return {{"version", kFormatVersion}, {"server", f.server}, {"clients", f.clients}, {"tools", tools}, {"pending", pending}};
}

Result<PinFile> PinFileFromJson(const json& j, const std::string& origin) {
  MCPCELL_TRY(CheckObjectKeys(origin, "$", j, {"version", "server", "clients", "tools", "pending"}));
  if (!j.contains("version") || j["version"] != kFormatVersion) {
    return JsonPathError(origin, "$.version", fmt::format("expected {} (this mcpcell's pin format)", kFormatVersion));
  }
  PinFile f;
  auto server = JsonString(origin, "$.server", j.value("server", json()));
  if (!server.ok()) return server.error();
  f.server = *server;
  f.clients = StringSet(j.value("clients", json()));
  for (const char* part : {"tools", "pending"}) {
    if (!j.contains(part) || !j[part].is_object()) return JsonTypeError(origin, JsonChild("$", part), "an object", j.value(part, json()));
  }
  for (const auto& [name, t] : j["tools"].items()) {
    std::string p = JsonChild("$.tools", name);
    if (!t.is_object() || !t.contains("sha256") || !t["sha256"].is_string() || !t.contains("contract")) {
      return JsonPathError(origin, p, "expected {\"sha256\": ..., \"contract\": ...}");
    }
    f.tools[name] = {t["sha256"], t["contract"], t.value("pinned_at", ""), t.value("how", ""),
                     FindingsFromJson(t.value("findings", json())), StringSet(t.value("clients", json()))};
  }
  for (const auto& [name, t] : j["pending"].items()) {
    std::string p = JsonChild("$.pending", name);
    if (!t.is_object() || !t.contains("change") || !t["change"].is_string()) {
      return JsonPathError(origin, p, "expected {\"change\": ...}");
    }
    f.pending[name] = {t["change"], t.value("sha256", ""), t.value("contract", json()), t.value("seen_at", ""),
                       FindingsFromJson(t.value("findings", json()))};
  }
  return f;
}

}  // namespace mcpcell
