#pragma once
// What running a cell produced, whatever the backend.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace mcpcell {

struct CellResult {
  int exit_code = 0;                  ///< the server's status, or one of core/exit_codes.h
  std::optional<Error> error;         ///< set when mcpcell itself failed (setup, isolation, exec)
  std::string cell_id;
  std::string backend;
  bool timed_out = false;
  std::chrono::milliseconds duration{0};
  std::optional<std::uint64_t> peak_memory_bytes;
};

/// Called once the server has been exec'd inside the cell, with facts for the
/// audit log's "launch" event (backend, cell id, pid, cgroup, limits).
using LaunchCallback = std::function<void(const nlohmann::json& launch)>;

}  // namespace mcpcell
