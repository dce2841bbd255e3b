#include "audit/sha256.h"

#include <nettle/sha2.h>

namespace mcpcell {

std::string Sha256Hex(std::string_view data) {
  sha256_ctx ctx;
  std::uint8_t md[SHA256_DIGEST_SIZE];
  sha256_init(&ctx);
  sha256_update(&ctx, data.size(), reinterpret_cast<const std::uint8_t*>(data.data()));
  sha256_digest(&ctx, sizeof md, md);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * sizeof md);
  for (std::uint8_t b : md) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
  return out;
}

}  // namespace mcpcell
