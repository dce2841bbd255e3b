// Built into every program of a -DMCPCELL_SANITIZE=ON build (not into the core
// library): the sanitizers' defaults, so a program started with an empty
// environment (the e2e tests start mcpcell through the MCP SDK, which passes
// only HOME, PATH and the like) still stops at the first error and says where.
// ASAN_OPTIONS / UBSAN_OPTIONS in the environment override these.

extern "C" const char* __asan_default_options() {
  return "halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1:check_initialization_order=1";
}

extern "C" const char* __ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }
