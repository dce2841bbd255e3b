#include "cell/isolation_level.h"

namespace mcpcell {

std::optional<IsolationLevel> ParseIsolationLevel(std::string_view text) {
  if (text == "auto") return IsolationLevel::kAuto;
  if (text == "native") return IsolationLevel::kNative;
  if (text == "container") return IsolationLevel::kContainer;
  if (text == "docker") return IsolationLevel::kDocker;
  if (text == "podman") return IsolationLevel::kPodman;
  if (text == "gvisor") return IsolationLevel::kGvisor;
  return std::nullopt;
}

std::string ToString(IsolationLevel level) {
  switch (level) {
    case IsolationLevel::kAuto: return "auto";
    case IsolationLevel::kNative: return "native";
    case IsolationLevel::kContainer: return "container";
    case IsolationLevel::kDocker: return "docker";
    case IsolationLevel::kPodman: return "podman";
    case IsolationLevel::kGvisor: return "gvisor";
  }
  return "?";
}

bool IsContainerLevel(IsolationLevel level) {
  return level != IsolationLevel::kAuto && level != IsolationLevel::kNative;
}

}  // namespace mcpcell
