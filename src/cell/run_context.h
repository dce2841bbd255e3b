#pragma once
// Who a run is for, for the parts of a cell that write their own audit events
// beside the relay's (the egress proxy: one event per connection attempt),
// and the copy of its stderr that the backend starts once the cell exists.

#include <string>

namespace mcpcell {

class AuditLog;
class StderrLog;

struct RunContext {
  std::string server;         ///< the server's name as the audit log names it
  AuditLog* audit = nullptr;  ///< may be null; outlives the run
  /// The run's stderr copy (stderr_log.h), started with the stdio relay's
  /// threads after the cell is cloned; may be null; outlives the run.
  StderrLog* stderr_log = nullptr;
};

}  // namespace mcpcell
