// libFuzzer target: the SERVER argument of `mcpcell run` and the words after
// `--` (src/source/server_ref.cc). The input is split on NUL bytes: the first
// part is SERVER (absent when the input starts with NUL), the rest the command.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "source/image_ref.h"
#include "source/server_ref.h"
#include "util/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      parts.emplace_back();
    } else {
      parts.back().push_back(static_cast<char>(data[i]));
    }
  }
  std::optional<std::string> server;
  if (!parts.front().empty()) server = parts.front();
  std::vector<std::string> command(parts.begin() + 1, parts.end());
  auto ref = mcpcell::ParseServerRef(server, command);
  if (!ref.ok()) {
    (void)ref.error().Message();
    return 0;
  }
  (void)mcpcell::CanonicalSource(*ref);
  (void)mcpcell::JsonText(mcpcell::ToJson(*ref));  // as --dry-run and explain --json write it
  (void)mcpcell::IsExactVersion(ref->version);
  (void)mcpcell::PublisherScope(ref->package);
  if (ref->kind == mcpcell::ServerRef::Kind::kDocker) {
    mcpcell::ImageRef image = mcpcell::ImageRefFrom(*ref);
    (void)image.Reference();
    (void)image.LookupNames();
    (void)image.PullTag();
  }
  return 0;
}
