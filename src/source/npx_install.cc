#include "source/npx_install.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "source/host_tool.h"
#include "util/json_input.h"
#include <sys/prctl.h>
#include <csignal>
#include <cstring>
#include <chrono>
#include "util/unique_fd.h"

extern char** environ;

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

/// What a host tool is started with, all of it made before fork.
struct HostCommand {
  std::string exe;
  std::vector<std::string> env;
};

Result<HostCommand> PrepareHostCommand(const std::string& name, const std::vector<std::string>& cell_writable) {
  const char* path = std::getenv("PATH");
  std::string safe = HostToolPath(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin", cell_writable);
  HostCommand c{FindHostTool(name, safe), HostToolEnvironment(environ, safe)};
  if (c.exe.empty()) {
    return MakeError("find " + name + " on the host", "",
                     "not on PATH (relative entries and directories the cell may write are skipped: " + safe +
                         ") — npx:// sources need npm on the host PATH (Debian: apt-get install npm)");
  }
  return c;
}

/// Runs argv with stdin from /dev/null; stdout captured (capture=true) or
/// sent to our stderr, because mcpcell's stdout belongs to JSON-RPC. The
/// program comes from a PATH no cell can have written to and starts in /
/// (source/host_tool.h).
Result<std::string> RunTool(const std::vector<std::string>& argv, bool capture,
                            const std::vector<std::string>& cell_writable) {
  auto cmd = PrepareHostCommand(argv[0], cell_writable);
  if (!cmd) return cmd.error();
  int pipefd[2] = {-1, -1};
  if (capture && ::pipe2(pipefd, O_CLOEXEC) != 0) return ErrnoError("pipe for", argv[0]);
  UniqueFd rd(pipefd[0]), wr(pipefd[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT: execve's signature
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : cmd->env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return ErrnoError("fork for", argv[0]);
  if (pid == 0) {
    // npm must not outlive mcpcell: a client that kills us mid-install would
    // otherwise leave npm running, holding its stderr open (prctl(2)).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(capture ? wr.get() : 2, 1) < 0) ::_exit(127);
    if (::chdir(kHostToolCwd) != 0) ::_exit(127);
    ::execve(cmd->exe.c_str(), args.data(), envp.data());
    std::fprintf(stderr, "mcpcell: cannot run %s: %s\n", cmd->exe.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  wr.reset();
  std::string out;
  if (capture) {
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(rd.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError("wait for", argv[0]);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line = cmd->exe;
    for (std::size_t i = 1; i < argv.size(); ++i) line += " " + argv[i];
    return MakeError("run", line,
                     WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status)) + " (its messages are above)"
                                       : "killed by signal " + std::to_string(WTERMSIG(status)));
  }
  return out;
}

/// Half-finished install directories of an mcpcell that was killed mid-install.
/// An install takes minutes at most; one untouched for an hour is abandoned.
void RemoveAbandonedInstalls(const std::string& cache_root) {
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(cache_root, ec)) {
    if (e.path().filename().string().rfind(".install-", 0) != 0) continue;
    auto mtime = fs::last_write_time(e.path(), ec);
    if (!ec && now - mtime > std::chrono::hours(1)) fs::remove_all(e.path(), ec);
  }
}

class NpmTool : public PackageTool {
 public:
  explicit NpmTool(std::vector<std::string> cell_writable) : cell_writable_(std::move(cell_writable)) {}
  Result<std::string> ResolveVersion(const std::string& package, const std::string& spec) override {
    std::string what = spec.empty() ? package : package + "@" + spec;
    auto out = RunTool({"npm", "view", what, "version", "--json"}, true, cell_writable_);
    if (!out.ok()) return out.error();
    nlohmann::json j = nlohmann::json::parse(*out, nullptr, false);
    if (j.is_array() && !j.empty()) j = j.back();  // a range lists every match; the last is highest
    if (!j.is_string()) {
      return MakeError("resolve npm version", what, "npm view printed no version: is the name right?");
    }
    return j.get<std::string>();
  }
  Status Install(const std::string& package, const std::string& version, const std::string& prefix) override {
    auto out = RunTool({"npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--ignore-scripts",
                        "--omit=dev", "--loglevel=error", package + "@" + version},
                       false, cell_writable_);
    if (!out.ok()) return out.error();
    return {};
  }

 private:
  std::vector<std::string> cell_writable_;
};

std::string CacheName(const std::string& package, const std::string& version) {
  std::string name = package;
  for (char& c : name) {
    if (c == '/') c = '+';
  }
  return name + "@" + version;
}

}  // namespace

std::unique_ptr<PackageTool> MakeNpmTool(std::vector<std::string> cell_writable) {
  return std::make_unique<NpmTool>(std::move(cell_writable));
}

Result<std::string> NpxCacheRoot() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/mcpcell/npx";
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] != '/') {
    return MakeError("find the package cache", "", "neither XDG_CACHE_HOME nor HOME is an absolute path");
  }
  return std::string(home) + "/.cache/mcpcell/npx";
}

Result<std::string> PackageBin(const std::string& package_dir, const std::string& package) {
  std::string manifest = package_dir + "/package.json";
  auto text = ReadTextFile(manifest, "read package manifest");
  if (!text.ok()) return text.error();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  std::string rel;
  if (j.is_object() && j.contains("bin")) {
    const auto& bin = j["bin"];
    std::string unscoped = package.substr(package.find('/') == std::string::npos ? 0 : package.find('/') + 1);
    if (bin.is_string()) rel = bin.get<std::string>();
    else if (bin.is_object() && bin.size() == 1 && bin.begin()->is_string()) rel = bin.begin()->get<std::string>();
    else if (bin.is_object() && bin.contains(unscoped) && bin[unscoped].is_string()) rel = bin[unscoped].get<std::string>();
  }
  if (rel.empty()) {
    return MakeError("find the program of", package,
                     "package.json has no single \"bin\" entry to run; run it as a command after -- instead");
  }
  fs::path full = (fs::path(package_dir) / rel).lexically_normal();
  // The bin must stay inside the package: a manifest cannot point us elsewhere.
  std::string dir = fs::path(package_dir).lexically_normal().string();
  if (full.string().rfind(dir + "/", 0) != 0) {
    return MakeError("find the program of", package, "its \"bin\" points outside the package: " + rel);
  }
  return full.string();
}

Result<InstalledPackage> EnsureNpxPackage(const ServerRef& ref, PackageTool& tool,
                                          const std::string& cache_root, bool may_install) {
  InstalledPackage out;
  if (IsExactVersion(ref.version)) {
    out.version = ref.version;
  } else {
    auto v = tool.ResolveVersion(ref.package, ref.version);
    if (!v.ok()) return v.error();
    out.version = *v;
  }
  // The version names a directory: only an exact version may (no "../").
  if (!IsExactVersion(out.version) || out.version.find('/') != std::string::npos) {
    return MakeError("resolve npm version", ref.package, "npm answered \"" + out.version + "\", not an exact version");
  }
  out.cache_dir = cache_root + "/" + CacheName(ref.package, out.version);
  out.package_dir = out.cache_dir + "/node_modules/" + ref.package;
  std::error_code ec;
  if (!fs::exists(out.package_dir + "/package.json", ec)) {
    if (!may_install) {
      out.bin_path = out.package_dir + "/<bin from package.json>";
      return out;
    }
    fs::create_directories(cache_root, ec);
    if (ec) return MakeError("create package cache", cache_root, ec.message());
    RemoveAbandonedInstalls(cache_root);
    std::string tmpl = cache_root + "/.install-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) return ErrnoError("create install directory in", cache_root);
    // mkdtemp makes 0700; the cell's user must be able to read the package.
    fs::permissions(tmpl, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec, ec);
    std::fprintf(stderr, "mcpcell: installing %s@%s outside the cell into %s (npm --ignore-scripts)\n",
                 ref.package.c_str(), out.version.c_str(), out.cache_dir.c_str());
    Status st = tool.Install(ref.package, out.version, tmpl);
    if (!st.ok()) {
      fs::remove_all(tmpl, ec);
      return st.error();
    }
    // Atomic publish: a half-finished install is never seen under the final name.
    if (::rename(tmpl.c_str(), out.cache_dir.c_str()) != 0) {
      int e = errno;
      fs::remove_all(tmpl, ec);
      if (e != EEXIST && e != ENOTEMPTY) {
        errno = e;
        return ErrnoError("publish installed package", out.cache_dir);
      }
      // Another mcpcell installed the same version first: use theirs.
    }
    out.installed_now = true;
  }
  auto bin = PackageBin(out.package_dir, ref.package);
  if (!bin.ok()) return bin.error();
  out.bin_path = *bin;
  out.present = true;
  return out;
}

}  // namespace mcpcell
