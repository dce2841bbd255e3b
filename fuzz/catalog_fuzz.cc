// libFuzzer target: a registry catalog (src/registry/catalog.cc), mcpcell's
// format and ToolHive registry entries; lookups run on what parsed.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "registry/catalog.h"
#include "util/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto catalog = mcpcell::ParseCatalog(text, "fuzz.json");
  if (!catalog.ok()) {
    (void)catalog.error().Message();
    return 0;
  }
  for (const auto& entry : catalog->entries()) {
    (void)catalog->Find(entry.name);
    (void)catalog->FindBySource(entry.source);
    (void)mcpcell::JsonText(mcpcell::ToJson(entry.permissions));
  }
  return 0;
}
