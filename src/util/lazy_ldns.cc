// libldns, loaded at the first call (util/lazy_library.h): only the cell's
// DNS stub uses it, at the first query (egress/dns_stub.cc). The functions
// mcpcell calls; a new one is a link error until it is added here.
#include <ldns/ldns.h>

#include "util/lazy_library.h"

// clang-format off
extern "C" ldns_rdf *ldns_dname_new_frm_str(const char *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_dname_new_frm_str)(a0); }
extern "C" ldns_status ldns_pkt2wire(uint8_t **a0, const ldns_pkt *a1, size_t *a2) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt2wire)(a0, a1, a2); }
extern "C" uint16_t ldns_pkt_ancount(const ldns_pkt *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_ancount)(a0); }
extern "C" uint16_t ldns_pkt_nscount(const ldns_pkt *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_nscount)(a0); }
extern "C" ldns_rr_list *ldns_pkt_answer(const ldns_pkt *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_answer)(a0); }
extern "C" bool ldns_pkt_edns(const ldns_pkt *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_edns)(a0); }
extern "C" void ldns_pkt_free(ldns_pkt *a0) { MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_free)(a0); }
extern "C" ldns_pkt_opcode ldns_pkt_get_opcode(const ldns_pkt *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_get_opcode)(a0); }
extern "C" ldns_pkt_rcode ldns_pkt_get_rcode(const ldns_pkt *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_get_rcode)(a0); }
extern "C" uint16_t ldns_pkt_id(const ldns_pkt *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_id)(a0); }
extern "C" ldns_pkt *ldns_pkt_new() { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_new)(); }
extern "C" bool ldns_pkt_push_rr(ldns_pkt *a0, ldns_pkt_section a1, ldns_rr *a2) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_push_rr)(a0, a1, a2); }
extern "C" uint16_t ldns_pkt_qdcount(const ldns_pkt *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_qdcount)(a0); }
extern "C" bool ldns_pkt_qr(const ldns_pkt *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_qr)(a0); }
extern "C" ldns_pkt *ldns_pkt_query_new(ldns_rdf *a0, ldns_rr_type a1, ldns_rr_class a2, uint16_t a3) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_query_new)(a0, a1, a2, a3); }
extern "C" ldns_rr_list *ldns_pkt_question(const ldns_pkt *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_question)(a0); }
extern "C" bool ldns_pkt_rd(const ldns_pkt *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_rd)(a0); }
extern "C" void ldns_pkt_set_edns_udp_size(ldns_pkt *a0, uint16_t a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_set_edns_udp_size)(a0, a1); }
extern "C" void ldns_pkt_set_id(ldns_pkt *a0, uint16_t a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_set_id)(a0, a1); }
extern "C" void ldns_pkt_set_opcode(ldns_pkt *a0, ldns_pkt_opcode a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_set_opcode)(a0, a1); }
extern "C" void ldns_pkt_set_qr(ldns_pkt *a0, bool a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_set_qr)(a0, a1); }
extern "C" void ldns_pkt_set_ra(ldns_pkt *a0, bool a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_set_ra)(a0, a1); }
extern "C" void ldns_pkt_set_rcode(ldns_pkt *a0, uint8_t a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_set_rcode)(a0, a1); }
extern "C" void ldns_pkt_set_rd(ldns_pkt *a0, bool a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_pkt_set_rd)(a0, a1); }
extern "C" char * ldns_rdf2str(const ldns_rdf *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rdf2str)(a0); }
extern "C" ldns_rdf *ldns_rdf_clone(const ldns_rdf *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rdf_clone)(a0); }
extern "C" uint8_t *ldns_rdf_data(const ldns_rdf *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rdf_data)(a0); }
extern "C" void ldns_rdf_deep_free(ldns_rdf *a0) { MCPCELL_LAZY_CALL(LazyLdns, ldns_rdf_deep_free)(a0); }
extern "C" ldns_rdf *ldns_rdf_new_frm_data(ldns_rdf_type a0, size_t a1, const void *a2) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rdf_new_frm_data)(a0, a1, a2); }
extern "C" size_t ldns_rdf_size(const ldns_rdf *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rdf_size)(a0); }
extern "C" ldns_rr* ldns_rr_clone(const ldns_rr *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_clone)(a0); }
extern "C" void ldns_rr_free(ldns_rr *a0) { MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_free)(a0); }
extern "C" ldns_rr_class ldns_rr_get_class(const ldns_rr *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_get_class)(a0); }
extern "C" ldns_rr_type ldns_rr_get_type(const ldns_rr *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_get_type)(a0); }
extern "C" ldns_rr* ldns_rr_list_rr(const ldns_rr_list *a0, size_t a1) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_list_rr)(a0, a1); }
extern "C" ldns_rr* ldns_rr_new() { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_new)(); }
extern "C" ldns_status ldns_rr_new_frm_str(ldns_rr **a0, const char *a1, uint32_t a2, const ldns_rdf *a3, ldns_rdf **a4) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_new_frm_str)(a0, a1, a2, a3, a4); }
extern "C" ldns_rdf* ldns_rr_owner(const ldns_rr *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_owner)(a0); }
extern "C" bool ldns_rr_push_rdf(ldns_rr *a0, const ldns_rdf *a1) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_push_rdf)(a0, a1); }
extern "C" ldns_rdf* ldns_rr_rdf(const ldns_rr *a0, size_t a1) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_rdf)(a0, a1); }
extern "C" void ldns_rr_set_class(ldns_rr *a0, ldns_rr_class a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_set_class)(a0, a1); }
extern "C" void ldns_rr_set_owner(ldns_rr *a0, ldns_rdf *a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_set_owner)(a0, a1); }
extern "C" void ldns_rr_set_question(ldns_rr *a0, bool a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_set_question)(a0, a1); }
extern "C" void ldns_rr_set_ttl(ldns_rr *a0, uint32_t a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_set_ttl)(a0, a1); }
extern "C" void ldns_rr_set_type(ldns_rr *a0, ldns_rr_type a1) { MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_set_type)(a0, a1); }
extern "C" uint32_t ldns_rr_ttl(const ldns_rr *a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_ttl)(a0); }
extern "C" char * ldns_rr_type2str(const ldns_rr_type a0) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_rr_type2str)(a0); }
extern "C" ldns_status ldns_wire2pkt(ldns_pkt **a0, const uint8_t *a1, size_t a2) { return MCPCELL_LAZY_CALL(LazyLdns, ldns_wire2pkt)(a0, a1, a2); }
// clang-format on
