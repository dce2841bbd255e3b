// libFuzzer target: a docker image reference "IMAGE[:TAG][@sha256:DIGEST]"
// (src/source/image_ref.cc), as given on the command line or in a catalog.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "source/image_ref.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto image = mcpcell::ParseImageRef(text);
  if (!image.ok()) {
    (void)image.error().Message();
    return 0;
  }
  (void)image->Reference();
  (void)image->LookupNames();
  (void)image->PullTag();
  return 0;
}
