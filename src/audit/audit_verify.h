#pragma once
// `mcpcell audit verify FILE`: walks the audit log's hash chain
// (audit_log.h) and reports the first record that breaks it.

#include <cstdint>
#include <istream>
#include <string>

namespace mcpcell {

struct ChainReport {
  bool ok = false;
  std::uint64_t records = 0;
  std::uint64_t runs = 0;
  std::uint64_t line = 0;  ///< the first broken line (1-based) when !ok
  std::string problem;     ///< "record hash mismatch (edited?)" ...
};

/// Checks every line of `in`: its own hash, its "prev" against the previous
/// record's hash (64 zeros for the first), its "seq" against its place, and
/// that the file ends with a complete line.
ChainReport VerifyChain(std::istream& in);

}  // namespace mcpcell
