#pragma once
// The OS-native backend: runs a CellSpec in new Linux namespaces with no
// daemon. The supervisor (this process) stays outside the cell, owns the
// cgroup, forwards stop requests and reports the server's exit status.

#include "cell/cell.h"
#include "cell/cell_result.h"
#include "core/cell_spec.h"
#include "cell/run_context.h"

namespace mcpcell {

class StdioRelay;

/// Starts the server in a new cell and returns once it runs (or why it does
/// not). The server's stdio is `stdio`'s cell ends where it has them
/// (terminals, the relay), else mcpcell's own fds (no copy); `stdio`'s
/// copies start once the cell holds its ends. A network allow-list is served
/// by an EgressService that lives exactly as long as the cell; its audit
/// events name `ctx.server` and go to `ctx.audit`. `spec`, `ctx`, `stdio`
/// and `on_launch` must outlive the Cell.
StartedCell StartNativeCell(const CellSpec& spec, const RunContext& ctx, StdioRelay& stdio,
                            const LaunchCallback& on_launch);

}  // namespace mcpcell
