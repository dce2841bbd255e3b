// libnftables, loaded at the first call (util/lazy_library.h): only
// allow-list cells use it (egress/cell_net.cc), and the native cell loads it
// in the supervisor before the clone. Every function of <nftables/libnftables.h>.
#include <nftables/libnftables.h>

#include "util/lazy_library.h"

// clang-format off
extern "C" struct nft_ctx *nft_ctx_new(uint32_t a0) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_new)(a0); }
extern "C" void nft_ctx_free(struct nft_ctx *a0) { MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_free)(a0); }
extern "C" bool nft_ctx_get_dry_run(struct nft_ctx *a0) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_get_dry_run)(a0); }
extern "C" void nft_ctx_set_dry_run(struct nft_ctx *a0, bool a1) { MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_set_dry_run)(a0, a1); }
extern "C" uint32_t nft_ctx_get_optimize(struct nft_ctx *a0) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_get_optimize)(a0); }
extern "C" void nft_ctx_set_optimize(struct nft_ctx *a0, uint32_t a1) { MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_set_optimize)(a0, a1); }
extern "C" unsigned int nft_ctx_output_get_flags(struct nft_ctx *a0) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_output_get_flags)(a0); }
extern "C" void nft_ctx_output_set_flags(struct nft_ctx *a0, unsigned int a1) { MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_output_set_flags)(a0, a1); }
extern "C" unsigned int nft_ctx_output_get_debug(struct nft_ctx *a0) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_output_get_debug)(a0); }
extern "C" void nft_ctx_output_set_debug(struct nft_ctx *a0, unsigned int a1) { MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_output_set_debug)(a0, a1); }
extern "C" int nft_ctx_buffer_output(struct nft_ctx *a0) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_buffer_output)(a0); }
extern "C" int nft_ctx_unbuffer_output(struct nft_ctx *a0) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_unbuffer_output)(a0); }
extern "C" const char *nft_ctx_get_output_buffer(struct nft_ctx *a0) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_get_output_buffer)(a0); }
extern "C" int nft_ctx_buffer_error(struct nft_ctx *a0) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_buffer_error)(a0); }
extern "C" int nft_ctx_unbuffer_error(struct nft_ctx *a0) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_unbuffer_error)(a0); }
extern "C" const char *nft_ctx_get_error_buffer(struct nft_ctx *a0) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_get_error_buffer)(a0); }
extern "C" int nft_ctx_add_include_path(struct nft_ctx *a0, const char *a1) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_add_include_path)(a0, a1); }
extern "C" void nft_ctx_clear_include_paths(struct nft_ctx *a0) { MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_clear_include_paths)(a0); }
extern "C" int nft_ctx_add_var(struct nft_ctx *a0, const char *a1) { return MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_add_var)(a0, a1); }
extern "C" void nft_ctx_clear_vars(struct nft_ctx *a0) { MCPCELL_LAZY_CALL(LazyNftables, nft_ctx_clear_vars)(a0); }
extern "C" int nft_run_cmd_from_buffer(struct nft_ctx *a0, const char *a1) { return MCPCELL_LAZY_CALL(LazyNftables, nft_run_cmd_from_buffer)(a0, a1); }
extern "C" int nft_run_cmd_from_filename(struct nft_ctx *a0, const char *a1) { return MCPCELL_LAZY_CALL(LazyNftables, nft_run_cmd_from_filename)(a0, a1); }
// clang-format on
