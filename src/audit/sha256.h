#pragma once
// SHA-256 (Nettle's) as lowercase hex: record hashes of the audit
// chain and the digests that stand in for redacted tool arguments and results.

#include <string>
#include <string_view>

namespace mcpcell {

std::string Sha256Hex(std::string_view data);

}  // namespace mcpcell
