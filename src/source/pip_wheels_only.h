#pragma once
// The host's pip installs uvx:// packages outside every cell, so it must
// never run a package's code. --only-binary=:all: keeps pip's finder to
// wheels, but not a PEP 508 direct reference (`Requires-Dist: x @
// https://anywhere/x-1.0.tar.gz`, `git+https://...`): pip downloads that
// source and runs its build backend to read its metadata — on the host, as
// the user (adv21, HIGH: any index but PyPI's own file host serves such
// metadata). So pip runs under a small program of ours that loads the host's
// pip and refuses, before anything is downloaded, every requirement whose
// link is not a wheel (an sdist, a VCS checkout, a directory) and every
// editable one. Fail closed: a pip whose internals are not the ones patched
// refuses to run at all.

#include <string>
#include <vector>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// Prints the directory the host Python's pip package lives in (run with
/// `python3 -I -c`): the wheels-only program loads that pip.
extern const char* const kPipRootProgram;

/// How to run the host's pip (found in `pip_root`) with `pip_args`
/// ("install", ...) under `python` (the venv's own interpreter, so pip
/// installs into the venv as if --python named it), wheels only. The
/// program is a sealed memfd the tool gets as `program` (HostToolRun::
/// pass_fds) and runs as /proc/self/fd/N: no file of ours to swap, and no
/// page of Python in a failed run's command line.
struct WheelsOnlyPip {
  UniqueFd program;
  std::vector<std::string> argv;
};
Result<WheelsOnlyPip> WheelsOnlyPipRun(const std::string& python, const std::string& pip_root,
                                       const std::vector<std::string>& pip_args);

}  // namespace mcpcell
