#pragma once
// Who a run is for, for the parts of a cell that write their own audit events
// beside the relay's (the egress proxy: one event per connection attempt).

#include <string>

namespace mcpcell {

class AuditLog;

struct RunContext {
  std::string server;         ///< the server's name as the audit log names it
  AuditLog* audit = nullptr;  ///< may be null; outlives the run
};

}  // namespace mcpcell
