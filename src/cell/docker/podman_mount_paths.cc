#include "cell/docker/podman_mount_paths.h"

namespace mcpcell::docker {
namespace {

// What the character would do to Podman's parse, or "" when it is harmless.
std::string_view Meaning(char c) {
  auto u = static_cast<unsigned char>(c);
  if (c == ',') return "',' separates mount options";
  if (c == ':') return "':' separates a tmpfs target from its options";
  if (c == '"' || c == '\'') return "a quote starts a quoted field";
  if (u < 0x20 || u == 0x7f) return "a control character (a newline ends the option record)";
  return {};
}

}  // namespace

Status CheckPodmanMountPath(std::string_view role, const std::string& path) {
  for (char c : path) {
    auto why = Meaning(c);
    if (why.empty()) continue;
    return MakeError("podman " + std::string(role), path,
                     "refused: Podman's compat API re-parses each mount as an option string and " + std::string(why) +
                         ", so the engine could mount another path than the one mcpcell checked; rename or "
                         "grant a parent directory without it, or use --isolate=docker or --isolate=native");
  }
  return {};
}

}  // namespace mcpcell::docker
