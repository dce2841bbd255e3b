#pragma once
// The native cell an npm package's install scripts run in
// (source/install_scripts.h, issue 14 item 2). It is built from the same
// CellSpec machinery as a server's cell (credential checks and masks,
// seccomp, Landlock, cgroup), with:
//   - the host's /usr, /bin, /lib* read-only (node, npm and its node-gyp,
//     python3, make, g++; Node's headers at /usr/include/node), and of the
//     host's /etc only what a networked server's cell gets (certificates,
//     nsswitch.conf, gai.conf; the DNS stub's resolv.conf);
//   - what runs: the cell's planned steps (/bin/sh and the program
//     source/lifecycle.h wrote), with what npm's run-script gives every
//     script (PATH: the package's command view, npm's node-gyp wrapper, the
//     system's; npm_config_node_gyp, npm_execpath, INIT_CWD) — no npm;
//   - the install directory read-only, the one package's directory writable
//     (with what its tarball bundles; what npm placed below those read-only);
//   - a private tmpfs HOME and /tmp (no ~/.npmrc, ~/.ssh, npm cache);
//   - network only to the npm registries the install used, through
//     mcpcell's egress proxy (cell/script_network.h), npm pointed at them by
//     a userconfig written for it, with no token, and npm's cafile bound
//     read-only (source/script_npm.h);
//     a prebuilt-binary download from anywhere else is denied and the
//     package builds from source;
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
