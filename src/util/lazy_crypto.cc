// libcrypto, loaded at the first call (util/lazy_library.h): SHA-256 only
// (audit/sha256.cc), for the audit chain and the relay's digests. The
// functions mcpcell calls; a new one is a link error until it is added here.
#include <openssl/evp.h>

#include "util/lazy_library.h"

// clang-format off
extern "C" int EVP_Digest(const void *a0, size_t a1, unsigned char *a2, unsigned int *a3, const EVP_MD *a4, ENGINE *a5) { return MCPCELL_LAZY_CALL(LazyCrypto, EVP_Digest)(a0, a1, a2, a3, a4, a5); }
extern "C" const EVP_MD * EVP_sha256() { return MCPCELL_LAZY_CALL(LazyCrypto, EVP_sha256)(); }
// clang-format on
