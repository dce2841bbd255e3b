#include "util/phase_trace.h"

#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace mcpcell {
namespace {

std::int64_t Nanoseconds(clockid_t clock) {
  struct timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// 0: tracing off. Set once, before main, by the constructor below; read-only
// afterwards, so a cloned child reads the same value without a lock.
std::int64_t g_origin_ns = 0;

// Priority 101: the first of this program's own initialisers (the shared
// libraries' ran before), so "static-init" measures the rest of them.
__attribute__((constructor(101))) void StartPhaseTrace() {
  const char* v = std::getenv("MCPCELL_TRACE_PHASES");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0) return;
  long long given = std::strtoll(v, nullptr, 10);
  g_origin_ns = given > 1 ? given : Nanoseconds(CLOCK_MONOTONIC);
  TracePhase("static-init-start");
}

// Appends the decimal digits of n (n >= 0) at p; returns the end.
char* PutNumber(char* p, std::int64_t n) {
  char digits[24];
  int k = 0;
  do {
    digits[k++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0 && k < 24);
  while (k > 0) *p++ = digits[--k];
  return p;
}

}  // namespace

void TracePhase(const char* name) {
  if (g_origin_ns == 0) return;
  std::int64_t wall_us = (Nanoseconds(CLOCK_MONOTONIC) - g_origin_ns) / 1000;
  std::int64_t cpu_us = Nanoseconds(CLOCK_THREAD_CPUTIME_ID) / 1000;
  char line[160];
  char* p = line;
  constexpr char kTag[] = "mcpcell-phase ";
  std::memcpy(p, kTag, sizeof kTag - 1);
  p += sizeof kTag - 1;
  p = PutNumber(p, ::getpid());
  *p++ = ' ';
  std::size_t n = std::strlen(name);
  if (n > 64) n = 64;
  std::memcpy(p, name, n);
  p += n;
  *p++ = ' ';
  p = PutNumber(p, wall_us < 0 ? 0 : wall_us);
  *p++ = ' ';
  p = PutNumber(p, cpu_us);
  *p++ = '\n';
  (void)!::write(STDERR_FILENO, line, static_cast<std::size_t>(p - line));
}

}  // namespace mcpcell
