#pragma once
// Shared libraries loaded at their first use instead of at process start
// (issue 15). Linked as DT_NEEDED, libnftables, libldns (with libssl),
// Vectorscan's libhs, libnettle and libyaml cost every launch their loading,
// relocations and initialisers, ~1.3 ms of the ~3 ms mcpcell spent before
// main (bench/RESULTS.md), though most runs use none of them: nftables only
// allow-list cells, ldns only a DNS query, libhs and libnettle only the
// relay's first message or an audit record; libyaml only `mcpcell client`.
//
// mcpcell does not link them. Each of their functions mcpcell calls is
// defined in src/util/lazy_*.cc with the library's own prototype (so the
// compiler checks it against the header) and forwards to the real one,
// found with dlsym(3) in the library dlopen(3)ed by its soname at the first
// call. Calling a function of these libraries that has no forwarder there is
// a link error ("undefined reference"): add it to the library's file.
//
// dlopen follows the same search as ld.so does at start (ld.so(8):
// LD_LIBRARY_PATH, the cache, the default paths), so the same library is
// found that a DT_NEEDED entry would have found. A library that cannot be
// loaded ends the process with a message naming it and its Debian package,
// as ld.so does at start for a missing one; where a caller can fail
// cleanly it calls Load() first (the native cell loads libnftables before
// the clone: the cell's PID 1 must never search its own file system for it).

#include "util/error.h"

namespace mcpcell {

class LazyLibrary {
 public:
  /// `soname` as DT_NEEDED would name it; `package`: the Debian package.
  LazyLibrary(const char* soname, const char* package);
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  /// Loaded (RTLD_NOW: every symbol bound now, none later from wherever the
  /// caller then is), or the error naming the library, dlerror and package.
  Status Load() const;
  /// The address of `symbol`; a library that cannot be loaded or lacks it
  /// ends the process (ld.so's behaviour at start), after saying so on stderr.
  void* Symbol(const char* symbol) const;

 private:
  const char* soname_;
  const char* package_;
  void* handle_ = nullptr;
  std::string error_;
};

/// Each loaded by its first use (a thread-safe function-local static).
const LazyLibrary& LazyNftables();
const LazyLibrary& LazyLdns();
const LazyLibrary& LazyHs();
const LazyLibrary& LazyNettle();
const LazyLibrary& LazyYaml();

}  // namespace mcpcell

/// The real `name` (a function of `lib`), looked up once per forwarder.
#define MCPCELL_LAZY_CALL(lib, name)                                                             \
  ([]() {                                                                                        \
    static const auto real = reinterpret_cast<decltype(&::name)>(::mcpcell::lib().Symbol(#name)); \
    return real;                                                                                 \
  }())
