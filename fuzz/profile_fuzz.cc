// libFuzzer target: a permission profile file (src/profile/permission_profile.cc),
// ToolHive's format plus the "mcpcell" block; a profile that parses is
// written back out (ToJson), as `mcpcell policy explain` does.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "profile/permission_profile.h"
#include "util/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto profile = mcpcell::ParseProfile(text, "fuzz.json");
  if (profile.ok()) {
    (void)mcpcell::JsonText(mcpcell::ToJson(*profile));
    for (const auto& host : profile->allow_host) (void)mcpcell::AllowHostProblem(host);
  } else {
    (void)profile.error().Message();
  }
  return 0;
}
