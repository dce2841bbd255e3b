#include "source/uvx_install.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>

#include "source/cache_entry_owner.h"
#include "source/host_run.h"
#include "source/host_tool.h"
#include "source/pip_settings.h"
#include "source/pip_wheels_only.h"
#include "source/install_origin.h"
#include "source/public_sources.h"
#include "util/process_environment.h"
#include "util/diag.h"
#include "util/json_input.h"
#include "util/terminal_text.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPipTimeoutHint =
    "is the package index reachable (pip config list; PIP_INDEX_URL)?";
constexpr const char* kPipMissingHint =
    "uvx:// sources need Debian's python3 with venv and pip (apt-get install python3-venv python3-pip)";

class PipTool : public PythonTool {
 public:
  PipTool(std::vector<std::string> cell_writable, std::chrono::milliseconds limit)
      : cell_writable_(std::move(cell_writable)), limit_(limit) {}

  Result<std::string> LatestVersion(const std::string& package) override {
    // `pip index versions` (pip >= 21.2) asks the index pip is configured
    // with and prints "name (1.2.3)" first; it reads the same config the
    // install will.
    auto out = Run({kVenvPython, "-I", "-m", "pip", "index", "versions", "--no-cache-dir", "--disable-pip-version-check", "--no-input",
                    package},
                   true, "resolving the latest " + package + " with pip", "index");
    if (!out.ok()) return out.error();
    std::string first = out->substr(0, out->find('\n'));
    auto open = first.rfind('('), close = first.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) {
      return MakeError("resolve PyPI version", package, "pip index versions printed no version: is the name right?");
    }
    return first.substr(open + 1, close - open - 1);
  }

  Status Install(const std::string& package, const std::string& version, const std::string& venv_dir) override {
    // --without-pip: the cell's venv holds the package and its dependencies
    // only; the host's pip fills it (--python, pip >= 22.3) in seconds
    // instead of ensurepip's copy of pip in every venv.
    // Made by the interpreter's real path, so one link in the venv leads
    // straight to it (VenvInterpreter): the cell runs that link, and Python
    // finds the venv by the link's own directory (PEP 405).
    char real[PATH_MAX];
    if (::realpath(kVenvPython, real) == nullptr || std::string_view(real).substr(0, 5) != "/usr/") {
      return MakeError("find Python", kVenvPython, std::string("not a program under /usr (which cells mount) — ") +
                                                       kPipMissingHint);
    }
    auto venv = Run({real, "-I", "-m", "venv", "--without-pip", venv_dir}, false, "creating a venv for " + package, "");
    if (!venv.ok()) {
      Error e = venv.error();
      e.detail += " — is python3-venv installed (apt-get install python3-venv)?";
      return e;
    }
    auto pip_root = Run({kVenvPython, "-I", "-c", kPipRootProgram}, true, "finding the host's pip", "");
    if (!pip_root.ok()) return pip_root.error();
    // --only-binary: no setup.py runs here, on the host (see the header);
    // the wheels-only program refuses what that flag lets through (a direct
    // reference's sdist or repository, adv21). Run by the venv's own Python,
    // pip installs into the venv.
    // --no-cache-dir: pip's cache (~/.cache/pip) is a directory a cell may
    // have been granted; a wheel planted there would become another server's
    // code. Installs happen once per version, so the cost is small.
    // --no-input: a prompt for index credentials would hang with stdin on /dev/null.
    auto guarded = WheelsOnlyPipRun(
        venv_dir + "/bin/python3", pip_root->substr(0, pip_root->find('\n')),
        {"install", "--only-binary=:all:", "--no-cache-dir", "--no-input", "--disable-pip-version-check",
         "--no-warn-script-location", "--progress-bar", "off", package + "==" + version});
    if (!guarded.ok()) return guarded.error();
    // What a wheel unpacks to is the index's to choose: the budget of npm's
    // unpacking (adv21: a 1.2 MB wheel unpacked to 1.2 GiB).
    auto pip = Run(std::move(guarded->argv), false, "installing " + package + "==" + version + " with pip", "install",
                   {guarded->program.get()}, {venv_dir, kHostInstallBytes, kHostInstallInodes});
    if (!pip.ok()) {
      Error e = pip.error();
      e.detail += "; only wheels are installed (a source distribution would run its setup.py on the host)";
      return e;
    }
    return WriteInstallOrigin(venv_dir, WhyPipSettingsAreNotPublic(ProcessEnvironment()));
  }

 private:
  // -I (isolated mode, python(1)): no user site-packages (a .pth a cell
  // planted in ~/.local/lib/python3.X would run here, on the host), no
  // PYTHON* variables, no script or working directory on sys.path. pip
  // --python re-runs pip under the venv's Python without -I, so the PYTHON*
  // variables are dropped from the environment as well (a venv has no user
  // site), and _PIP_* (_PIP_RUNNING_IN_SUBPROCESS would make pip skip
  // --python and install into /usr/bin/python3's own site). pip's settings
  // that decide what is built or where it is written are dropped too (adv13):
  // PIP_REQUIREMENT/PIP_CONSTRAINT name files whose `--no-binary :all:`
  // beats --only-binary (a source distribution's build code ran on the
  // host); PIP_PREFIX/TARGET/ROOT/USER/SRC put files anywhere (~/.local: a
  // .pth runs in every Python of the user); PIP_CONFIG_FILE names a config
  // that can set them all. Index settings (PIP_INDEX_URL, PIP_CERT) stay.
  // `command` is pip's ("install", "index"; "config" for the listing; ""
  // for no pip): its section of pip.conf is read with [global]
  // (source/pip_settings.h: the config files themselves are not,
  // PIP_CONFIG_FILE=/dev/null).
  Result<std::string> Run(std::vector<std::string> argv, bool capture, std::string what, std::string_view command,
                          std::vector<int> pass_fds = {}, HostToolRun::Disk disk = {}) {
    HostToolRun run{std::move(argv), capture, limit_, std::move(what), cell_writable_, kPipTimeoutHint, kPipMissingHint,
                    {"PYTHON", "_PIP_", "PIP_CONFIG_FILE"}};
    run.pass_fds = std::move(pass_fds);
    run.disk = std::move(disk);
    // Of the caller's PIP_* variables only the index settings (adv13, adv16:
    // PIP_TARGET, PIP_REQUIREMENT, PIP_PYTHON, PIP_LOG...), each dropped by
    // its exact name ("NAME=").
    for (const auto& name : NonIndexPipVariables(ProcessEnvironment())) run.drop_env_prefixes.push_back(name + "=");
    if (command == "config") {
      // `pip config list` reads every pip.conf, whose [global] python= makes
      // pip re-run itself under that program before it lists anything, and
      // whose log= appends to any file (adv16): pip takes itself for the
      // re-run (_PIP_RUNNING_IN_SUBPROCESS), and its log goes nowhere.
      run.extra_env.push_back("_PIP_RUNNING_IN_SUBPROCESS=1");
    } else if (!command.empty()) {
      auto settings = Settings();
      if (!settings.ok()) return settings.error();
      run.extra_env.push_back("PIP_CONFIG_FILE=/dev/null");
      for (auto& var : settings->Env(command)) {
        // The caller's own variable wins over a file, as in pip.
        if (std::getenv(var.substr(0, var.find('=')).c_str()) == nullptr) run.extra_env.push_back(std::move(var));
      }
    }
    std::vector<std::string> env = ProcessEnvironment();
    env.insert(env.end(), run.extra_env.begin(), run.extra_env.end());
    run.masked = PipIndexTokenPieces(env);
    return RunHostTool(run);
  }

  /// pip.conf's settings, read once by the host pip itself (`pip config
  /// list`: every file pip would load, in its order).
  Result<PipSettings> Settings() {
    if (!settings_) {
      auto listed = Run({kVenvPython, "-I", "-m", "pip", "config", "list", "--disable-pip-version-check", "--no-input",
                         "--log", "/dev/null"},
                        true, "reading pip's config", "config");
      if (!listed.ok()) return listed.error();
      settings_ = ParsePipConfigList(*listed);
      if (std::string note = UnusedPipSettingsNote(*settings_); !note.empty()) Say(note);
      if (auto names = NonIndexPipVariables(ProcessEnvironment()); !names.empty()) {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + VisibleOnTerminal(n);
        Say(list + " not passed to the host pip: only its index settings are (what is built and where it is "
                   "written are mcpcell's to decide)");
      }
    }
    return *settings_;
  }

  std::vector<std::string> cell_writable_;
  std::chrono::milliseconds limit_;
  std::optional<PipSettings> settings_;
};

/// The names under [console_scripts] in an entry_points.txt.
std::vector<std::string> ConsoleScriptNames(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream in(text);
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#' || line[b] == ';') continue;
    if (line[b] == '[') {
      in_section = line.compare(b, 17, "[console_scripts]") == 0;
      continue;
    }
    auto eq = line.find('=');
    if (!in_section || eq == std::string::npos) continue;
    std::string name = line.substr(b, eq - b);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    names.push_back(name);
  }
  return names;
}

/// venv/lib/python3.X/site-packages/<name>-<ver>.dist-info of `package`, "" when none.
std::string FindDistInfo(const std::string& venv_dir, const std::string& package) {
  std::error_code ec;
  const std::string want = NormalizePypiName(package);
  for (const auto& lib : fs::directory_iterator(venv_dir + "/lib", ec)) {
    for (const auto& e : fs::directory_iterator(lib.path() / "site-packages", ec)) {
      std::string n = e.path().filename().string();
      if (n.size() < 11 || n.compare(n.size() - 10, 10, ".dist-info") != 0) continue;
      // "{escaped name}-{version}.dist-info": the name has no "-" (wheel spec).
      if (NormalizePypiName(n.substr(0, n.find('-'))) == want) return e.path().string();
    }
  }
  return {};
}

/// The venv's link that leads in one step to a real interpreter under /usr
/// (python3.11 -> /usr/bin/python3.11); "" when none. The cell runs it: a
/// chain of links would be run by its end (cell/spec_builder.cc), and that
/// Python would not see the venv.
std::string VenvInterpreter(const std::string& venv_dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(venv_dir + "/bin", ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind("python", 0) != 0 || !e.is_symlink(ec)) continue;
    fs::path to = fs::read_symlink(e.path(), ec);
    char real[PATH_MAX];
    if (ec || !to.is_absolute() || to.string().rfind("/usr/", 0) != 0) continue;
    if (::realpath(to.c_str(), real) != nullptr && to.string() == real && ::access(real, X_OK) == 0) {
      return e.path().string();
    }
  }
  return {};
}

}  // namespace

std::unique_ptr<PythonTool> MakePipTool(std::vector<std::string> cell_writable, std::chrono::milliseconds limit) {
  return std::make_unique<PipTool>(std::move(cell_writable), limit);
}

Result<std::string> UvxCacheRoot() { return PackageCacheRoot("uvx"); }

std::string NormalizePypiName(std::string_view name) {
  std::string out;
  for (char c : name) {
    bool sep = c == '-' || c == '_' || c == '.';
    if (sep) {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

Result<std::string> ConsoleScript(const std::string& venv_dir, const std::string& package) {
  std::string dist = FindDistInfo(venv_dir, package);
  if (dist.empty()) return MakeError("find the program of", package, "its dist-info is not in the venv " + venv_dir);
  std::error_code ec;
  std::vector<std::string> names;
  if (fs::exists(dist + "/entry_points.txt", ec)) {
    auto text = ReadTextFile(dist + "/entry_points.txt", "read entry points");
    if (!text.ok()) return text.error();
    names = ConsoleScriptNames(*text);
  }
  std::string chosen;
  for (const auto& n : names) {
    if (NormalizePypiName(n) == NormalizePypiName(package)) chosen = n;
  }
  if (chosen.empty() && names.size() == 1) chosen = names[0];
  static const std::regex safe(R"(^[A-Za-z0-9][A-Za-z0-9._-]*$)");
  if (chosen.empty() || !std::regex_match(chosen, safe)) {
    std::string listed;
    for (const auto& n : names) listed += (listed.empty() ? "" : ", ") + n;
    return MakeError("find the program of", package,
                     "no console script named like the package " +
                         (listed.empty() ? std::string("and none other") : "among: " + listed) +
                         "; run one as a command after --: " + venv_dir + "/bin/python3 " + venv_dir + "/bin/NAME");
  }
  std::string script = venv_dir + "/bin/" + chosen;
  struct stat st{};
  // A regular file pip wrote, not a link a wheel planted to point elsewhere.
  if (::lstat(script.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return MakeError("find the program of", package, script + " is not a regular file in the venv");
  }
  return script;
}

Result<InstalledPackage> EnsureUvxPackage(const ServerRef& ref, PythonTool& tool, const std::string& cache_root,
                                          bool may_install) {
  InstalledPackage out;
  // ParseServerRef refused extras and inexact versions; checked again
  // because a ServerRef may come from elsewhere (a registry entry).
  if (ref.package.find('[') != std::string::npos || !IsValidPypiName(ref.package)) {
    return MakeError("install", CanonicalSource(ref), "not a PyPI package name without extras");
  }
  if (ref.version.empty() || ref.version == "latest") {
    auto v = tool.LatestVersion(ref.package);
    if (!v.ok()) return v.error();
    out.version = *v;
  } else if (IsExactPythonVersion(ref.version)) {
    out.version = ref.version;
  } else {
    return MakeError("install", CanonicalSource(ref), "\"" + ref.version + "\" is not an exact version; uvx:// takes "
                     "an exact version (uvx://NAME@1.2.3) or none (the newest)");
  }
  // The version names a directory: only an exact one may (no "/", no "..").
  if (!IsExactPythonVersion(out.version)) {
    return MakeError("resolve PyPI version", ref.package, "pip answered \"" + out.version + "\", not an exact version");
  }
  out.cache_dir = cache_root + "/" + NormalizePypiName(ref.package) + "@" + out.version;
  out.package_dir = out.cache_dir;
  std::error_code ec;
  if (!fs::exists(out.cache_dir + "/pyvenv.cfg", ec)) {
    if (!may_install) {
      out.bin_path = out.cache_dir + "/bin/<console script>";
      out.interpreter = out.cache_dir + "/bin/python3";
      return out;
    }
    Say("installing " + ref.package + "==" + out.version + " outside the cell into " + out.cache_dir +
        " (a venv; pip, wheels only)");
    MCPCELL_TRY(InstallIntoCache(cache_root, out.cache_dir, [&](const std::string& tmp) {
      return tool.Install(ref.package, out.version, tmp);
    }));
    out.installed_now = true;
  }
  // What runs must be what this user's mcpcell installed (adv11), as for npx://.
  std::string remedy = "remove " + VisibleOnTerminal(out.cache_dir) + " (rm -rf, or mcpcell cache prune " +
                       NormalizePypiName(ref.package) + "@" + out.version + ") to have it installed afresh";
  MCPCELL_TRY(CheckOwnedBelow(cache_root, out.cache_dir + "/pyvenv.cfg", remedy));
  auto script = ConsoleScript(out.cache_dir, ref.package);
  if (!script.ok()) return script.error();
  MCPCELL_TRY(CheckOwnedBelow(cache_root, *script, remedy));
  out.bin_path = *script;
  out.interpreter = VenvInterpreter(out.cache_dir);
  if (out.interpreter.empty()) {
    return MakeError("find the venv's Python", out.cache_dir,
                     "no bin/python* link to an interpreter under /usr; remove it (mcpcell cache prune " +
                         NormalizePypiName(ref.package) + "@" + out.version + ") and install again");
  }
  out.present = true;
  return out;
}

}  // namespace mcpcell
