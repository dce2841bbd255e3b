#pragma once
// MCPCELL_TRACE_PHASES: where a launch spends its time (issue 15). With the
// variable set, each TracePhase call writes one stderr line
//
//   mcpcell-phase PID NAME WALL_US CPU_US
//
// WALL_US: microseconds since the process's first static initialiser, or,
// when the variable holds a number above 1, since that CLOCK_MONOTONIC time
// in nanoseconds (bench/launch_phases.sh sets it just before its execve, so
// exec and dynamic linking are counted too). CPU_US: CPU time of the calling
// thread so far (user + system), which the machine's other load moves much
// less than wall time. Unset, a call costs one load and a branch.
//
// Safe after clone/vfork and before execve: no allocation, no locks, one
// write(2) of a stack buffer.

namespace mcpcell {

/// Writes the phase line when tracing is on; NAME: a short word, no spaces.
void TracePhase(const char* name);

}  // namespace mcpcell
