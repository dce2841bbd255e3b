// libyaml, loaded at the first call (util/lazy_library.h): only `mcpcell
// client` reads YAML (Goose's config.yaml, client/yaml_edit.cc). The
// functions mcpcell calls; a new one is a link error until it is added here.
#include <yaml.h>

#include "util/lazy_library.h"

// clang-format off
extern "C" void yaml_event_delete(yaml_event_t *a0) { MCPCELL_LAZY_CALL(LazyYaml, yaml_event_delete)(a0); }
extern "C" void yaml_parser_delete(yaml_parser_t *a0) { MCPCELL_LAZY_CALL(LazyYaml, yaml_parser_delete)(a0); }
extern "C" int yaml_parser_initialize(yaml_parser_t *a0) { return MCPCELL_LAZY_CALL(LazyYaml, yaml_parser_initialize)(a0); }
extern "C" int yaml_parser_parse(yaml_parser_t *a0, yaml_event_t *a1) { return MCPCELL_LAZY_CALL(LazyYaml, yaml_parser_parse)(a0, a1); }
extern "C" void yaml_parser_set_encoding(yaml_parser_t *a0, yaml_encoding_t a1) { MCPCELL_LAZY_CALL(LazyYaml, yaml_parser_set_encoding)(a0, a1); }
extern "C" void yaml_parser_set_input_string(yaml_parser_t *a0, const unsigned char *a1, size_t a2) { MCPCELL_LAZY_CALL(LazyYaml, yaml_parser_set_input_string)(a0, a1, a2); }
// clang-format on
