#include "util/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace mcpcell {
namespace {

// Splits "1.5g" into 1.5 and "g". The number must be finite and non-negative.
bool SplitNumber(std::string_view text, double* number, std::string* unit) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, *number);
  if (ec != std::errc() || ptr != text.data() + i || !std::isfinite(*number) || *number < 0) {
    return false;
  }
  unit->clear();
  for (char c : text.substr(i)) unit->push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return true;
}

}  // namespace

Result<std::uint64_t> ParseSize(std::string_view text) {
  double n = 0;
  std::string unit;
  if (!SplitNumber(text, &n, &unit)) {
    return MakeError("bad size", std::string(text), "expected a number with an optional unit: 512m, 1g, 65536");
  }
  double mult = 0;
  if (unit.empty() || unit == "b") mult = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib") mult = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib") mult = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib") mult = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tb" || unit == "tib") mult = 1024.0 * 1024 * 1024 * 1024;
  if (mult == 0) return MakeError("bad size", std::string(text), "unknown unit '" + unit + "' (use k, m, g or t)");
  double bytes = n * mult;
  if (bytes >= 1.8e19) return MakeError("bad size", std::string(text), "too large");
  return static_cast<std::uint64_t>(bytes);
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  double n = 0;
  std::string unit;
  if (!SplitNumber(text, &n, &unit)) {
    return MakeError("bad duration", std::string(text), "expected a number with an optional unit: 500ms, 30s, 5m, 1h");
  }
  double ms = 0;
  if (unit == "ms") ms = n;
  else if (unit.empty() || unit == "s") ms = n * 1000;
  else if (unit == "m" || unit == "min") ms = n * 60'000;
  else if (unit == "h") ms = n * 3'600'000;
  else return MakeError("bad duration", std::string(text), "unknown unit '" + unit + "' (use ms, s, m or h)");
  if (ms > 1e12) return MakeError("bad duration", std::string(text), "too long");
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ms)));
}

Result<Rate> ParseRate(std::string_view text) {
  auto slash = text.find('/');
  std::uint64_t n = 0;
  std::string_view num = text.substr(0, slash);
  auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
  std::string_view per = slash == std::string_view::npos ? "" : text.substr(slash + 1);
  double window = per == "s" ? 1 : per == "m" ? 60 : per == "h" ? 3600 : 0;
  if (slash == std::string_view::npos || ec != std::errc() || ptr != num.data() + num.size() || n == 0 ||
      n > 1'000'000 || window == 0) {
    return MakeError("bad rate", std::string(text), "expected calls per second, minute or hour: 10/s, 600/m, 1000/h");
  }
  return Rate{static_cast<double>(n) / window, n};
}

}  // namespace mcpcell
