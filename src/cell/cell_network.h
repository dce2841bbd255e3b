#pragma once
// What a cell's network setting adds to its CellSpec besides the
// NetworkSpec itself: the system files a networked runtime reads, and for an
// allow-list cell the proxy variables. Shared by a server's launch
// (cli/launch_plan.cc) and an install-script cell (cell/script_cell.cc), so
// both cells with the same network look the same from inside.

#include "core/cell_spec.h"

namespace mcpcell {

/// Sets spec->network to `network`, then: any network but none adds the
/// system files a networked runtime needs (certificates, gai.conf; an
/// allow-list cell gets the DNS stub's resolv.conf, never the host's); an
/// allow-list cell gets HTTP(S)_PROXY, ALL_PROXY and NO_PROXY pointing at
/// mcpcell's egress proxy (a value already in spec->env wins).
void ApplyCellNetwork(CellSpec* spec, NetworkSpec network);

}  // namespace mcpcell
