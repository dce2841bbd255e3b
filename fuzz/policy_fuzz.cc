// libFuzzer target: a policy file (src/policy/policy.cc), the way
// `mcpcell run --policy FILE` reads it. Relative profile names resolve against
// a temp dir holding one valid profile (p.json), so rules that load a
// profile are reached too.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "policy/policy.h"
#include "util/json_text.h"

namespace {
std::string ProfileDir() {
  char dir[] = "/tmp/fuzz-policy.XXXXXX";
  if (::mkdtemp(dir) == nullptr) std::abort();
  std::string path = std::string(dir) + "/p.json";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) std::abort();
  std::fputs(R"({"network": {"outbound": {"allow_host": ["api.example.org"], "allow_port": [443]}}})", f);
  std::fclose(f);
  return dir;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string base_dir = ProfileDir();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto policy = mcpcell::ParsePolicy(text, "fuzz.json", base_dir);
  if (policy.ok()) {
    for (const auto& rule : policy->rules) (void)mcpcell::JsonText(mcpcell::ToJson(rule.action));
    (void)mcpcell::JsonText(mcpcell::ToJson(policy->default_action));
  } else {
    (void)policy.error().Message();
  }
  return 0;
}
