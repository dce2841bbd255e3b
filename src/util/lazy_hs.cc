// Vectorscan (libhs), loaded at the first call (util/lazy_library.h): only
// the relay's secret scan uses it, from its first message (guard/). Every
// function of <hs/hs.h>, so new calls into the library need no change here.
#include <hs/hs.h>

#include "util/lazy_library.h"

// clang-format off
extern "C" hs_error_t hs_alloc_scratch(const hs_database_t *a0, hs_scratch_t **a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_alloc_scratch)(a0, a1); }
extern "C" hs_error_t hs_clone_scratch(const hs_scratch_t *a0, hs_scratch_t **a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_clone_scratch)(a0, a1); }
extern "C" hs_error_t hs_close_stream(hs_stream_t *a0, hs_scratch_t *a1, match_event_handler a2, void *a3) { return MCPCELL_LAZY_CALL(LazyHs, hs_close_stream)(a0, a1, a2, a3); }
extern "C" hs_error_t hs_compile(const char *a0, unsigned int a1, unsigned int a2, const hs_platform_info_t *a3, hs_database_t **a4, hs_compile_error_t **a5) { return MCPCELL_LAZY_CALL(LazyHs, hs_compile)(a0, a1, a2, a3, a4, a5); }
extern "C" hs_error_t hs_compile_ext_multi(const char *const *a0, const unsigned int *a1, const unsigned int *a2, const hs_expr_ext_t *const *a3, unsigned int a4, unsigned int a5, const hs_platform_info_t *a6, hs_database_t **a7, hs_compile_error_t **a8) { return MCPCELL_LAZY_CALL(LazyHs, hs_compile_ext_multi)(a0, a1, a2, a3, a4, a5, a6, a7, a8); }
extern "C" hs_error_t hs_compile_lit(const char *a0, unsigned a1, const size_t a2, unsigned a3, const hs_platform_info_t *a4, hs_database_t **a5, hs_compile_error_t **a6) { return MCPCELL_LAZY_CALL(LazyHs, hs_compile_lit)(a0, a1, a2, a3, a4, a5, a6); }
extern "C" hs_error_t hs_compile_lit_multi(const char * const *a0, const unsigned *a1, const unsigned *a2, const size_t *a3, unsigned a4, unsigned a5, const hs_platform_info_t *a6, hs_database_t **a7, hs_compile_error_t **a8) { return MCPCELL_LAZY_CALL(LazyHs, hs_compile_lit_multi)(a0, a1, a2, a3, a4, a5, a6, a7, a8); }
extern "C" hs_error_t hs_compile_multi(const char *const *a0, const unsigned int *a1, const unsigned int *a2, unsigned int a3, unsigned int a4, const hs_platform_info_t *a5, hs_database_t **a6, hs_compile_error_t **a7) { return MCPCELL_LAZY_CALL(LazyHs, hs_compile_multi)(a0, a1, a2, a3, a4, a5, a6, a7); }
extern "C" hs_error_t hs_compress_stream(const hs_stream_t *a0, char *a1, size_t a2, size_t *a3) { return MCPCELL_LAZY_CALL(LazyHs, hs_compress_stream)(a0, a1, a2, a3); }
extern "C" hs_error_t hs_copy_stream(hs_stream_t **a0, const hs_stream_t *a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_copy_stream)(a0, a1); }
extern "C" hs_error_t hs_database_info(const hs_database_t *a0, char **a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_database_info)(a0, a1); }
extern "C" hs_error_t hs_database_size(const hs_database_t *a0, size_t *a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_database_size)(a0, a1); }
extern "C" hs_error_t hs_deserialize_database(const char *a0, const size_t a1, hs_database_t **a2) { return MCPCELL_LAZY_CALL(LazyHs, hs_deserialize_database)(a0, a1, a2); }
extern "C" hs_error_t hs_deserialize_database_at(const char *a0, const size_t a1, hs_database_t *a2) { return MCPCELL_LAZY_CALL(LazyHs, hs_deserialize_database_at)(a0, a1, a2); }
extern "C" hs_error_t hs_expand_stream(const hs_database_t *a0, hs_stream_t **a1, const char *a2, size_t a3) { return MCPCELL_LAZY_CALL(LazyHs, hs_expand_stream)(a0, a1, a2, a3); }
extern "C" hs_error_t hs_expression_ext_info(const char *a0, unsigned int a1, const hs_expr_ext_t *a2, hs_expr_info_t **a3, hs_compile_error_t **a4) { return MCPCELL_LAZY_CALL(LazyHs, hs_expression_ext_info)(a0, a1, a2, a3, a4); }
extern "C" hs_error_t hs_expression_info(const char *a0, unsigned int a1, hs_expr_info_t **a2, hs_compile_error_t **a3) { return MCPCELL_LAZY_CALL(LazyHs, hs_expression_info)(a0, a1, a2, a3); }
extern "C" hs_error_t hs_free_compile_error(hs_compile_error_t *a0) { return MCPCELL_LAZY_CALL(LazyHs, hs_free_compile_error)(a0); }
extern "C" hs_error_t hs_free_database(hs_database_t *a0) { return MCPCELL_LAZY_CALL(LazyHs, hs_free_database)(a0); }
extern "C" hs_error_t hs_free_scratch(hs_scratch_t *a0) { return MCPCELL_LAZY_CALL(LazyHs, hs_free_scratch)(a0); }
extern "C" hs_error_t hs_open_stream(const hs_database_t *a0, unsigned int a1, hs_stream_t **a2) { return MCPCELL_LAZY_CALL(LazyHs, hs_open_stream)(a0, a1, a2); }
extern "C" hs_error_t hs_populate_platform(hs_platform_info_t *a0) { return MCPCELL_LAZY_CALL(LazyHs, hs_populate_platform)(a0); }
extern "C" hs_error_t hs_reset_and_copy_stream(hs_stream_t *a0, const hs_stream_t *a1, hs_scratch_t *a2, match_event_handler a3, void *a4) { return MCPCELL_LAZY_CALL(LazyHs, hs_reset_and_copy_stream)(a0, a1, a2, a3, a4); }
extern "C" hs_error_t hs_reset_and_expand_stream(hs_stream_t *a0, const char *a1, size_t a2, hs_scratch_t *a3, match_event_handler a4, void *a5) { return MCPCELL_LAZY_CALL(LazyHs, hs_reset_and_expand_stream)(a0, a1, a2, a3, a4, a5); }
extern "C" hs_error_t hs_reset_stream(hs_stream_t *a0, unsigned int a1, hs_scratch_t *a2, match_event_handler a3, void *a4) { return MCPCELL_LAZY_CALL(LazyHs, hs_reset_stream)(a0, a1, a2, a3, a4); }
extern "C" hs_error_t hs_scan(const hs_database_t *a0, const char *a1, unsigned int a2, unsigned int a3, hs_scratch_t *a4, match_event_handler a5, void *a6) { return MCPCELL_LAZY_CALL(LazyHs, hs_scan)(a0, a1, a2, a3, a4, a5, a6); }
extern "C" hs_error_t hs_scan_stream(hs_stream_t *a0, const char *a1, unsigned int a2, unsigned int a3, hs_scratch_t *a4, match_event_handler a5, void *a6) { return MCPCELL_LAZY_CALL(LazyHs, hs_scan_stream)(a0, a1, a2, a3, a4, a5, a6); }
extern "C" hs_error_t hs_scan_vector(const hs_database_t *a0, const char *const *a1, const unsigned int *a2, unsigned int a3, unsigned int a4, hs_scratch_t *a5, match_event_handler a6, void *a7) { return MCPCELL_LAZY_CALL(LazyHs, hs_scan_vector)(a0, a1, a2, a3, a4, a5, a6, a7); }
extern "C" hs_error_t hs_scratch_size(const hs_scratch_t *a0, size_t *a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_scratch_size)(a0, a1); }
extern "C" hs_error_t hs_serialize_database(const hs_database_t *a0, char **a1, size_t *a2) { return MCPCELL_LAZY_CALL(LazyHs, hs_serialize_database)(a0, a1, a2); }
extern "C" hs_error_t hs_serialized_database_info(const char *a0, size_t a1, char **a2) { return MCPCELL_LAZY_CALL(LazyHs, hs_serialized_database_info)(a0, a1, a2); }
extern "C" hs_error_t hs_serialized_database_size(const char *a0, const size_t a1, size_t *a2) { return MCPCELL_LAZY_CALL(LazyHs, hs_serialized_database_size)(a0, a1, a2); }
extern "C" hs_error_t hs_set_allocator(hs_alloc_t a0, hs_free_t a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_set_allocator)(a0, a1); }
extern "C" hs_error_t hs_set_database_allocator(hs_alloc_t a0, hs_free_t a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_set_database_allocator)(a0, a1); }
extern "C" hs_error_t hs_set_misc_allocator(hs_alloc_t a0, hs_free_t a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_set_misc_allocator)(a0, a1); }
extern "C" hs_error_t hs_set_scratch_allocator(hs_alloc_t a0, hs_free_t a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_set_scratch_allocator)(a0, a1); }
extern "C" hs_error_t hs_set_stream_allocator(hs_alloc_t a0, hs_free_t a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_set_stream_allocator)(a0, a1); }
extern "C" hs_error_t hs_stream_size(const hs_database_t *a0, size_t *a1) { return MCPCELL_LAZY_CALL(LazyHs, hs_stream_size)(a0, a1); }
extern "C" hs_error_t hs_valid_platform() { return MCPCELL_LAZY_CALL(LazyHs, hs_valid_platform)(); }
extern "C" const char *hs_version() { return MCPCELL_LAZY_CALL(LazyHs, hs_version)(); }
// clang-format on
