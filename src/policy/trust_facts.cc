#include "policy/trust_facts.h"

#include <nlohmann/json.hpp>

#include "registry/catalog.h"
#include "source/interpreted_script.h"
#include "source/uvx_install.h"
#include "util/path_search.h"

namespace mcpcell {

TrustFacts GatherTrustFacts(const ServerRef& ref, const RegistryEntry* entry) {
  TrustFacts f;
  f.kind = ref.kind;
  f.source = CanonicalSource(ref);
  f.name = ref.package;
  f.version = ref.version;
  switch (ref.kind) {
    case ServerRef::Kind::kNpx:
    case ServerRef::Kind::kUvx:
      // PyPI's exact versions need not have three parts ("1.0", "2025.4.7").
      f.pinned = ref.kind == ServerRef::Kind::kNpx ? IsExactVersion(ref.version) : IsExactPythonVersion(ref.version);
      f.publisher_scope = PublisherScope(ref.package);
      break;
    case ServerRef::Kind::kDocker: {
      f.pinned = !ref.digest.empty();
      std::size_t slash = ref.package.rfind('/');
      f.publisher_scope = slash == std::string::npos ? "library" : ref.package.substr(0, slash);
      break;
    }
    case ServerRef::Kind::kCommand:
    case ServerRef::Kind::kRegistry:
      // The file a run without a cell executes, by its real path: a link on
      // PATH changed between this judgement and the exec would run another
      // (adv15).
      f.local_path = RealPathOf(FindOnHostPath(ref.package));
      if (auto script = InterpretedScriptOf(ref.args, CurrentDirectory())) {
        f.script = script->script;
        f.script_path = script->script_path;
        f.module = script->module;
        f.maybe_names = script->maybe_names;
      } else {
        f.program_with_arguments = ref.args.size() > 1;
      }
      break;
  }
  if (entry != nullptr) {
    f.in_registry = true;
    f.registry_name = entry->name;
    f.registry_tier = entry->tier;
    f.registry_pinned = ref.kind == ServerRef::Kind::kDocker
                            ? (!ref.digest.empty() && ref.digest == entry->source.digest)
                            : (f.pinned && ref.version == entry->source.version);
  }
  return f;
}

nlohmann::json ToJson(const TrustFacts& f) {
  return nlohmann::json{{"kind", ToString(f.kind)},
                        {"source", f.source},
                        {"name", f.name},
                        {"version", f.version},
                        {"pinned", f.pinned},
                        {"in_registry", f.in_registry},
                        {"registry_pinned", f.registry_pinned},
                        {"registry_name", f.registry_name},
                        {"registry_tier", f.registry_tier},
                        {"publisher_scope", f.publisher_scope},
                        {"local_path", f.local_path},
                        {"script", f.script_path},
                        {"module", f.module},
                        {"requests_network", f.requests_network},
                        {"requests_write", f.requests_write}};
}

}  // namespace mcpcell
