// libFuzzer target: the engine's image inspect answer (GET /images/NAME/json,
// src/cell/docker/image_config.cc) and what mcpcell derives from it: the
// argv, the cell's user and whether a pinned digest matches.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cell/docker/image_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string body(reinterpret_cast<const char*>(data), size);
  auto image = mcpcell::docker::ParseImageInspect(body, "fuzz/image");
  if (!image.ok()) {
    (void)image.error().Message();
    return 0;
  }
  (void)mcpcell::docker::ImageArgv(*image, {});
  (void)mcpcell::docker::ImageArgv(*image, {"--flag"});
  (void)mcpcell::docker::ImageUserNote(image->user, 0x70000000U, 0x70000000U);
  (void)mcpcell::docker::MatchesDigest(*image, "sha256:0000000000000000000000000000000000000000000000000000000000000000");
  for (const auto& d : image->repo_digests) (void)mcpcell::docker::MatchesDigest(*image, d);
  return 0;
}
