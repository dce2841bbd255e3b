// libFuzzer target: a dotenv file named by a client entry's "envFile" (VS
// Code), read by `mcpcell client wrap` for its variable names
// (src/client/env_file_names.cc). The file is the project's, not mcpcell's.
//
// Checks that every name accepted is a plain NAME (it becomes --env=NAME in
// mcpcell's args, where anything else could pose as an option or a value)
// and that no name is listed twice.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "client/env_file_names.h"
#include "client/wrap_env.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto names = mcpcell::EnvFileNames(text);
  if (!names.ok()) {
    (void)names.error().Message();
    return 0;
  }
  for (auto it = names->begin(); it != names->end(); ++it) {
    if (!mcpcell::IsEnvName(*it)) std::abort();
    if (std::find(names->begin(), it, *it) != it) std::abort();
  }
  return 0;
}
