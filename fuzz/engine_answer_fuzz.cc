// libFuzzer target: what `mcpcell doctor` reads from a container engine's
// socket (src/doctor/parse.cc): a raw HTTP/1.x response (status line,
// headers, chunked body), then its body as the engine's /info JSON
// (ParseDockerRuntimes, as engine_probe.cc does).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "doctor/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view raw(reinterpret_cast<const char*>(data), size);
  auto response = mcpcell::doctor::ParseHttpResponse(raw);
  std::string_view json = response ? std::string_view(response->body) : raw;
  (void)mcpcell::doctor::GvisorRuntimes(mcpcell::doctor::ParseDockerRuntimes(json));
  (void)mcpcell::doctor::UnixSocketPathFromHost(raw);
  return 0;
}
