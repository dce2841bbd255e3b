#pragma once
// The native cell an npm package's install scripts run in
// (source/install_scripts.h, issue 14 item 2). It is built from the same
// CellSpec machinery as a server's cell (credential checks and masks,
// seccomp, Landlock, cgroup), with:
//   - the host's /usr, /bin, /lib* read-only (node, npm and its node-gyp,
//     python3, make, g++; Node's headers at /usr/include/node), and nothing
//     else of the host's /etc;
//   - the install directory read-only, the one package's directory writable;
//   - a private tmpfs HOME and /tmp (no ~/.npmrc, ~/.ssh, npm cache);
//   - no network (loopback only): a prebuilt-binary download fails and the
//     package builds from source, offline;
//   - stdin /dev/null; stdout and stderr to mcpcell's stderr (filtered as
//     for a terminal), the last lines kept for the error;
//   - the --install-timeout, after which the whole cell is killed.
// The CellSpec is built by ScriptCellSpec, so a test can read it.

#include <memory>

#include "core/cell_spec.h"
#include "source/install_scripts.h"
#include "util/error.h"

namespace mcpcell {

/// The CellSpec `run` is started with (described above).
Result<CellSpec> ScriptCellSpec(const ScriptRun& run);

/// The ScriptCell that runs each ScriptRun in a native cell. When no native
/// cell can be made here (no user namespaces), Run refuses, saying what is
/// missing and how to install without the scripts: never on the host.
std::unique_ptr<ScriptCell> MakeNativeScriptCell();

}  // namespace mcpcell
