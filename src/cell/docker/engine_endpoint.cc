#include "cell/docker/engine_endpoint.h"

#include <unistd.h>

#include <cstdlib>

namespace mcpcell::docker {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

Result<std::string> FromHostVar(const char* var, const std::string& value) {
  constexpr std::string_view kUnix = "unix://";
  if (value.rfind(kUnix, 0) == 0 && value.size() > kUnix.size()) return value.substr(kUnix.size());
  return MakeError(std::string("read ") + var, value,
                   "only a local engine on a unix:// socket is supported (mcpcell binds host paths "
                   "into the container); unset it or point it at unix:///path/to/engine.sock");
}

}  // namespace

std::string ToString(Engine engine) { return engine == Engine::kDocker ? "docker" : "podman"; }

Result<std::string> EngineSocket(Engine engine) {
  if (engine == Engine::kDocker) {
    std::string host = Env("DOCKER_HOST");
    if (!host.empty()) return FromHostVar("DOCKER_HOST", host);
    return std::string("/var/run/docker.sock");
  }
  std::string host = Env("CONTAINER_HOST");
  if (!host.empty()) return FromHostVar("CONTAINER_HOST", host);
  if (::geteuid() == 0) return std::string("/run/podman/podman.sock");
  std::string xdg = Env("XDG_RUNTIME_DIR");
  if (xdg.empty()) xdg = "/run/user/" + std::to_string(::geteuid());
  return xdg + "/podman/podman.sock";
}

}  // namespace mcpcell::docker
