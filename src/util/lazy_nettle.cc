// libnettle, loaded at the first call (util/lazy_library.h): SHA-256 only
// (audit/sha256.cc), for the audit chain, the pin files' names and the
// relay's digests. The functions mcpcell calls; a new one is a link error
// until it is added here. Nettle's headers name them nettle_* through macros.
#include <nettle/sha2.h>

#include "util/lazy_library.h"

// clang-format off
extern "C" void nettle_sha256_init(struct sha256_ctx *a0) { MCPCELL_LAZY_CALL(LazyNettle, nettle_sha256_init)(a0); }
extern "C" void nettle_sha256_update(struct sha256_ctx *a0, size_t a1, const uint8_t *a2) { MCPCELL_LAZY_CALL(LazyNettle, nettle_sha256_update)(a0, a1, a2); }
extern "C" void nettle_sha256_digest(struct sha256_ctx *a0, size_t a1, uint8_t *a2) { MCPCELL_LAZY_CALL(LazyNettle, nettle_sha256_digest)(a0, a1, a2); }
// clang-format on
