#include "cell/native/seccomp_prebuilt.h"

#include <algorithm>

namespace mcpcell {
namespace {

bool KeyEquals(const PrebuiltSeccomp& entry, const SeccompCompileKey& key) {
  return entry.arch == key.arch && std::equal(key.version, key.version + 3, entry.version) &&
         entry.library_build_id != nullptr && key.library_build_id == entry.library_build_id &&
         entry.api_level == key.api_level &&
         std::ranges::equal(entry.inputs, key.inputs);
}

}  // namespace

const PrebuiltSeccomp* MatchPrebuiltSeccomp(std::span<const PrebuiltSeccomp> table, SeccompVariant variant,
                                            const SeccompCompileKey& key) {
  if (key.library_build_id.empty()) return nullptr;
  for (const auto& entry : table) {
    if (entry.variant == variant && KeyEquals(entry, key)) return &entry;
  }
  return nullptr;
}

Result<SeccompProgram> SeccompProgramFrom(std::span<const PrebuiltSeccomp> table, SeccompVariant variant) {
  auto rules = SeccompRules(variant);
  if (const auto* entry = MatchPrebuiltSeccomp(table, variant, SeccompKeyFor(rules))) {
    return SeccompProgram(entry->program.begin(), entry->program.end());
  }
  return CompileSeccomp(rules);
}

Result<SeccompProgram> SeccompProgramFor(SeccompVariant variant) {
  return SeccompProgramFrom(PrebuiltSeccompTable(), variant);
}

}  // namespace mcpcell
