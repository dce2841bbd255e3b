#pragma once
// Human units on the command line: sizes ("512m", "1g", "65536") and
// durations ("30s", "500ms", "5m", "1h").

#include <chrono>
#include <cstdint>
#include <string_view>

#include "util/error.h"

namespace mcpcell {

/// Bytes from "N", "Nk", "Nm", "Ng" (binary units; optional trailing "b"/"ib").
Result<std::uint64_t> ParseSize(std::string_view text);
/// Milliseconds from "N" (seconds), "Nms", "Ns", "Nm", "Nh"; fractions allowed ("1.5s").
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

/// A rate "N/s", "N/m" or "N/h" (N a positive integer): `per_second` for a
/// token bucket's refill and `burst` = N, the calls one window may hold.
struct Rate {
  double per_second = 0;
  std::uint64_t burst = 0;
};
Result<Rate> ParseRate(std::string_view text);

}  // namespace mcpcell
