#include "cell/docker/base_image.h"

#include <nlohmann/json.hpp>

namespace mcpcell::docker {

Status EnsureBaseImage(const EngineClient& engine) {
  auto have = engine.Call("GET", std::string("/images/") + kBaseImage + "/json");
  if (!have) return have.error();
  if (have->status == 200) return {};
  if (have->status != 404) {
    return MakeError("inspect image", kBaseImage, EngineMessage(*have));
  }
  // An empty tar archive is two 512-byte zero blocks (POSIX ustar end marker).
  std::string empty_tar(1024, '\0');
  // The tag inside `repo`: Podman's compat import ignores a separate `tag`
  // (it tagged "latest"); Docker parses either form.
  auto r = engine.Call("POST", "/images/create?fromSrc=-&repo=" + UrlEncode(kBaseImage), empty_tar,
                       "application/x-tar");
  if (!r) return r.error();
  if (r->status != 200) return MakeError("import base image", kBaseImage, EngineMessage(*r));
  // Import reports failures inside a 200 stream of JSON lines ({"error": ...}).
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    return MakeError("import base image", kBaseImage, j["error"].dump());
  }
  return {};
}

}  // namespace mcpcell::docker
