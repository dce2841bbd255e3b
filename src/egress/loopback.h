#pragma once
#include "util/error.h"

namespace mcpcell {

/// Brings up `lo` in the calling process's (new) network namespace, which
/// starts with lo down: servers that talk to themselves over 127.0.0.1 work,
/// and nothing else is reachable.
Status BringUpLoopback();

}  // namespace mcpcell
