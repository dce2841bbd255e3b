#pragma once
// uvx:// sources (PyPI packages, issue 14 item 9) are installed OUTSIDE the
// cell, before launch, like npx:// ones, into a per-package, per-version cache:
//   $XDG_CACHE_HOME/mcpcell/uvx/<normalized-name>@<version>/   (a venv)
// The venv is made by Debian's /usr/bin/python3 -m venv (python3-venv) and
// filled by Debian's pip (python3-pip), which reads the user's own pip config (pip.conf,
// PIP_INDEX_URL, ...). The cell gets the venv read-only and runs the
// package's console script with the venv's python.
//
// Only wheels are installed (pip --only-binary=:all:): a source
// distribution's setup.py would run on the host, unsandboxed, as the user —
// the Python twin of the npm install scripts npx:// keeps off the host.
//
// uv is not used even when it is on PATH: Debian 12 does not package it, so
// that path cannot be tested here, and an untested installer on the host is
// a risk with no gain over pip (docs/THREAT_MODEL.md).

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "source/npx_install.h"
#include "source/server_ref.h"
#include "util/error.h"

namespace mcpcell {

/// The Python interpreter venvs are made with: Debian's, under /usr, which
/// every cell mounts read-only (a venv's python is a symlink to it).
inline constexpr const char* kVenvPython = "/usr/bin/python3";

/// The side effects of a PyPI install, behind an interface for tests.
class PythonTool {
 public:
  virtual ~PythonTool() = default;
  /// The newest version of `package` the index offers this interpreter.
  virtual Result<std::string> LatestVersion(const std::string& package) = 0;
  /// Makes a venv at `venv_dir` (which exists, empty) and installs package==version into it.
  virtual Status Install(const std::string& package, const std::string& version, const std::string& venv_dir) = 0;
};

/// The real one: /usr/bin/python3 -m venv --without-pip, the host's pip
/// installing into it (--python; wheels only), and
/// `pip index versions` for the latest version. Limits and progress as npm's
/// (source/host_run.h).
std::unique_ptr<PythonTool> MakePipTool(std::vector<std::string> cell_writable,
                                        std::chrono::milliseconds limit = kDefaultInstallTimeout);

/// $XDG_CACHE_HOME/mcpcell/uvx, else $HOME/.cache/mcpcell/uvx.
Result<std::string> UvxCacheRoot();

/// PEP 503's normalized name: lowercase, each run of "-", "_", "." one "-".
std::string NormalizePypiName(std::string_view name);

/// The console script uvx would run: the [console_scripts] entry of the
/// package's dist-info named like the package, else its only one.
/// Returns venv_dir/bin/<name>.
Result<std::string> ConsoleScript(const std::string& venv_dir, const std::string& package);

/// Resolves the version ("" or "latest": the index's newest; else it must be
/// exact) and installs into the cache unless already there (may_install
/// false: report present=false). bin_path is the console script; the cell
/// runs `<cache_dir>/bin/python3 <bin_path>`.
Result<InstalledPackage> EnsureUvxPackage(const ServerRef& ref, PythonTool& tool, const std::string& cache_root,
                                          bool may_install);

}  // namespace mcpcell
